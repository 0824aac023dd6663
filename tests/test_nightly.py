"""`kb nightly`: run-file comparison, exit code on a planted regression, a CPU-only run, a kill.

Run files are written here in the CONTRACTS.md format by the test itself (they stand in for
what `kb verify` writes); no GitHub, no GPU, no real sleeps.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Response

from kb.cli import main
from kb.links import state
from kb.nightly import report
from kb.nightly.run import Options, nightly

REPO = Path(__file__).resolve().parent.parent
ENV = "h100-pt2.11-cu130"


def mode(name: str, solutions: list[str], distinct: int, outcome: str = "ok", message: str | None = None) -> dict:
    return {"mode": name, "solutions": solutions, "outcome": outcome, "distinct": distinct,
            "max_abs_diff": 0.0 if distinct == 1 else 1e-6, "max_ulp_diff": 0 if distinct == 1 else 8,
            "median_s": 0.01, "message": message}


def result(source: str, *modes: dict) -> dict:
    return {"source": source, "verifier": source.replace("-", "_"), "framework": "pytorch", "version": "2.11.0",
            "device": "gpu", "n": 5, "modes": list(modes)}


def write_run(root: Path, stamp: str, results: list[dict], env_id: str = ENV) -> Path:
    path = root / "data" / "runs" / env_id / f"{stamp}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    created = f"{stamp[:10]}T{stamp[11:13]}:{stamp[13:15]}:{stamp[15:17]}Z"
    body = {"schema_version": 1, "created": created,
            "environment": {"env_id": env_id, "gpu": {"name": "NVIDIA H100", "count": 1}, "driver": "580",
                            "cuda": "13.0", "cudnn": "9.1", "frameworks": {"pytorch": "2.11.0+cu130"},
                            "python": "3.11", "cpu": "x86_64", "platform": "Linux"},
            "results": results}
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "links.yaml").write_text(
        "- repo: pytorch/pytorch\n  kind: issue\n  number: 15359\n  title: t\n  state: open\n", encoding="utf-8")
    return tmp_path


def run_cli(root: Path, *extra: str) -> int:
    return main(["--root", str(root), "nightly", "--no-verify", "--no-links", "--no-build", "--no-torch-probe",
                 "--report-dir", str(root / "reports"), *extra])


def test_planted_regression_exits_1_and_names_the_record(root: Path, capsys) -> None:
    good = [result("torch.index-add", mode("default", [], 5), mode("PT_DET", ["PT_DET"], 1)),
            result("torch.scatter-add", mode("default", [], 3), mode("PT_DET", ["PT_DET"], 1))]
    write_run(root, "2026-11-20T010000Z", good)
    bad = [result("torch.index-add", mode("default", [], 5), mode("PT_DET", ["PT_DET"], 2)),   # planted
           result("torch.scatter-add", mode("default", [], 3), mode("PT_DET", ["PT_DET"], 1))]
    write_run(root, "2026-11-21T010000Z", bad)
    assert run_cli(root) == 1
    err = capsys.readouterr().err
    assert "regression: torch.index-add on h100-pt2.11-cu130 (mode PT_DET, solution-differs)" in err
    assert err.count("regression:") == 1          # torch.scatter-add still gives 0 of 5 differing
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert [r["source"] for r in data["regressions"]] == ["torch.index-add"]
    assert data["compared"][0]["previous"].endswith("2026-11-20T010000Z.yaml")
    md = (root / "reports" / "nightly.md").read_text()
    assert "| torch.index-add | h100-pt2.11-cu130 | PT_DET | solution-differs |" in md


def test_new_raise_is_a_regression_but_a_first_raise_is_not(root: Path, capsys) -> None:
    write_run(root, "2026-11-20T010000Z", [result("torch.a", mode("default", [], 2), mode("PT_DET", ["PT_DET"], 1))])
    write_run(root, "2026-11-21T010000Z", [
        result("torch.a", mode("default", [], 2), mode("PT_DET", ["PT_DET"], 0, "raised", "RuntimeError: no det impl")),
        result("torch.b", mode("default", [], 1), mode("PT_DET", ["PT_DET"], 0, "error", "CUDA OOM")),
    ])
    assert run_cli(root) == 1
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert [(r["source"], r["kind"]) for r in data["regressions"]] == [("torch.a", "new-raise")]
    assert [r["source"] for r in data["first_outcomes"]] == ["torch.b"]


def test_newly_differing_and_newly_confirmed_without_regression(root: Path) -> None:
    write_run(root, "2026-11-20T010000Z", [result("torch.a", mode("default", [], 1), mode("PT_DET", ["PT_DET"], 1))])
    write_run(root, "2026-11-21T010000Z", [
        result("torch.a", mode("default", [], 4), mode("PT_DET", ["PT_DET"], 1)),
        result("torch.c", mode("default", [], 3)),
    ])
    # Another environment is compared only with itself: its older run differs, but it is alone.
    write_run(root, "2026-11-19T010000Z", [result("torch.a", mode("default", [], 1))], env_id="a100-pt2.10")
    assert run_cli(root, "--stale-days", "30") == 0
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert sorted(r["source"] for r in data["newly_differ"]) == ["torch.a", "torch.c"]
    assert [r["source"] for r in data["newly_confirmed"]] == ["torch.a"]
    assert {c["env"] for c in data["compared"]} == {ENV, "a100-pt2.10"}


def test_old_evidence_and_never_verified_are_reported(root: Path) -> None:
    write_run(root, "2025-01-01T000000Z", [result("torch.old", mode("default", [], 2))])
    src = root / "data" / "sources" / "pytorch"
    src.mkdir(parents=True)
    (src / "torch.new.yaml").write_text("id: torch.new\nverify: {verifier: torch.new}\n", encoding="utf-8")
    assert run_cli(root, "--stale-days", "90") == 0
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert [r["source"] for r in data["stale"]] == ["torch.old"] and data["stale"][0]["age_days"] > 90
    assert data["never_verified"] == ["torch.new"]


def test_unreadable_run_file_is_reported_not_a_traceback(root: Path) -> None:
    bad = root / "data" / "runs" / ENV / "2026-11-21T010000Z.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text("results: [\n", encoding="utf-8")
    assert run_cli(root) == 0
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert data["problems"] and data["problems"][0].startswith(f"data/runs/{ENV}/2026-11-21T010000Z.yaml:")


def test_link_changes() -> None:
    before = {"a/b#1": {"state": "open"}, "a/b#2": {"state": "open"}}
    after = {"a/b#1": {"state": "closed"}, "a/b#2": {"state": "merged", "merged": "2026-01-02"},
             "a/b#3": {"state": "closed"}, "a/b#4": {"state": "open", "flag": "deleted"}}
    changes = report.link_changes(before, after, {"a/b#3": "open", "a/b#4": "open"})
    assert [(c["link"], c["from"], c["to"]) for c in changes] == [
        ("a/b#1", "open", "closed"), ("a/b#2", "open", "merged"), ("a/b#3", "open", "closed"), ("a/b#4", "ok", "deleted")]


def test_nightly_on_this_machine_says_what_it_skipped(root: Path) -> None:
    """Runs its verify step (one small synthetic verifier: every CPU verifier is minutes, and
    test_verify.py runs a real one) and lists what this machine skipped."""
    body = nightly(Options(root=root, links=False, build=False, probe_torch=False, report_dir=root / "r",
                           verify_args=("--verifier", "synthetic.thread_sum", "-n", "2", "--scale", "0.1")))
    verify = body["steps"][0]
    assert verify["step"] == "verify" and verify["status"] == "ok", verify
    named = verify["output"]["file"]  # within the project: no path of this machine in the report
    written = root / named
    assert not Path(named).is_absolute() and written.parent.parent == root / "data" / "runs" and written.is_file()
    assert f"wrote {named}" in verify["detail"] and "1 result(s)" in verify["detail"]  # the report names the file
    assert [r["verifier"] for r in yaml.safe_load(written.read_text())["results"]] == ["synthetic.thread_sum"]
    if not body["environment"]["gpu"]["count"]:
        assert any(s.startswith("GPU verifiers") for s in body["skipped"])
        assert "## Not verified on this machine" in (root / "r" / "nightly.md").read_text()
    else:
        pytest.skip("this machine has a GPU: the no-GPU skip list does not apply")


def test_nightly_killed_midway_leaves_no_partial_file(root: Path, httpserver: HTTPServer) -> None:
    state.save(root, {"pytorch/pytorch#15359": {"kind": "issue", "title": "t", "state": "open"}}, "before")
    original = (root / state.STATE_FILE).read_bytes()
    arrived, release = threading.Event(), threading.Event()

    def hang(request):
        arrived.set()
        release.wait(10)
        return Response(json.dumps({"title": "t", "state": "closed"}))

    httpserver.expect_request("/repos/pytorch/pytorch/issues/15359").respond_with_handler(hang)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kb", "--root", str(root), "nightly", "--no-verify", "--no-build", "--no-torch-probe",
         "--links-base-url", httpserver.url_for("/").rstrip("/")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert arrived.wait(30), "the nightly never reached the links step"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    assert (root / state.STATE_FILE).read_bytes() == original
    assert sorted(p.name for p in (root / "data").iterdir()) == ["links-state.yaml", "links.yaml"]  # no temp files
    assert not (root / "reports").exists()


def test_nightly_end_to_end_with_links_reports_a_closed_issue(root: Path, httpserver: HTTPServer) -> None:
    httpserver.expect_request("/repos/pytorch/pytorch/issues/15359").respond_with_json(
        {"title": "t", "state": "closed", "state_reason": "completed", "labels": [{"name": "module: determinism"}]},
        headers={"ETag": '"e1"'})
    code = main(["--root", str(root), "nightly", "--no-verify", "--no-build", "--no-torch-probe",
                 "--links-base-url", httpserver.url_for("/").rstrip("/")])
    assert code == 0
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert data["link_changes"] == [{"link": "pytorch/pytorch#15359", "from": "open", "to": "closed", "merged": None,
                                     "release": None, "title": "t"}]
    assert state.load(root)["pytorch/pytorch#15359"]["labels"] == ["module: determinism"]
    assert "| pytorch/pytorch#15359 | open | closed |" in (root / "reports" / "nightly.md").read_text()
    assert (root / "data" / "links.yaml").read_text().count("state: open") == 1   # curated file untouched


def test_unlinked_results_and_other_kinds_of_run_are_compared_not_rejected(root: Path, capsys) -> None:
    """A verify run may carry verifiers no record names yet (source: null), and the same machine
    writes e2e run files beside its verify runs: neither is a problem, an e2e file is not the
    'previous run' of a verify file, and a regression in an unlinked verifier is still named."""
    unlinked = {**result("x", mode("default", [], 1), mode("PT_DET", ["PT_DET"], 1)), "source": None, "verifier": "torch.sum"}
    write_run(root, "2026-11-20T000000Z", [result("torch.index-add", mode("default", [], 5), mode("PT_DET", ["PT_DET"], 1)), unlinked])
    e2e = write_run(root, "2026-11-21T000000Z", [{**result("x"), "source": None, "verifier": "e2e.pytorch", "modes": []}])
    e2e.write_text(e2e.read_text().replace("schema_version: 1\n", "schema_version: 1\nkind: e2e\n"), encoding="utf-8")
    broken = {**unlinked, "modes": [mode("default", [], 1), mode("PT_DET", ["PT_DET"], 3)]}
    write_run(root, "2026-11-22T000000Z", [result("torch.index-add", mode("default", [], 5), mode("PT_DET", ["PT_DET"], 1)), broken])
    assert run_cli(root) == 1
    body = json.loads((root / "reports" / "nightly.json").read_text())
    assert body["problems"] == []
    assert {c["env"] for c in body["compared"]} == {ENV, f"{ENV} (e2e)"}
    (verify,) = [c for c in body["compared"] if c["env"] == ENV]
    assert verify["previous"].endswith("2026-11-20T000000Z.yaml")
    (reg,) = body["regressions"]
    assert reg["source"] == "(unlinked) torch.sum" and reg["mode"] == "PT_DET"
    assert "(unlinked) torch.sum" in capsys.readouterr().err


def test_an_environments_first_run_is_counted_not_listed_every_night(root: Path) -> None:
    """With no previous run there is nothing to be 'newly' different from: the first run's
    differing, confirmed and raised modes are counted on its compared entry, so a machine that
    ran once does not fill every later report."""
    write_run(root, "2026-11-20T010000Z", [
        result("torch.a", mode("default", [], 5), mode("PT_DET", ["PT_DET"], 1)),
        result("torch.b", mode("default", [], 5), mode("PT_DET", ["PT_DET"], 0, outcome="raised", message="no det")),
    ], env_id="h200-once")
    assert run_cli(root) == 0
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert data["newly_differ"] == [] and data["newly_confirmed"] == [] and data["first_outcomes"] == []
    (entry,) = data["compared"]
    assert (entry["previous"], entry["differ"], entry["confirmed"], entry["raised"]) == (None, 2, 1, 1)


def test_a_record_marked_unverifiable_is_not_never_verified(root: Path) -> None:
    sources = root / "data" / "sources" / "x"
    sources.mkdir(parents=True)
    (sources / "a.yaml").write_text("id: x.a\nverify:\n  unverifiable: needs hardware we lack\n", encoding="utf-8")
    (sources / "b.yaml").write_text("id: x.b\nverify:\n  verifier: x.b\n", encoding="utf-8")
    assert run_cli(root) == 0
    data = json.loads((root / "reports" / "nightly.json").read_text())
    assert data["never_verified"] == ["x.b"]
