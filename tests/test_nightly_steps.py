"""`kb nightly`'s verify step reads what `kb verify --json` prints, and its comparison reads run
files with the one run-file reader (kb/verify/runfile.py). Fast: no child `kb verify` runs here
(tests/test_nightly.py runs a real one)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from kb.nightly import compare, run
from kb.nightly.run import Options


def test_the_verify_step_names_the_file_kb_verify_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = tmp_path / "data/runs/env/2026-11-23T000000Z.yaml"
    printed = {"file": str(written), "schema_version": 1, "results": [{"verifier": "synthetic.a"}, {"verifier": "b"}]}

    def fake_run(cmd, **kwargs):
        assert cmd[cmd.index("verify") + 1] == "--json"
        return subprocess.CompletedProcess(cmd, 0, stdout=json.dumps(printed, indent=2), stderr=None)

    monkeypatch.setattr(run, "verify_available", lambda root: True)
    monkeypatch.setattr(run.subprocess, "run", fake_run)
    step = run.step_verify(Options(root=tmp_path), tmp_path / "data/runs", lambda text: None)
    assert step["status"] == "ok"
    # the report is committed: the file is named within the project, never by a path of this machine (round-3 L15)
    assert step["detail"] == "exit 0; wrote data/runs/env/2026-11-23T000000Z.yaml; 2 result(s)"
    assert step["output"]["file"] == "data/runs/env/2026-11-23T000000Z.yaml"
    assert str(tmp_path) not in json.dumps(step)


def test_r3_l15_a_run_file_written_outside_the_project_is_named_by_its_file_name(tmp_path: Path) -> None:
    assert run.in_project(str(tmp_path / "elsewhere" / "x.yaml"), tmp_path / "project") == "x.yaml"
    assert run.in_project(str(tmp_path / "data" / "runs" / "x.yaml"), tmp_path) == "data/runs/x.yaml"


def _run_file(root: Path, env_id: str, stamp: str) -> None:
    path = root / "data/runs" / env_id / f"{stamp}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    created = f"{stamp[:10]}T{stamp[11:13]}:{stamp[13:15]}:{stamp[15:17]}Z"
    path.write_text(yaml.safe_dump({
        "schema_version": 1, "created": created, "environment": {"env_id": env_id},
        "results": [{"source": "x.a", "verifier": "x.a", "framework": "pytorch", "version": "2.11.0", "device": "gpu",
                     "n": 5, "modes": [{"mode": "default", "solutions": [], "outcome": "ok", "distinct": 2}]}],
    }, sort_keys=False), encoding="utf-8")


def test_compare_reads_run_files_and_leaves_static_evidence_alone(tmp_path: Path) -> None:
    _run_file(tmp_path, "env-a", "2026-11-20T000000Z")
    _run_file(tmp_path, "env-a", "2026-11-21T000000Z")
    static = tmp_path / "data/runs/static-pytorch/2.4.1.yaml"
    static.parent.mkdir(parents=True)
    static.write_text("schema_version: 1\nkind: static\nframework: pytorch\nrelease: 2.4.1\nwheels: []\n", encoding="utf-8")
    broken = tmp_path / "data/runs/env-b/2026-11-21T000000Z.yaml"
    broken.parent.mkdir(parents=True)
    broken.write_text("schema_version: 1\ncreated: [\n", encoding="utf-8")
    by_env, problems = compare.load_runs(tmp_path)
    assert [r.path.name for r in by_env["env-a"]] == ["2026-11-20T000000Z.yaml", "2026-11-21T000000Z.yaml"]
    assert len(problems) == 1 and problems[0].startswith("data/runs/env-b/2026-11-21T000000Z.yaml:")


def test_compare_reads_a_runs_dir_outside_the_project(tmp_path: Path) -> None:
    """`kb nightly --runs-dir`: files there are not held to data/runs/<env_id>/."""
    _run_file(tmp_path / "elsewhere", "env-a", "2026-11-20T000000Z")
    by_env, problems = compare.load_runs(tmp_path / "project", tmp_path / "elsewhere/data/runs")
    assert problems == [] and list(by_env) == ["env-a"]
