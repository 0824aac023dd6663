#!/usr/bin/env python3
"""Run the test suite against the newest packages and report what broke (the nightly drift job).

The README's test command installs the locked versions (requirements/test.lock), so a new
release of a dependency cannot break a submission's CI. This script is the other half: it
installs the project with its open ranges into a fresh virtual environment (the newest
releases the package indexes serve, as a user's `pip install` would), lists every package
whose version differs from the lock, runs the suite, and writes a report naming the failing
tests next to the packages that moved. A drift seen here is fixed by adapting the code (or
the ranges) and then refreshing the lock with `bash scripts/lock.sh`.

    python3 scripts/test_drift.py [--out reports] [--timeout 3600] [-- PYTEST ARGS]

Exit codes: 0 the suite passes on the newest packages, 1 some tests fail there,
2 the environment could not be set up (the report says which step failed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "test.lock"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")


def canonical(name: str) -> str:
    """PEP 503 name: pip list and the lock spell some names differently (PyYAML, pyyaml)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[str, str]:
    """Package -> pinned version, from a `uv pip compile` / `pip-compile` output."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            pins[canonical(match.group(1))] = match.group(2)
    return pins


@dataclass(frozen=True)
class Moved:
    name: str
    locked: str | None  # None: not in the lock (a new dependency)
    newest: str | None  # None: no longer installed


def moved_packages(locked: dict[str, str], installed: dict[str, str], skip: set[str]) -> list[Moved]:
    """Every package whose installed version is not the locked one, by name."""
    names = sorted((set(locked) | set(installed)) - skip)
    return [Moved(n, locked.get(n), installed.get(n)) for n in names if locked.get(n) != installed.get(n)]


@dataclass
class Failure:
    test: str
    message: str


@dataclass
class Outcome:
    tests: int = 0
    failures: list[Failure] = field(default_factory=list)
    skipped: int = 0


def read_junit(text: str) -> Outcome:
    """Failed and errored tests from pytest's --junitxml output, first line of each message."""
    root = ET.fromstring(text)
    outcome = Outcome()
    for case in root.iter("testcase"):
        outcome.tests += 1
        name = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
        for tag in ("failure", "error"):
            bad = case.find(tag)
            if bad is not None:
                message = (bad.get("message") or bad.text or "").strip().splitlines()
                outcome.failures.append(Failure(name, message[0][:300] if message else tag))
                break
        else:
            if case.find("skipped") is not None:
                outcome.skipped += 1
    return outcome


def render(moved: list[Moved], outcome: Outcome | None, setup_error: str | None) -> str:
    lines = ["# Test drift: the suite on the newest packages", ""]
    if setup_error:
        lines += [f"**The environment could not be set up**: {setup_error}", ""]
    elif outcome is not None:
        verdict = "passes" if not outcome.failures else f"**{len(outcome.failures)} failing**"
        lines += [f"{outcome.tests} tests, {verdict}, {outcome.skipped} skipped.", ""]
    lines += ["## Packages that differ from requirements/test.lock", ""]
    if moved:
        lines += ["| package | locked | newest installed |", "| --- | --- | --- |"]
        lines += [f"| {m.name} | {m.locked or '(not locked)'} | {m.newest or '(not installed)'} |" for m in moved]
    else:
        lines.append("None: the lock is the newest set.")
    if outcome is not None and outcome.failures:
        lines += ["", "## Failing tests", ""]
        lines += [f"- `{f.test}`: {f.message}" for f in outcome.failures]
        lines += ["", "Adapt the code to the new releases, then refresh the lock: `bash scripts/lock.sh`."]
    return "\n".join(lines) + "\n"


def _run(cmd: list[str], timeout: float, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)  # type: ignore[call-overload]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "reports", help="folder for drift.md and drift.json")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds for the install and for the suite, each")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    locked = read_lock(LOCK.read_text(encoding="utf-8"))
    moved: list[Moved] = []
    outcome: Outcome | None = None
    setup_error: str | None = None
    with tempfile.TemporaryDirectory(prefix="kb-drift-") as tmp:
        venv = Path(tmp) / "venv"
        py = venv / "bin" / "python"
        steps = [
            ("create a virtual environment", [sys.executable, "-m", "venv", str(venv)]),
            ("install the project with its open ranges",
             [str(py), "-m", "pip", "install", "-q", "--upgrade", "-e", f"{ROOT}[test]"]),
        ]
        for what, cmd in steps:
            print(f"drift: {what} ...", file=sys.stderr, flush=True)
            try:
                done = _run(cmd, args.timeout)
            except subprocess.TimeoutExpired:
                setup_error = f"{what}: timed out after {args.timeout:.0f} s"
                break
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                setup_error = f"{what}: exit {done.returncode}: " + " / ".join(tail)
                break
        if setup_error is None:
            listed = _run([str(py), "-m", "pip", "list", "--format", "json"], 300)
            installed = {canonical(p["name"]): p["version"] for p in json.loads(listed.stdout or "[]")}
            # the build backend and its needs are locked for the editable install only; pip's
            # isolated build does not leave them in the environment
            build_only = {"hatchling", "editables", "tomlkit", "trove-classifiers", "pathspec", "pluggy"} - set(installed)
            moved = moved_packages(locked, installed, skip={"pip", "kb-determinism"} | build_only)
            junit = Path(tmp) / "junit.xml"
            print(f"drift: {len(moved)} package(s) differ from the lock; running the suite ...", file=sys.stderr, flush=True)
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            suite = None
            try:
                suite = _run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                              *args.pytest_args], args.timeout, cwd=ROOT, env=env)
            except subprocess.TimeoutExpired:
                setup_error = f"the suite did not finish in {args.timeout:.0f} s"
            if setup_error is None:
                if junit.is_file():
                    outcome = read_junit(junit.read_text(encoding="utf-8"))
                else:
                    said = ((suite.stdout or "") + (suite.stderr or "")).strip().splitlines()[-5:] if suite else []
                    setup_error = (f"pytest wrote no result file (exit {suite.returncode if suite else '?'}): "
                                   + " / ".join(said))
    report = render(moved, outcome, setup_error)
    (args.out / "drift.md").write_text(report, encoding="utf-8")
    data = {
        "moved": [m.__dict__ for m in moved],
        "tests": outcome.tests if outcome else None,
        "failures": [f.__dict__ for f in outcome.failures] if outcome else None,
        "setup_error": setup_error,
    }
    (args.out / "drift.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(report)
    if setup_error:
        return 2
    return 1 if outcome and outcome.failures else 0


if __name__ == "__main__":
    sys.exit(main())
