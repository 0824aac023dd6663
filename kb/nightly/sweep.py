"""The nightly sweep step: run the operator sweep for framework releases not swept yet, and find
the silent sources it is the first to see.

A release is swept once per suite: the step runs `kb verify --sweep SUITE --out data/sweeps`
(the sweep's own documented command, kb/verify/sweep.py) for each suite of each installed
framework whose installed version has no sweep file yet (a new release). When
this build's `kb verify` has no `--sweep`, the step says "not available" and runs nothing.

`new_silent` lists the cases of the files this night wrote that differ under the switch without
an error (class `silent`) and that no earlier sweep file of the same suite had found silent for
the same op, pass and call: the report shows them first, each with the records that cover it
(none: an undocumented source, KB021).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any
from collections.abc import Callable

SUITES = {"pytorch": ("pytorch-eager", "pytorch-compiled"), "jax": ("jax",)}
SWEEPS_DIR = "data/sweeps"


def sweep_available(root: Path, env: dict[str, str]) -> bool:
    """Whether this build's `kb verify` has the sweep (`--sweep` in its help)."""
    try:
        probe = subprocess.run([sys.executable, "-m", "kb", "--root", str(root), "verify", "--help"],
                               capture_output=True, text=True, env=env, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0 and "--sweep" in probe.stdout


def swept(root: Path, sweeps_dir: Path) -> set[tuple[str, str]]:
    """(suite, framework version) of every readable sweep file already there."""
    from kb.verify import sweepfile

    return {(item.data["suite"], sweepfile.version_of(item.data)) for item in _load(root, sweeps_dir)
            if item.data is not None}


def _load(root: Path, sweeps_dir: Path) -> list:
    from kb.verify import sweepfile

    if sweeps_dir.resolve() == (root / sweepfile.SWEEPS_DIR).resolve():
        return sweepfile.load_sweeps(root)
    return sweepfile.load_sweeps(root, sweeps_dir)


def due(frameworks: dict[str, str], done: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """(suite, version) to run: each suite of an installed framework not swept at the installed version."""
    return [(suite, str(version)) for framework, version in sorted(frameworks.items())
            for suite in SUITES.get(framework, ()) if (suite, str(version)) not in done]


def _json_files(folder: Path) -> set[Path]:
    """The .json files under `folder`, walked without recursion (a committed chain of 1,000
    folders made Path.rglob a RecursionError)."""
    from kb.untrusted import files_under

    return {p for p in files_under(folder) if p.suffix == ".json"} if folder.is_dir() else set()


def step_sweep(root: Path, sweeps_dir: Path, frameworks: dict[str, str], gpus: int, env: dict[str, str],
               say: Callable[[str], None], timeout: float, extra: tuple[str, ...] = (),
               available: Callable[[Path, dict[str, str]], bool] = sweep_available) -> tuple[dict[str, Any], list[str]]:
    """Run the sweeps that are due; (the step's report entry, sweep files written)."""
    if not gpus:
        return {"step": "sweep", "status": "skipped", "detail": "no GPU: the sweep measures GPU kernels"}, []
    if not any(f in SUITES for f in frameworks):
        return {"step": "sweep", "status": "skipped", "detail": "no PyTorch or JAX installed: nothing to sweep"}, []
    if not available(root, env):
        return {"step": "sweep", "status": "not available",
                "detail": "sweep not available: this build's `kb verify` has no --sweep; no sweep run"}, []
    before = _json_files(sweeps_dir)
    done = swept(root, sweeps_dir)
    default = root / SWEEPS_DIR
    if sweeps_dir.resolve() != default.resolve():  # writing elsewhere (a CI artifact): the checkout's count too
        done |= swept(root, default)
    todo = due(frameworks, done)
    if not todo:
        return {"step": "sweep", "status": "ok", "detail": "every installed release already swept here"}, []
    failed = []
    for suite, version in todo:
        cmd = [sys.executable, "-m", "kb", "--root", str(root), "verify", "--sweep", suite, "--device", "gpu",
               "--out", str(sweeps_dir), *extra]
        say(" ".join(cmd[1:]) + f"   ({version}: not swept yet)")
        try:
            ran = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            failed.append(f"{suite} timed out after {timeout:.0f} s")
            continue
        if ran.returncode != 0:
            failed.append(f"{suite} exit {ran.returncode}")
    after = _json_files(sweeps_dir)
    written = sorted(str(p) for p in after - before)
    detail = f"{len(todo)} suite(s) due ({', '.join(f'{s} {v}' for s, v in todo)}); wrote {len(written)} file(s)"
    if failed:
        detail += "; " + "; ".join(failed)
    return {"step": "sweep", "status": "failed" if failed and not written else ("partial" if failed else "ok"),
            "detail": detail}, written


def new_silent(root: Path, sweeps_dir: Path, written: list[str]) -> list[dict[str, Any]]:
    """Silent cases of the files written tonight that no earlier file of the same suite found silent
    for the same op, pass and call; each with the records covering it (none: KB021)."""
    from kb.catalog import load
    from kb.verify import sweepfile

    files = _load(root, sweeps_dir)
    fresh = {str(Path(p).resolve()) for p in written}
    params: dict[str, tuple | None] = {}

    def key(data: dict, case: dict) -> tuple:
        op = sweepfile.kb_op(case["op"])
        if op not in params:
            params[op] = sweepfile.params_for(data["framework"], op, root)
        call = sweepfile.case_call(case, data["suite"], params[op])
        return data["suite"], op, case.get("pass"), tuple(sorted(call.items(), key=lambda kv: kv[0])), call

    known = set()
    for item in files:
        if item.data is None or str(item.path.resolve()) in fresh:
            continue
        for case in item.data["cases"]:
            if case["class"] == "silent":
                known.add(key(item.data, case)[:4])
    records = None
    out = []
    for item in files:
        if item.data is None or str(item.path.resolve()) not in fresh:
            continue
        for case in item.data["cases"]:
            if case["class"] != "silent":
                continue
            k = key(item.data, case)
            if k[:4] in known:
                continue
            known.add(k[:4])
            if records is None:
                records = [r for r in load(root).sources.values() if r.withdrawn is None]
            covering = sweepfile.covering(records, item.data, {**case, "op": k[1]}, k[4], params.get(k[1]))
            out.append({
                "op": k[1], "suite": k[0], "version": sweepfile.version_of(item.data), "pass": case.get("pass"),
                "dtype": case.get("dtype"), "call": ", ".join(f"{a}={b!r}" for a, b in k[4].items()),
                "covered_by": ", ".join(r.id for r, _ in covering) or "none: undocumented (KB021)",
                "file": item.rel,
            })
    return out


def merge_from(root: Path, source: Path) -> tuple[dict[str, Any], list[str]]:
    """Copy sweep files that GPU jobs wrote (CI artifacts under `source`, any depth) into
    data/sweeps/<env-id>/, byte for byte, never over an existing file; (the step, files copied)."""
    import shutil

    from kb.verify import sweepfile

    written, problems = [], []
    for item in sweepfile.load_sweeps(root, source):
        if item.data is None:
            problems.append(f"{item.path.name}: {item.problems[0][2] if item.problems else 'unreadable'}")
            continue
        target = root / SWEEPS_DIR / item.data["environment"]["env_id"] / item.path.name
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item.path, target)
        written.append(str(target))
    detail = (f"merged {len(written)} sweep file(s) from {Path(source).name}/"  # the folder's name: no path of this machine
              + (f"; refused: {'; '.join(problems)}" if problems else ""))
    return {"step": "sweep", "status": "partial" if problems else "ok", "detail": detail}, written


# --- each new release, in an environment of its own (flagged: --sweep-releases) ----------------------

PACKAGES = {"pytorch": "torch", "jax": "jax[cuda12]"}
"""What `pip install` takes for a framework release on a CUDA machine (PyTorch's PyPI wheels carry CUDA;
JAX needs its CUDA plugin extra)."""


def releases_due(root: Path, sweeps_dir: Path, limit: int = 2) -> list[tuple[str, str]]:
    """(framework, version) of the PyTorch and JAX registry releases (data/versions/) newer than the newest
    release swept here, not swept yet by every suite of the framework: at most `limit` per framework,
    oldest first, so that each night moves the swept line forward."""
    from kb.versions import release_key

    from kb import yamlio

    done = swept(root, sweeps_dir)
    out = []
    for framework, suites in sorted(SUITES.items()):
        path = root / "data/versions" / f"{framework}.yaml"
        if not path.is_file():
            continue
        registry = yamlio.read(path, within=root / "data").data
        releases = sorted((str(r["version"]) for r in registry.get("releases") or ()), key=release_key)
        swept_here = [v for s, v in done if s in suites]
        newest = max((release_key(v) for v in swept_here), default=None)
        todo = [v for v in releases if (newest is None or release_key(v) > newest)
                and not all((s, v) in done for s in suites)]
        out += [(framework, v) for v in todo[:limit]]
    return out


def step_release_sweeps(root: Path, sweeps_dir: Path, due: list[tuple[str, str]], gpus: int, env: dict[str, str],
                        say: Callable[[str], None], timeout: float, work: Path,
                        run: Callable[..., Any] = subprocess.run) -> tuple[dict[str, Any], list[str]]:
    """Sweep each due release in a virtual environment of its own under `work`: create it, install the
    release (and this tree's requirements through PYTHONPATH), run every suite of the framework with the
    sweep's own command, and keep the files written. A release that does not install on this machine
    (no wheel for its CUDA or Python) is reported, not failed."""
    if not gpus:
        return {"step": "releases", "status": "skipped", "detail": "no GPU: the sweep measures GPU kernels"}, []
    if not due:
        return {"step": "releases", "status": "ok", "detail": "no registry release newer than the swept ones"}, []
    before = {p for p in sweeps_dir.rglob("*.json")} if sweeps_dir.is_dir() else set()
    notes = []
    for framework, version in due:
        venv = work / f"{framework}-{version}"
        python = venv / "bin" / "python"
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [str(python), "-m", "pip", "install", "--quiet", f"{PACKAGES[framework]}=={version}",
                  *(["numpy", "pyyaml", "rich", "packaging", "expecttest"] if framework == "pytorch" else
                    ["numpy", "pyyaml", "rich", "packaging"])]]
        failed = None
        for cmd in steps:
            say(" ".join(cmd[1:]))
            try:
                done = run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
            except subprocess.TimeoutExpired:
                failed = f"{' '.join(cmd[1:3])} timed out"
                break
            if done.returncode != 0:
                failed = f"{framework} {version} does not install here (exit {done.returncode})"
                break
        if failed:
            notes.append(failed)
            continue
        for suite in SUITES[framework]:
            cmd = [str(python), "-m", "kb", "--root", str(root), "verify", "--sweep", suite, "--device", "gpu",
                   "--out", str(sweeps_dir)]
            say(" ".join(cmd[1:]) + f"   ({framework} {version})")
            try:
                done = run(cmd, stdout=subprocess.PIPE, stderr=None, text=True, env=env, timeout=timeout)
            except subprocess.TimeoutExpired:
                notes.append(f"{suite} {version} timed out after {timeout:.0f} s")
                continue
            if done.returncode != 0:
                notes.append(f"{suite} {version} exit {done.returncode}")
    after = {p for p in sweeps_dir.rglob("*.json")} if sweeps_dir.is_dir() else set()
    written = sorted(str(p) for p in after - before)
    detail = f"{len(due)} release(s) due ({', '.join(f'{f} {v}' for f, v in due)}); wrote {len(written)} file(s)"
    if notes:
        detail += "; " + "; ".join(notes)
    status = "ok" if not notes else ("partial" if written else "failed")
    return {"step": "releases", "status": status, "detail": detail}, written


def range_changes(root: Path) -> list[dict[str, Any]]:
    """What the sweep files say about releases no range of a record covers (kb/verify/extend.py): each
    record a sweep extends, changes or closes, for the report."""
    from kb.catalog import load
    from kb.verify import extend

    return [{k: v for k, v in change.items() if k != "claim"} | {"switch": change["claim"]["switch"]}
            for change in extend.changes(load(root))]
