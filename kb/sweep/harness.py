"""The parent side of a CPU sweep: plan in one child, run each (mode, repetition) in one child,
restart a child that crashes or hangs past the per-case timeout, classify, write evidence.

A worker module (kb.sweep.tf_worker, kb.sweep.keras_worker) is run as
`python -m <module> list|plan|run ...` and driven by the GPU sweeps' pool (kb/sweep/pool.py) in
their line protocol (kb/protocol.py): `units` for a listing; `ready`, then for each index i
given on stdin `{"start": i}`, `{"case": {"i": i, ...}}` with its result and `{"done": i}`.
Anything else on stdout is ignored (frameworks print). The pool kills a worker whose unit has
not answered within `timeout` seconds, records that unit as `error`, and starts a fresh worker
at the next unit. Each (mode, repetition) is a pool of its own: the classes rest on what differs
from one process to another.

Classes are kb/verify/sweepfile.py's CLASSES, the vocabulary of every sweep (docs/sweep-tensorflow.md):
- `raises`: some mode raised in every process (the message is kept).
- `silent`: some mode gave different results in different processes, under the switch (TensorFlow,
  Keras on TensorFlow); `differs` where the sweep has no switch (Keras on JAX or PyTorch).
- `sequence`: the same in every process, but the second call in one process differed from the
  first (a seeded sequence: not non-determinism).
- `same`: every mode gave one result in every process and both calls.
- `error`: could not be run (crash, timeout, inconsistent raise); never evidence.
- `skipped`: inputs could not be built (reason kept); not run.
Files written before this vocabulary say identical, differs-across-processes and
differs-within-process-only; `sweepfile.cpu_class` reads both.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from kb import jsonio, protocol
from kb.verify.sweepfile import CLASSES


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_DETERMINISTIC", "TF_CUDNN", "PYTHONHASHSEED", "KERAS_BACKEND"))}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["CUDA_VISIBLE_DEVICES"] = ""
    env.update(extra or {})
    return env


def drive(module: str, args: list[str], n_units: int, timeout: float, env: dict[str, str] | None = None,
          log=None) -> dict[int, dict]:
    """Run units 0..n_units-1 of `module args` in one worker at a time, through the sweeps' one
    pool (kb/sweep/pool.py): a crash or a hang past `timeout` is that unit's error and a fresh
    worker takes the next one. {i: result}."""
    from kb.sweep.pool import run_pool

    results: dict[int, dict] = {}
    if n_units == 0:
        return results

    def on_case(case: dict) -> None:
        results[int(case["i"])] = case
        if log and len(results) % 200 == 0:
            log(f"  {module} {args[:3]}: {len(results)}/{n_units}")

    def on_error(unit: str, message: str) -> None:
        results.setdefault(int(unit), {"error": message})

    argv = [sys.executable, "-m", module, *args]
    run_pool(argv, [str(i) for i in range(n_units)], _env(env), Path.cwd(), 1, timeout, max(timeout, 120.0), None,
             on_case, on_error)
    return results


def classify(modes: dict[str, dict], switch: bool = True) -> tuple[str, str | None]:
    """(class, error) from {mode: {"runs": [...], "distinct": n, "raised": str|None, ...}};
    `switch`: every mode ran under the determinism switch (a difference is then `silent`)."""
    errors = [m.get("error") for m in modes.values() if m.get("error")]
    ran = {k: m for k, m in modes.items() if not m.get("error")}
    if not ran:
        return "error", errors[0] if errors else "no mode ran"
    if any(m.get("raised") for m in ran.values()):
        return "raises", None
    if any(m["distinct"] > 1 for m in ran.values()):
        return ("silent" if switch else "differs"), None
    if any(m.get("within") for m in ran.values()):
        return "sequence", None
    if errors:
        return "error", errors[0]
    return "same", None


def summarize(per_proc: list[dict | None]) -> dict:
    """One mode of one case from each process's result {h1, h2, raised} or {error}."""
    runs: list = []  # per process: "raised" or [its two hashes]
    errs, raised = [], []
    for r in per_proc:
        if r is None or "error" in r:
            errs.append((r or {}).get("error", "not run"))
            continue
        if r.get("raised") is not None:
            raised.append(r["raised"])
            runs.append("raised")
        else:
            runs.append([r["h1"], r["h2"]])
    out: dict = {"runs": len(runs), "distinct": 0, "raised": None, "within": False}
    if errs and not runs:
        out["error"] = errs[0]
        return out
    if raised and len(raised) != len(runs):
        out["error"] = "raised in some processes only: " + raised[0]
        out["distinct"] = len({json.dumps(x) for x in runs})
        return out
    if raised:
        out["raised"] = raised[0]
        return out
    out["distinct"] = len({h[0] for h in runs})
    out["within"] = any(h[0] != h[1] for h in runs)
    if errs:
        out["note"] = f"{len(errs)} process(es) failed: {errs[0]}"
    return out


