"""The nightly steps: detect, verify, refresh links, build, compare, report.

Every step runs even when an earlier one failed (a broken verifier must not hide a link that
merged); each says what it did in the report's `steps`. Only the comparison decides the exit
code: 1 when there is a regression, naming the record.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from kb.nightly import compare, env, report


@dataclass
class Options:
    root: Path
    runs_dir: Path | None = None           # default <root>/data/runs
    report_dir: Path | None = None         # default <root>/reports
    verify: bool = True
    links: bool = True
    build: bool = True
    base_url: str = "https://api.github.com"
    stale_days: int = 90
    verify_timeout: float = 6 * 3600
    probe_torch: bool = True
    verify_args: tuple[str, ...] = ()   # more `kb verify` arguments (tests: one synthetic verifier, not all)
    sweep: bool = True                     # run the operator sweep for releases not swept yet
    sweeps_dir: Path | None = None         # default <root>/data/sweeps
    sweeps_from: Path | None = None        # sweep files GPU jobs wrote (CI artifacts): merged, not run
    sweep_timeout: float = 3600
    sweep_args: tuple[str, ...] = ()
    sweep_releases: bool = False           # also sweep registry releases newer than the swept ones, each in its own venv
    release_limit: int = 2                 # at most this many new releases per framework a night
    now: Callable[[], _dt.datetime] = lambda: _dt.datetime.now(_dt.UTC)


class Progress:
    """Visible progress on stderr: one line per step, with rich when it is there."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False, soft_wrap=True)

    def step(self, n: int, total: int, name: str, text: str = "") -> None:
        self.console.print(f"[bold][{n}/{total}][/] {name}" + (f": {text}" if text else ""))

    def say(self, text: str, style: str = "") -> None:
        self.console.print(f"      [{style}]{text}[/]" if style else f"      {text}")


def _python_env() -> dict[str, str]:
    """The environment for child processes: keeps PYTHONPATH so `python -m kb` is this tree."""
    return dict(os.environ)


def in_project(path: str, root: Path) -> str:
    """A path for the committed report: relative to the project root when inside it, else its
    file name alone (reports/nightly.json held /work/main/data/runs/... of the machine that ran)."""
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return Path(path).name


def verify_available(root: Path) -> bool:
    probe = subprocess.run([sys.executable, "-m", "kb", "--root", str(root), "verify", "--help"],
                           capture_output=True, text=True, env=_python_env(), timeout=300)
    return probe.returncode == 0


def step_verify(opts: Options, runs_dir: Path, say: Callable[[str], None]) -> dict[str, Any]:
    if not verify_available(opts.root):
        return {"step": "verify", "status": "not available",
                "detail": "`kb verify` is not in this build; no run files written, comparing existing ones"}
    cmd = [sys.executable, "-m", "kb", "--root", str(opts.root), "verify", "--json", "--out", str(runs_dir),
           *opts.verify_args]
    say(" ".join(cmd[1:]))
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True, env=_python_env(),
                              timeout=opts.verify_timeout)  # stderr passes through: the verifier's progress
    except subprocess.TimeoutExpired:
        return {"step": "verify", "status": "failed", "detail": f"timed out after {opts.verify_timeout:.0f} s"}
    detail = f"exit {done.returncode}"
    try:
        import json

        payload = json.loads(done.stdout) if done.stdout.strip() else None
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        from kb.verify.runfile import JSON_FILE

        if isinstance(payload.get(JSON_FILE), str):  # the report is committed: no path of this machine in it
            payload[JSON_FILE] = in_project(payload[JSON_FILE], opts.root)
            detail += f"; wrote {payload[JSON_FILE]}"
        if isinstance(payload.get("results"), list):
            detail += f"; {len(payload['results'])} result(s)"
    return {"step": "verify", "status": "ok" if done.returncode == 0 else "failed", "detail": detail,
            "output": payload}


def step_links(opts: Options) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from kb.links import refresh, state

    try:
        curated = {link.key: link.state for link in refresh.load_links(opts.root)}
        outcome, before = refresh.run(opts.root, base_url=opts.base_url)
    except (refresh.BadInput, state.StateFileError, OSError) as exc:
        return {"step": "links", "status": "failed", "detail": str(exc)}, []
    changes = report.link_changes(before, outcome.links, curated)
    detail = (f"{len(outcome.links)} links: {outcome.refreshed} refreshed, {outcome.unchanged} unchanged (304), "
              f"{len(outcome.flagged)} flagged, {len(outcome.errors)} kept previous")
    return {"step": "links", "status": "ok" if not outcome.errors else "partial", "detail": detail}, changes


def step_build(opts: Options) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "kb", "--root", str(opts.root), "build"],
                          capture_output=True, text=True, env=_python_env(), timeout=600)
    last = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""])[-1]
    return {"step": "build", "status": "ok" if done.returncode == 0 else "failed",
            "detail": f"exit {done.returncode}: {last}"}


