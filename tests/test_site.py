"""The generated site: determinism, coverage of every framework, escaping, offline assets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import shared
from site_build import ROOT, built_site, copy_mini, hostile_site, repo_sources

from kb.lint import run
from kb.site import build as site_build
from kb.site import nightly


def test_same_data_same_bytes() -> None:
    catalog, first = repo_sources()
    second = site_build.sources(catalog)
    assert first == second
    # Timestamps may appear only where the inputs hold them (run files' `created`, the nightly
    # report's when this checkout has one), never the clock's.
    inputs = list((ROOT / "data" / "runs").rglob("*.yaml")) + list((ROOT / "data" / "sweeps").rglob("*.json"))
    inputs += [p for p in [nightly.report_path(ROOT)] if p.is_file()]
    from_data = {m for f in inputs for m in re.findall(r"20\d\d-\d\d-\d\dT\d\d:\d\d", f.read_text())}
    for text in first.values():
        if not text.startswith("{"):
            assert set(re.findall(r"20\d\d-\d\d-\d\dT\d\d:\d\d", text)) <= from_data


def test_every_framework_has_a_matrix_and_every_source_a_page() -> None:
    catalog, files = repo_sources()
    frameworks = {s.framework for s in catalog.sources.values() if s.withdrawn is None}
    for fw in frameworks:
        assert f"frameworks/{fw}.md" in files
    for record in catalog.sources.values():
        if record.withdrawn is None:
            assert f"sources/{record.id}.md" in files
            assert f"api/v1/sources/{record.id}.json" in files
    data = json.loads(files["api/v1/all.json"])
    assert data["schema_version"] == 1 and set(data["frameworks"]) == frameworks


def test_op_json_matches_kb_status() -> None:
    import kb

    data = json.loads((built_site() / "html/api/v1/ops/tf.nn.bias_add.json").read_text())
    by_series = {s["series"]: s["status"] for s in data["series"]}
    assert by_series["2.3"] == json.loads(json.dumps(kb.status("tf.nn.bias_add", "2.3").to_dict()))


def test_no_asset_from_another_host() -> None:
    bad = []
    for path in (built_site() / "html").rglob("*.html"):
        text = path.read_text()
        bad += re.findall(r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]+', text)
        bad += re.findall(r"@import\s+url\((?:https?:)?//", text)
    for path in (built_site() / "html").rglob("*.css"):
        bad += re.findall(r"url\((?:['\"])?(?:https?:)?//[^)]+", path.read_text())
    assert not bad, bad[:5]


def test_record_text_is_data_not_markup() -> None:
    html = (hostile_site(json.dumps(planted_report(), indent=2)) / "html/sources/tf.bias-add-backprop.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; see [click me](https://evil.example/) and **bold**" in html
    assert 'href="https://evil.example/"' not in html
    assert "<b>T</b>" not in html


# --- the "Nightly report" page (kb/site/nightly.py) -----------------------------------------

EVIL_TITLE = "Fix `scatter` | <script>alert(1)</script> [x](https://evil.example/) **b**"


def planted_report() -> dict:
    """A report in kb/nightly/report.py's shape: one regression of a real record, one link change."""
    return {
        "schema_version": 1, "created": "2026-11-21T02:17:00Z",
        "environment": {"gpu": {"name": "NVIDIA H100 80GB HBM3", "count": 1, "via": "nvidia-smi"}, "driver": "580.65",
                        "frameworks": {"pytorch": "2.11.0+cu130"}, "python": "3.11.9", "cpu": "x86_64",
                        "platform": "Linux-6.8"},
        "steps": [{"step": "verify", "status": "ok", "detail": "exit 0"},
                  {"step": "links", "status": "partial", "detail": "1 links | 1 kept previous"},
                  {"step": "build", "status": "skipped", "detail": "--no-build"}],
        "skipped": ["jax verifiers: jax is not installed"],
        "regressions": [{"source": "tf.bias-add-backprop", "env": "h100-tf2.21", "mode": "TDO", "kind": "solution-differs",
                         "detail": "TDO: 2 distinct outputs of 5 runs (max_abs_diff 1e-06)", "run": "data/runs/h100/b.yaml",
                         "persisting": False}],
        "newly_differ": [], "newly_confirmed": [], "first_outcomes": [],
        "link_changes": [{"link": "pytorch/pytorch#15359", "from": "open", "to": "closed", "merged": None,
                          "release": None, "title": EVIL_TITLE}],
        "stale_days": 90, "stale": [], "never_verified": [], "compared": [], "problems": [], "wall_s": 41.27,
    }