def stamp(now: dt.datetime | None = None) -> tuple[str, str]:
    now = now or dt.datetime.now(dt.UTC).replace(microsecond=0)
    return now.strftime("%Y-%m-%dT%H%M%SZ"), now.strftime("%Y-%m-%dT%H:%M:%SZ")


def write(root: Path, env_id: str, file_stamp: str, suffix: str, doc: dict) -> Path:
    from kb.atomic import write_atomic

    path = root / "data" / "sweeps" / env_id / f"{file_stamp}-{suffix}.json"
    write_atomic(path, jsonio.dumps(doc, indent=1, sort_keys=False) + "\n")  # strict JSON: nan/inf as strings
    return path


def sweep(module: str, plan_args: list[str], modes: dict[str, str], processes: int, timeout: float,
          env: dict[str, str] | None = None, log=print, workdir: Path | None = None,
          switch: bool = True) -> tuple[dict, list[dict]]:
    """Plan, run every (mode, repetition), classify (`switch`: every mode ran under the
    determinism switch). Returns (timing info, cases)."""
    import tempfile

    tmp = Path(workdir or tempfile.mkdtemp(prefix="kb-sweep-"))
    t0 = time.monotonic()
    # plan: the worker lists its units first
    listing = subprocess.run([sys.executable, "-m", module, "list", *plan_args], capture_output=True, text=True,
                             env=_env(env), timeout=600)
    units = protocol.units(listing.stdout)
    if units is None:
        raise RuntimeError(f"{module} list gave no unit list (exit {listing.returncode}): {listing.stderr.strip()[-800:]}")
    log(f"{module}: {len(units)} ops to plan")
    (tmp / "units.json").write_text(json.dumps(units))
    planned = drive(module, ["plan", "--units", str(tmp / "units.json"), *plan_args], len(units), timeout, env, log)
    cases: list[dict] = []
    skipped: list[dict] = []
    for i, unit in enumerate(units):
        r = planned.get(i, {"error": "not planned"})
        if "error" in r:
            skipped.append({"op": unit["op"], "variant": unit.get("variant", ""), "case": None, "pass": "forward",
                            "dtype": None, "call": {}, "device": "cpu", "modes": {}, "class": "error",
                            "error": "planning: " + r["error"]})
        elif r.get("skipped"):
            skipped.append({"op": unit["op"], "variant": unit.get("variant", ""), "case": None, "pass": "forward",
                            "dtype": None, "call": {}, "device": "cpu", "modes": {}, "class": "skipped",
                            "error": r["skipped"]})
        else:
            cases.extend(r["cases"])
    t_plan = time.monotonic() - t0
    log(f"planned {len(cases)} cases in {t_plan:.0f} s ({len(skipped)} ops skipped or failed)")
    (tmp / "cases.json").write_text(json.dumps(cases))
    per: dict[str, list[dict[int, dict]]] = {}
    for mode in modes:
        idx = [i for i, c in enumerate(cases) if mode in c["modes_run"]]
        (tmp / f"idx-{mode}.json").write_text(json.dumps(idx))
        per[mode] = []
        for rep in range(processes):
            t1 = time.monotonic()
            got = drive(module, ["run", "--cases", str(tmp / "cases.json"), "--index", str(tmp / f"idx-{mode}.json"),
                                 "--mode", mode, *plan_args], len(idx), timeout, env, log)
            per[mode].append({idx[j]: v for j, v in got.items()})
            log(f"mode {mode} process {rep + 1}: {len(idx)} cases in {time.monotonic() - t1:.0f} s")
    out = []
    for i, c in enumerate(cases):
        mm = {}
        for mode in modes:
            if mode not in c["modes_run"]:
                continue
            mm[mode] = summarize([per[mode][rep].get(i) for rep in range(processes)])
            if c.get("mode_args", {}).get(mode):
                mm[mode] = {"args": c["mode_args"][mode], **mm[mode]}
        cls, err = classify(mm, switch)
        row = {k: c[k] for k in ("op", "variant", "case", "pass", "dtype", "call")}
        row.update({"device": "cpu", "modes": mm, "class": cls, "error": err})
        out.append(row)
    timing = {"plan_s": round(t_plan, 1), "wall_s": round(time.monotonic() - t0, 1)}
    return timing, out + skipped


def counts(cases: list[dict]) -> dict[str, int]:
    out = dict.fromkeys(CLASSES, 0)
    for c in cases:
        out[c["class"]] += 1
    return out
