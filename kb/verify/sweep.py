"""`kb verify --sweep`: run a framework's whole operator catalog on this machine, by default and
under the determinism switch, and write one evidence file under data/sweeps/.

Why a sweep: records come from what the frameworks say about themselves; the sources they do
not mention (an op that differs under the switch without raising) are found only by running
every operator with inputs able to show them (docs/sweep.md says how inputs are built).

This module and the pool it drives (kb/sweep/pool.py, the CPU sweeps' driver too) import no
framework. The framework work happens in worker processes (`python -m verifiers.sweep.torch_worker`
/ `verifiers.sweep.jax_worker`): warm interpreters that take one unit (an operator) at a time from
their stdin and print one line per measured case. A unit that hangs past its timeout, or a worker that dies, is recorded as
`error` for that unit and the worker is restarted; the other units go on. A worker that cannot
start its backend is an `error` of every unit it was given, never a result of an op.

The workers speak the one line protocol of kb/protocol.py (the CPU sweeps' workers too): `ready`, `units` for `--list`, then `start`, one
`case` per measured case and `done` for each unit given on stdin. The classes are
kb/verify/sweepfile.py's CLASSES, the one vocabulary of every sweep.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import NamedTuple

from kb import jsonio
from kb.sweep.pool import list_units, run_pool
from kb.verify.sweepfile import CLASSES

SWEEPS_DIR = "data/sweeps"
class Suite(NamedTuple):
    framework: str
    worker: str  # the module each warm child runs (python -m)
    args: tuple[str, ...]  # the worker's extra arguments


SUITES = {
    "pytorch-eager": Suite("pytorch", "verifiers.sweep.torch_worker", ()),
    "pytorch-compiled": Suite("pytorch", "verifiers.sweep.torch_worker", ("--compiled",)),
    "jax": Suite("jax", "verifiers.sweep.jax_worker", ()),
    # one CUDA dispatch branch per case, inputs built to collide (docs/sweep.md, "Branches")
    "pytorch-branches": Suite("pytorch", "verifiers.sweep.torch_worker", ("--branches",)),
    "jax-branches": Suite("jax", "verifiers.sweep.jax_worker", ("--branches",)),
}
TORCH_MODES = {"default": "no switch (CUBLAS_WORKSPACE_CONFIG=:4096:8 set in both modes)",
               "switch": "torch.use_deterministic_algorithms(True)"}
JAX_MODES = {"default": "no XLA_FLAGS",
             "deterministic_ops": "XLA_FLAGS=--xla_gpu_deterministic_ops=true",
             "exclude_nondeterministic_ops": "XLA_FLAGS=--xla_gpu_exclude_nondeterministic_ops=true"}
JAX_FLAGS = {"default": "", "deterministic_ops": "--xla_gpu_deterministic_ops=true",
             "exclude_nondeterministic_ops": "--xla_gpu_exclude_nondeterministic_ops=true"}
# Words that mark a raise as the determinism switch refusing the op (not an unrelated failure).
SWITCH_WORDS = ("determinis",)


def is_switch_refusal(message: str | None) -> bool:
    """A raise counts as `raises` only when it names determinism; any other raise under the
    switch (out of memory, a CUDA error) says nothing about the op and is an `error`."""
    return any(w in (message or "").lower() for w in SWITCH_WORDS)


def classify(modes: dict, switch: str = "switch", error: str | None = None) -> str:
    """The class of one case from its per-mode facts.

    same: no mode saw two different results (`distinct` 1 everywhere: "0 of N differed",
    never "deterministic"); fixed: differed by default, identical under the switch; raises:
    the switch refused the op; silent: differed under the switch without raising; error:
    the case did not run in default mode, or a mode failed for a reason that is not the
    switch (never evidence about the op).
    """
    if error:
        return "error"
    default, under = modes.get("default"), modes.get(switch)
    if not default or not under:
        return "error"
    if default.get("raised") or default.get("distinct") is None:
        return "error"
    if under.get("raised"):
        return "raises" if is_switch_refusal(under["raised"]) else "error"
    if under.get("distinct") is None:
        return "error"
    if under["distinct"] > 1:
        return "silent"
    if default["distinct"] > 1:
        return "fixed"
    return "same"


def summarise(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def stamp(created: dt.datetime) -> str:
    return created.strftime("%Y-%m-%dT%H%M%SZ")


def evidence_path(out_dir: Path, env_id: str, created: dt.datetime, suite: str) -> Path:
    """data/sweeps/<env-id>/<UTC stamp>-<suite>.json (the env-id scheme of run files)."""
    return Path(out_dir) / env_id / f"{stamp(created)}-{suite}.json"


def write_evidence(out_dir: Path, doc: dict, created: dt.datetime) -> Path:
    """Write the evidence file once, atomically (a crash leaves no half file)."""
    from kb.atomic import write_atomic

    path = evidence_path(out_dir, doc["environment"]["env_id"], created, doc["suite"])
    if path.exists():
        raise FileExistsError(f"{path} exists: evidence files are written once")
    write_atomic(path, jsonio.dumps(doc, indent=1, sort_keys=False) + "\n")  # strict JSON: nan/inf as strings
    return path


REQUIRED = ("kind", "suite", "framework", "environment", "started", "wall_s", "runs_per_mode", "modes", "counts", "cases")
CASE_KEYS = ("op", "variant", "case", "pass", "dtype", "call", "numel", "modes", "class", "error")


def read_evidence(path: Path | str) -> dict:
    """Read an evidence file within the project's JSON bounds and check its shape.

    Raises ValueError naming the file and the first problem; the KB side builds records from
    exactly these fields, so a file that lacks one is refused rather than half read.
    """
    from kb import jsonio

    limits = jsonio.Limits(max_bytes=64 * 1024 * 1024, max_nodes=5_000_000)
    doc = jsonio.load(path, limits=limits, within=Path(path).resolve().parent)
    where = str(path)
    if not isinstance(doc, dict) or doc.get("kind") != "sweep":
        raise ValueError(f"{where}: not a sweep evidence file (kind must be 'sweep')")
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise ValueError(f"{where}: missing top-level field(s): {', '.join(missing)}")
    if doc["suite"] not in SUITES:
        raise ValueError(f"{where}: unknown suite {doc['suite']!r} (one of {', '.join(SUITES)})")
    for i, case in enumerate(doc["cases"]):
        lacks = [k for k in CASE_KEYS if k not in case]
        if lacks:
            raise ValueError(f"{where}: case {i} lacks {', '.join(lacks)}")
        if case["class"] not in CLASSES:
            raise ValueError(f"{where}: case {i} has unknown class {case['class']!r}")
    counted = collections.Counter(c["class"] for c in doc["cases"])
    if {k: v for k, v in doc["counts"].items() if v} != dict(counted):
        raise ValueError(f"{where}: counts {doc['counts']} do not match the cases {dict(counted)}")
    return doc


# The workers' pool (Worker, list_units, run_pool) is kb/sweep/pool.py, the CPU sweeps' driver too.


# --- the sweep ----------------------------------------------------------------------------


def _error_case(unit: str, message: str, suite: str) -> dict:
    name, _, variant = unit.partition("|")
    return {"op": name, "variant": variant, "case": f"{unit}|unit", "pass": "unit", "dtype": None, "call": {},
            "numel": None, "modes": {}, "class": "error", "error": message[:2000]}


def _environment(framework: str) -> dict:
    from importlib import metadata

    from kb.verify import env

    environment = env.detect(gpu=True)
    extra = {}
    for name in ("triton", "jaxlib", "jax-cuda13-plugin", "jax-cuda12-plugin", "numpy"):
        try:
            extra[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    environment["packages"] = extra
    environment["triton"] = extra.get("triton")
    return environment


def run_sweep(suite: str, root: Path, *, device: str = "cuda", runs: int = 4, workers: int = 4,
              unit_timeout: float = 90.0, start_timeout: float = 180.0, budget: float | None = None,
              limit: int | None = None, only: tuple[str, ...] = (), planted: bool = False, dtypes: tuple[str, ...] = (),
              passes: tuple[str, ...] = (), any_module_dtype: bool = False,
              out_dir: Path | None = None, write: bool = True, environment: dict | None = None,
              verbose: bool = True) -> tuple[dict, Path | None]:
    """Run one suite; return (document, path written or None)."""
    framework, module, extra = SUITES[suite]
    created = dt.datetime.now(dt.UTC).replace(microsecond=0)
    t0 = time.perf_counter()
    base_env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "TF_DETERMINISTIC_OPS")}
    base_env["PYTHONPATH"] = str(root) + (os.pathsep + base_env["PYTHONPATH"] if base_env.get("PYTHONPATH") else "")
    base_env["PYTHONUNBUFFERED"] = "1"
    base_env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    base_env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    base_env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    common = [*extra, "--device", device, "--runs", str(runs)] + (["--planted"] if planted else [])
    if dtypes:  # the catalog's dtypes (the workers' default: float32, bfloat16); PyTorch's branch units too
        common += ["--dtypes", ",".join(dtypes)]
    if passes and framework == "pytorch":  # op_db and modules: forward only gives dtype branches their case sooner
        common += ["--passes", ",".join(passes)]
    if any_module_dtype and framework == "pytorch":
        common += ["--any-module-dtype"]
    list_env = dict(base_env)
    if framework == "jax":
        list_env["XLA_FLAGS"] = ""
    units = list_units(module, tuple(common), list_env, root, start_timeout)
    if only:
        units = [u for u in units if any(o == u or u.startswith(o + "|") or u.split("|")[0] == o for o in only)]
    if limit is not None:
        units = units[:limit]
    cases: dict[str, dict] = {}
    unit_errors: list[dict] = []
    done = [0]
    total = len(units)

    def on_case(case: dict) -> None:
        key = case["case"]
        if key in cases:
            cases[key]["modes"].update(case.get("modes", {}))
            for k in ("error", "kernel"):
                if case.get(k) and not cases[key].get(k):
                    cases[key][k] = case[k]
            cases[key].setdefault("fixes", []).extend(case.get("fixes", []))
        else:
            cases[key] = case

    def on_unit_error(unit: str, message: str) -> None:
        unit_errors.append(_error_case(unit, message, suite))

    def progress(unit: str) -> None:
        done[0] += 1
        if verbose and (done[0] % 25 == 0 or done[0] == total):
            print(f"[{suite}] {done[0]}/{total} units, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    if framework == "jax":
        # XLA reads its flags when the backend starts: one pool of processes per mode, the three
        # pools at once (each unit's modes then run close in time, and the sweep takes a third).
        import threading

        lock = threading.Lock()
        left_by_mode: dict[str, list[str]] = {}

        def locked(fn):
            def inner(*a):
                with lock:
                    fn(*a)
            return inner

        def one_mode(mode: str) -> None:
            env = dict(base_env, XLA_FLAGS=JAX_FLAGS[mode])
            argv = [sys.executable, "-m", module, *common, "--mode", mode]
            left_by_mode[mode] = run_pool(
                argv, units, env, root, workers, unit_timeout, start_timeout, budget, locked(on_case),
                locked(lambda u, m, mode=mode: on_unit_error(u, f"[{mode}] {m}")),
                locked(progress) if mode == "default" else None)

        threads = [threading.Thread(target=one_mode, args=(mode,)) for mode in JAX_MODES]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        missed = {u: [m for m, lst in left_by_mode.items() if u in lst] for u in units}
        left = [u for u in units if len(missed[u]) == len(JAX_MODES)]
        partly = {u: ms for u, ms in missed.items() if ms and u not in left}
        modes_doc = JAX_MODES
        switch = "deterministic_ops"
    else:
        argv = [sys.executable, "-m", module, *common]
        left = run_pool(argv, units, base_env, root, workers, unit_timeout, start_timeout, budget,
                        on_case, on_unit_error, progress)
        partly = {}
        modes_doc = TORCH_MODES
        switch = "switch"
    final = []
    for case in cases.values():
        unit = case["case"].rsplit("|", 2)[0]
        # the class needs the default mode and the switch; another mode missing is only noted
        absent = [m for m in ("default", switch) if m not in case.get("modes", {})]
        others = [m for m in modes_doc if m not in case.get("modes", {}) and m not in absent]
        if others:
            case["note"] = f"no result for mode(s) {', '.join(others)}"
        if case.get("class") != "skipped" and absent and not case.get("error"):
            if unit in partly:
                case["class"] = "skipped"
                case["skipped"] = f"mode(s) {', '.join(partly[unit])} not reached within the time budget (--budget)"
            else:
                case["error"] = f"no result for mode(s) {', '.join(absent)} (that mode's worker failed on this unit: see the unit's error)"
        if case.get("class") != "skipped":
            case["class"] = classify(case.get("modes", {}), switch, case.get("error"))
        if case.get("kernel") is not None and case["kernel"].get("candidate"):
            differed = [m.get("distinct") for m in case.get("modes", {}).values() if m.get("distinct") is not None]
            case["kernel"]["confirmed"] = (max(differed) > 1) if differed and case["class"] != "error" else None
        final.append(case)
    final.extend(unit_errors)
    for unit in left:
        final.append({**_error_case(unit, "", suite), "class": "skipped", "error": None,
                      "skipped": "not reached within the time budget (--budget)"})
    final.sort(key=lambda c: (c["op"], c.get("variant") or "", c["case"]))
    counts = {k: 0 for k in CLASSES}
    counts.update(collections.Counter(c["class"] for c in final))
    environment = environment if environment is not None else _environment(framework)
    doc = {
        "kind": "sweep", "suite": suite, "framework": framework, "environment": environment,
        "started": created.strftime("%Y-%m-%dT%H:%M:%SZ"), "wall_s": round(time.perf_counter() - t0, 1),
        "runs_per_mode": runs, "device": device, "workers": workers, "unit_timeout_s": unit_timeout,
        "modes": modes_doc, "counts": counts,
        "ops": len({c["op"] for c in final if c["class"] not in ("error", "skipped")}),
        "units": total, "cases": final,
    }
    path = None
    if write:
        folder = out_dir if out_dir is not None else root / SWEEPS_DIR
        for shift in range(60):  # sweeps of one suite started in the same second, side by side: each keeps its file
            try:
                path = write_evidence(folder, doc, created + dt.timedelta(seconds=shift))
                break
            except FileExistsError:
                if shift == 59:
                    raise
    return doc, path


def main(args, root: Path) -> int:
    """The CLI entry (kb/verify/cli.py hands over here for --sweep)."""
    if args.runs < 2:
        print("kb verify --sweep: error: --runs must be at least 2 (one run cannot differ from anything)", file=sys.stderr)
        return 2
    device = {"auto": None, "gpu": "cuda", "cpu": "cpu"}[args.device]
    if device is None:
        from kb.verify import env

        device = "cuda" if env._gpus()[0] else "cpu"
    doc, path = run_sweep(
        args.sweep, root, device=device, runs=args.runs if args.runs_given else 4,
        workers=args.sweep_workers, unit_timeout=args.timeout if args.timeout_given else 90.0,
        budget=args.sweep_budget, limit=args.sweep_limit, only=tuple(args.sweep_op), planted=args.sweep_planted,
        dtypes=tuple(d for d in (getattr(args, "sweep_dtypes", "") or "").split(",") if d),
        passes=tuple(p for p in (getattr(args, "sweep_passes", "") or "").split(",") if p),
        any_module_dtype=bool(getattr(args, "sweep_any_module_dtype", False)),
        out_dir=Path(args.out) if args.out else None, write=not args.no_write)
    counts = ", ".join(f"{k} {v}" for k, v in doc["counts"].items() if v)
    print(f"{args.sweep}: {len(doc['cases'])} case(s) over {doc['ops']} op(s) in {doc['wall_s']} s: {counts}")
    for case in doc["cases"]:
        if case["class"] == "silent":
            d = {m: f"{v.get('distinct')}/{v.get('runs')}" for m, v in case["modes"].items()}
            print(f"  silent: {case['op']} {case['variant']} {case['pass']} {case['dtype']} {json.dumps(case['call'])} {d}")
    if path:
        print(f"wrote {path}")
    return 0 if doc["counts"].get("error", 0) < len(doc["cases"]) or not doc["cases"] else 1