def _with_report(tmp_path: Path, text: str | bytes) -> Path:
    """A small project (one record: the report's page does not depend on the data's size) with
    `text` where `kb nightly` writes its report."""
    root = copy_mini(tmp_path / "p")
    path = nightly.report_path(root)
    path.parent.mkdir(parents=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def test_nightly_page_shows_the_planted_report() -> None:
    built = hostile_site(json.dumps(planted_report(), indent=2))
    html = (built / "html/nightly.html").read_text()
    regressions = re.search(r'<div class="admonition danger">.*?</div>', html, re.S).group(0)
    assert "1 regression<" in regressions
    assert '<a href="sources/tf.bias-add-backprop.html"><code>tf.bias-add-backprop</code></a>' in regressions
    assert '<a href="https://github.com/pytorch/pytorch/issues/15359"><code>pytorch/pytorch#15359</code></a>' in html
    assert "<td>open</td><td>closed</td>" in html
    # The GitHub title is text: escaped once, its | ` [ ] * kept as they are.
    assert "<script>alert(1)</script>" not in html and 'href="https://evil.example/"' not in html
    assert "Fix `scatter` | &lt;script&gt;alert(1)&lt;/script&gt; [x](https://evil.example/) **b**" in html
    assert "NVIDIA H100 80GB HBM3 × 1" in html and "pytorch <code>2.11.0+cu130</code>" in html
    assert '<span class="kb-c kb-fix">partial</span>' in html and "wall time 41.3 s" in html
    # In the nav, next to Verification.
    import yaml

    reference = yaml.safe_load((built / "mkdocs.yml").read_text())["nav"][-1]["Reference"]
    pages = [page for entry in reference for page in entry.values()]
    assert pages[pages.index("verification.md") + 1] == "nightly.md"


def test_nightly_page_without_a_report_says_how_to_make_one() -> None:
    html = (built_site() / "html/nightly.html").read_text()
    assert "No nightly report yet" in html and "<code>kb nightly</code>" in html
    assert "<code>reports/nightly.json</code> does not exist" in html


def test_nightly_page_source_without_a_report_says_how_to_make_one(tmp_path: Path) -> None:
    """The page's source alone (the test above reads it in the whole built site, a slow test)."""
    warnings: list[str] = []
    page = nightly.page(tmp_path, set(), warn=warnings.append)
    assert warnings == [] and "No nightly report yet" in page and "<code>kb nightly</code>" in page
    assert "<code>reports/nightly.json</code> does not exist" in page


@pytest.mark.parametrize("text, message", [
    ('{"schema_version": 1, "created": ', "reports/nightly.json:1: invalid JSON: Expecting value"),
    ("[" * 200 + "]" * 200, "reports/nightly.json:1: nested deeper than 64 levels"),
    (b"\xff\xfe{}", "reports/nightly.json:1: not UTF-8 text"),
    ('{"schema_version": 1, "created": "x"}', "reports/nightly.json: missing environment, steps, regressions"),
    ("[]", "reports/nightly.json: the report is a list, not an object"),
    ('{"schema_version": 2}', "reports/nightly.json: schema_version is 2; this kb reads version 1"),
])
def test_unreadable_nightly_report_is_named_on_the_page(tmp_path: Path, text: str | bytes, message: str) -> None:
    # The page alone (what `kb site` puts at nightly.md); test_malformed_report_kb_site_warns_and_still_builds
    # runs the whole command with an unreadable report.
    path = nightly.report_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    warnings: list[str] = []
    ids = {r.id for r in shared.repo_lint()[0].sources.values() if r.withdrawn is None}
    page = nightly.page(tmp_path, ids, warn=warnings.append)
    assert len(warnings) == 1 and message in warnings[0], warnings
    assert "The nightly report could not be read" in page and message in page


def test_report_rows_of_the_wrong_shape_are_named(tmp_path: Path) -> None:
    report = planted_report()
    report["regressions"][0] = ["not", "a", "row"]
    loaded = nightly.load(_with_report(tmp_path, json.dumps(report)))
    assert loaded.report is None
    assert loaded.error == "reports/nightly.json: regressions[0] is a list, not an object; not what `kb nightly` writes"


def test_malformed_report_kb_site_warns_and_still_builds(tmp_path: Path, capsys) -> None:
    from kb.cli import main

    root = _with_report(tmp_path, '{"schema_version": 1,,}')
    assert main(["--root", str(root), "site"]) == 0
    err = capsys.readouterr().err
    assert "kb site: warning: nightly report not shown: reports/nightly.json:1: invalid JSON" in err
    assert "Traceback" not in err
    html = (root / "site/build/html/nightly.html").read_text()
    assert "The nightly report could not be read" in html and "reports/nightly.json:1: invalid JSON" in html


def test_report_written_by_kb_nightly_is_the_one_the_site_shows(tmp_path: Path) -> None:
    """Writer and reader agree on the place (kb/nightly/report.py) and the shape."""
    from kb.nightly.run import Options, nightly as run_nightly

    root = copy_mini(tmp_path / "p")
    body = run_nightly(Options(root=root, verify=False, links=False, build=False, probe_torch=False))
    loaded = nightly.load(root)
    assert loaded.error is None and loaded.report == json.loads(json.dumps(body, default=str))
    catalog, _ = run(root)
    page = site_build.sources(catalog)["nightly.md"]
    assert f"run <strong>{body['created']}</strong>" in page
