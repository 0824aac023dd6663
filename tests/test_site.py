"""The generated site: determinism, coverage of every framework, escaping, offline assets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from site_build import ROOT, build, built_site, copy_project

from kb.lint import run
from kb.site import build as site_build


def test_same_data_same_bytes() -> None:
    catalog, _ = run(ROOT)
    first = site_build.sources(catalog)
    second = site_build.sources(catalog)
    assert first == second
    # Timestamps may appear only where the data holds them (run files' `created`), never the clock's.
    from_data = {m for f in (ROOT / "data" / "runs").rglob("*.yaml") for m in re.findall(r"20\d\d-\d\d-\d\dT\d\d:\d\d", f.read_text())}
    for text in first.values():
        if not text.startswith("{"):
            assert set(re.findall(r"20\d\d-\d\d-\d\dT\d\d:\d\d", text)) <= from_data


def test_every_framework_has_a_matrix_and_every_source_a_page() -> None:
    catalog, _ = run(ROOT)
    files = site_build.sources(catalog)
    frameworks = {s.framework for s in catalog.sources.values() if s.withdrawn is None}
    for fw in frameworks:
        assert f"frameworks/{fw}.md" in files
    for record in catalog.sources.values():
        if record.withdrawn is None:
            assert f"sources/{record.id}.md" in files
            assert f"api/v1/sources/{record.id}.json" in files
    data = json.loads(files["api/v1/all.json"])
    assert data["schema_version"] == 1 and set(data["frameworks"]) == frameworks


def test_matrix_cell_bias_add_115_is_tdp() -> None:
    html = (built_site() / "html/frameworks/tensorflow.html").read_text()
    row = re.search(r'<tr><th scope="row"><a href="../sources/tf.bias-add-backprop.html">.*?</tr>', html).group(0)
    header = re.search(r"<thead><tr>(.*?)</tr></thead>", html).group(1)
    labels = re.findall(r'<th scope="col">([^<]*)</th>', header)
    cells = re.findall(r'<td class="kb-cell">(.*?)</td>', row)
    assert ">TDP<" in cells[labels.index("1.15") - 1]


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


def test_record_text_is_data_not_markup(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    record = root / "data/sources/tensorflow/tf.bias-add-backprop.yaml"
    import yaml

    from kb.cli import main

    data = yaml.safe_load(record.read_text())
    evil = "<script>alert(1)</script> see [click me](https://evil.example/) and **bold**"
    data["summary"] = evil
    data["title"] = "<b>T</b> [x](y) " + data["title"]
    record.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["--root", str(root), "fix"]) == 0  # canonical form, so the build accepts it
    html = (build(root) / "html/sources/tf.bias-add-backprop.html").read_text()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; see [click me](https://evil.example/) and **bold**" in html
    assert 'href="https://evil.example/"' not in html
    assert "<b>T</b>" not in html
