"""The test lock (requirements/test.lock) and the nightly drift report (scripts/test_drift.py)."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "test.lock"

spec = importlib.util.spec_from_file_location("test_drift_script", ROOT / "scripts" / "test_drift.py")
assert spec and spec.loader
drift = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = drift  # dataclasses look their module up
spec.loader.exec_module(drift)


def _requirement_names(requirements: list[str]) -> set[str]:
    names = set()
    for req in requirements:
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", req)
        assert name, req
        names.add(drift.canonical(name.group(0)))
    return names


def test_every_dependency_is_pinned_with_hashes() -> None:
    """A dependency added to pyproject.toml without `bash scripts/lock.sh` fails here, not in CI."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = _requirement_names(project["dependencies"])
    for extra in ("test", "docs"):
        wanted |= _requirement_names(project["optional-dependencies"][extra])
    wanted |= {"hatchling", "editables"}  # requirements/build.in: the locked build backend
    wanted.discard("kb-determinism")
    text = LOCK.read_text(encoding="utf-8")
    pins = drift.read_lock(text)
    assert wanted - set(pins) == set(), "run: bash scripts/lock.sh"
    # every pin carries at least one sha256 (pip --require-hashes refuses the file otherwise)
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    for block in blocks:
        if drift.read_lock(block):
            assert "--hash=sha256:" in block, block.splitlines()[0]


def test_the_test_command_installs_the_lock() -> None:
    assert "bash scripts/test_env.sh && " in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    script = (ROOT / "scripts" / "test_env.sh").read_text(encoding="utf-8")
    assert "pip install -q --require-hashes -r requirements/uv.lock" in script
    assert "--require-hashes -r requirements/test.lock" in script
    assert "--no-deps --no-build-isolation -e ." in script
    assert "compile" not in script.replace("byte-compiled", "")  # the tests write the bytecode they need (README)


def test_the_installer_is_the_pinned_uv_with_hashes() -> None:
    """scripts/test_env.sh installs uv from requirements/uv.lock: the version requirements/uv.in pins
    (scripts/lock.sh resolves with the same one), every file with its sha256."""
    pin = (ROOT / "requirements" / "uv.in").read_text(encoding="utf-8").split("uv==")[1].split()[0]
    text = (ROOT / "requirements" / "uv.lock").read_text(encoding="utf-8")
    assert drift.read_lock(text) == {"uv": pin}
    assert text.count("--hash=sha256:") >= 1


def test_read_lock_pins_and_names() -> None:
    text = (
        "# header\nPyYAML==6.0.4 \\\n    --hash=sha256:ab\n    # via kb\n"
        "torch==2.13.0+cpu \\\n    --hash=sha256:cd\nzope.interface==7.0 ; python_version >= '3.11'\n"
    )
    assert drift.read_lock(text) == {"pyyaml": "6.0.4", "torch": "2.13.0+cpu", "zope-interface": "7.0"}


def test_moved_packages_names_new_gone_and_changed() -> None:
    moved = drift.moved_packages({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2.1", "d": "4", "pip": "26"}, {"pip"})
    assert [(m.name, m.locked, m.newest) for m in moved] == [("b", "2", "2.1"), ("c", "3", None), ("d", None, "4")]


def test_read_junit_and_report() -> None:
    junit = """<?xml version="1.0"?><testsuites><testsuite>
      <testcase classname="tests.test_a" name="test_ok"/>
      <testcase classname="tests.test_a" name="test_bad"><failure message="assert 1 == 2&#10;more">tb</failure></testcase>
      <testcase classname="tests.test_b" name="test_err"><error message="">boom</error></testcase>
      <testcase classname="tests.test_b" name="test_skip"><skipped message="why"/></testcase>
    </testsuite></testsuites>"""
    outcome = drift.read_junit(junit)
    assert outcome.tests == 4 and outcome.skipped == 1
    assert [(f.test, f.message) for f in outcome.failures] == [
        ("tests.test_a::test_bad", "assert 1 == 2"), ("tests.test_b::test_err", "boom")]
    report = drift.render([drift.Moved("pyyaml", "6.0.2", "6.0.4")], outcome, None)
    assert "**2 failing**" in report and "| pyyaml | 6.0.2 | 6.0.4 |" in report
    assert "`tests.test_a::test_bad`: assert 1 == 2" in report
    assert "could not be set up" in drift.render([], None, "install: exit 1")