def nightly(opts: Options, progress: Progress | None = None) -> dict[str, Any]:
    """Run every step; return the report (also written under report_dir)."""
    started = time.monotonic()
    progress = progress or Progress()
    root = opts.root
    runs_dir = opts.runs_dir or root / compare.RUNS_DIR
    total = 6
    steps: list[dict[str, Any]] = []

    progress.step(1, total, "environment")
    environment = env.detect(probe_torch=opts.probe_torch)
    skipped = env.skipped(environment)
    gpu = environment["gpu"]
    progress.say(f"GPU: {gpu['name']} x{gpu['count']}" if gpu["count"] else "GPU: none")
    progress.say("frameworks: " + (", ".join(f"{k} {v}" for k, v in sorted(environment["frameworks"].items())) or "none"))
    for line in skipped:
        progress.say(f"skipping {line}", "yellow")

    progress.step(2, total, "verify")
    if opts.verify:
        steps.append(step_verify(opts, runs_dir, progress.say))
    else:
        steps.append({"step": "verify", "status": "skipped", "detail": "--no-verify"})
    progress.say(f"{steps[-1]['status']}: {steps[-1]['detail']}")

    progress.step(3, total, "sweep")
    from kb.nightly import sweep as sweeps
    from kb.verify.sweepfile import SWEEPS_DIR

    sweeps_dir = opts.sweeps_dir or root / SWEEPS_DIR
    written: list[str] = []
    if opts.sweeps_from is not None:
        result, written = sweeps.merge_from(root, opts.sweeps_from)
        steps.append(result)
    elif opts.sweep:
        result, written = sweeps.step_sweep(root, sweeps_dir, environment["frameworks"], gpu["count"], _python_env(), progress.say,
                                            opts.sweep_timeout, opts.sweep_args)
        steps.append(result)
    else:
        steps.append({"step": "sweep", "status": "skipped", "detail": "--no-sweep"})
    progress.say(f"{steps[-1]['status']}: {steps[-1]['detail']}")
    if opts.sweep_releases and opts.sweeps_from is None:
        # Each registry release of PyTorch and JAX newer than the swept ones, installed in a venv of its own.
        due = sweeps.releases_due(root, sweeps_dir, opts.release_limit)
        result, more = sweeps.step_release_sweeps(root, sweeps_dir, due, gpu["count"], _python_env(), progress.say,
                                                  opts.sweep_timeout, root / ".cache" / "kb" / "release-envs")
        steps.append(result)
        written += more
        progress.say(f"{steps[-1]['status']}: {steps[-1]['detail']}")

    progress.step(4, total, "links", opts.base_url if opts.links else "")
    changes: list[dict[str, Any]] = []
    if opts.links:
        result, changes = step_links(opts)
        steps.append(result)
    else:
        steps.append({"step": "links", "status": "skipped", "detail": "--no-links"})
    progress.say(f"{steps[-1]['status']}: {steps[-1]['detail']}")

    progress.step(5, total, "build")
    steps.append(step_build(opts) if opts.build else {"step": "build", "status": "skipped", "detail": "--no-build"})
    progress.say(f"{steps[-1]['status']}: {steps[-1]['detail']}")

    silent = sweeps.new_silent(root, root / SWEEPS_DIR if opts.sweeps_from is not None else sweeps_dir, written) if written else []
    for item in silent:
        progress.say(f"NEW SILENT SOURCE {item['op']} ({item['suite']} {item['version']}, {item['pass']}, {item['dtype']}): "
                     f"differs under the switch without an error; covered by {item['covered_by']}", "bold red")

    progress.step(6, total, "compare", compare.RUNS_DIR)
    by_env, problems = compare.load_runs(root, runs_dir)
    compared = compare.compare_all(by_env, root)
    now = opts.now()
    stale, never = compare.evidence_age(by_env, root, now, opts.stale_days)
    for item in compared.regressions:
        progress.say(f"REGRESSION {item['source']} ({item['env']}, mode {item['mode']}): {item['detail']}", "bold red")

    for s in steps:
        if s.get("output") is None:
            s.pop("output", None)
    body = {
        "schema_version": 1,
        "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "environment": environment,
        "steps": steps,
        "new_silent": silent,
        "range_changes": sweeps.range_changes(root) if written else [],
        "skipped": skipped,
        "regressions": compared.regressions,
        "newly_differ": compared.newly_differ,
        "newly_confirmed": compared.newly_confirmed,
        "first_outcomes": compared.first_outcomes,
        "link_changes": changes,
        "stale_days": opts.stale_days,
        "stale": stale,
        "never_verified": never,
        "compared": compared.compared,
        "problems": problems + compared.problems,
        "wall_s": round(time.monotonic() - started, 2),
    }
    json_path, md_path = report.write(body, opts.report_dir or report.default_dir(root))
    progress.say(f"wrote {json_path} and {md_path}")
    return body
