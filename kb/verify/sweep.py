"""`kb verify --sweep`: run a framework's whole operator catalog on this machine, by default and
under the determinism switch, and write one evidence file under data/sweeps/.

Why a sweep: records come from what the frameworks say about themselves; the sources they do
not mention (an op that differs under the switch without raising) are found only by running
every operator with inputs able to show them (docs/sweep.md says how inputs are built).

This module is the driver and imports no framework. The framework work happens in worker
processes (`python -m verifiers.sweep.torch_worker` / `verifiers.sweep.jax_worker`): warm
interpreters that take one unit (an operator) at a time from their stdin and print one line
per measured case. A unit that hangs past its timeout, or a worker that dies, is recorded as
`error` for that unit and the worker is restarted; the other units go on. A worker that cannot
start its backend is an `error` of every unit it was given, never a result of an op.

The workers speak the one line protocol of kb/protocol.py (the CPU sweeps' harness,
kb/sweep/harness.py, reads the same lines): `ready`, `units` for `--list`, then `start`, one
`case` per measured case and `done` for each unit given on stdin. The classes are
kb/verify/sweepfile.py's CLASSES, the one vocabulary of every sweep.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from kb import jsonio, protocol
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


# --- workers ------------------------------------------------------------------------------


class Worker:
    """One warm interpreter; stdout is read line by line, stderr goes to a file (tail kept)."""

    def __init__(self, argv: list[str], env: dict, cwd: Path, tag: str):
        self.log = tempfile.NamedTemporaryFile(prefix=f"sweep-{tag}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=env, cwd=cwd, text=True, bufsize=1, start_new_session=True)
        self.buffer = ""
        self.ready = False
        self.unit: str | None = None
        self.deadline = time.monotonic()
        self.started = time.monotonic()
        self.tag = tag

    def give(self, unit: str, timeout: float) -> bool:
        self.unit = unit
        self.deadline = time.monotonic() + timeout
        assert self.proc.stdin is not None  # a pipe (PIPE above)
        try:
            self.proc.stdin.write(unit + "\n")
            self.proc.stdin.flush()
            return True
        except OSError:
            return False

    def tail(self, n: int = 600) -> str:
        try:
            with open(self.log.name, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return ""
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        return " | ".join(lines[-3:])[-n:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]  # both pipes (PIPE above)
            except OSError:
                pass
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


def _messages(worker: Worker) -> tuple[list[dict], bool]:
    """Complete protocol lines waiting on the worker's stdout; (messages, eof)."""
    try:
        chunk = os.read(worker.proc.stdout.fileno(), 1 << 20)  # type: ignore[union-attr]  # a pipe
    except OSError:
        chunk = b""
    if not chunk:
        return [], True
    worker.buffer += chunk.decode("utf-8", errors="replace")
    *lines, worker.buffer = worker.buffer.split("\n")
    return [msg for line in lines if (msg := protocol.parse(line)) is not None], False


def list_units(module: str, extra: tuple, env: dict, cwd: Path, timeout: float) -> list[str]:
    """Ask one worker for the unit list (the catalog as this framework version has it)."""
    proc = subprocess.run([sys.executable, "-m", module, *extra, "--list"], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)
    found = protocol.units(proc.stdout)
    if found is not None:
        return found
    why = protocol.refusal(proc.stdout)
    if why is not None:
        raise RuntimeError(f"{module} could not start its backend: {why}")
    raise RuntimeError(f"{module} --list gave no unit list (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")


def run_pool(argv: list[str], units: list[str], env: dict, cwd: Path, workers: int, unit_timeout: float,
             start_timeout: float, budget: float | None, on_case, on_unit_error, progress=None) -> list[str]:
    """Feed `units` to `workers` warm interpreters; returns the units not reached within `budget`.

    on_case(case_dict) for each measured case; on_unit_error(unit, message) for a unit whose
    worker hung (killed at `unit_timeout`) or died, or whose worker could not start.
    """
    queue = collections.deque(units)
    sel = selectors.DefaultSelector()
    pool: list[Worker] = []
    started = time.monotonic()
    failed_starts = 0
    count = 0

    def spawn() -> None:
        nonlocal count
        count += 1
        w = Worker(argv, env, cwd, f"w{count}")
        w.deadline = time.monotonic() + start_timeout
        sel.register(w.proc.stdout, selectors.EVENT_READ, w)  # type: ignore[arg-type]  # a pipe
        pool.append(w)

    def retire(w: Worker) -> None:
        try:
            sel.unregister(w.proc.stdout)  # type: ignore[arg-type]  # a pipe
        except (KeyError, ValueError):
            pass
        w.kill()
        pool.remove(w)

    def feed(w: Worker) -> None:
        if budget is not None and time.monotonic() - started > budget:
            w.unit = None
            return
        if queue:
            unit = queue.popleft()
            if not w.give(unit, unit_timeout):
                on_unit_error(unit, "the worker's stdin closed")
                w.unit = None

    for _ in range(min(workers, max(1, len(units)))):
        spawn()
    while pool:
        if not queue and all(w.ready and w.unit is None for w in pool):
            break
        if budget is not None and time.monotonic() - started > budget and all(w.unit is None for w in pool if w.ready):
            break
        events = sel.select(timeout=0.5)
        for key, _ in events:
            w: Worker = key.data
            msgs, eof = _messages(w)
            for msg in msgs:
                if "ready" in msg:
                    if msg["ready"]:
                        w.ready = True
                        feed(w)
                    else:
                        w.ready = False
                        failed_starts += 1
                        w.buffer = "ready-false:" + str(msg.get("error"))
                elif "case" in msg:
                    on_case(msg["case"])
                elif "done" in msg:
                    if progress:
                        progress(msg["done"])
                    w.unit = None
                    feed(w)
            if eof:
                why = w.buffer[len("ready-false:"):] if w.buffer.startswith("ready-false:") else None
                if w.unit is not None:
                    try:
                        code = w.proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        code = None
                    on_unit_error(w.unit, f"the worker died (exit {code}): {w.tail()}")
                    if progress:
                        progress(w.unit)
                elif not w.ready:
                    failed_starts += 1 if why is None else 0
                retire(w)
                if failed_starts >= 3 and not any(x.ready for x in pool):
                    reason = why or w.tail() or "no reason given"
                    while queue:
                        on_unit_error(queue.popleft(), f"the backend could not start: {reason}")
                elif queue:
                    spawn()
        now = time.monotonic()
        for w in list(pool):
            if now > w.deadline and (w.unit is not None or not w.ready):
                if w.unit is not None:
                    on_unit_error(w.unit, f"timed out after {unit_timeout:g} s (worker killed and restarted): {w.tail()}")
                    if progress:
                        progress(w.unit)
                else:
                    failed_starts += 1
                retire(w)
                if failed_starts >= 3 and not any(x.ready for x in pool):
                    while queue:
                        on_unit_error(queue.popleft(), "the backend could not start within the start timeout")
                elif queue:
                    spawn()
    for w in list(pool):
        retire(w)
    return list(queue)


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
    if dtypes and framework == "pytorch":  # op_db's and the branch units' dtypes (the worker's default: float32, bfloat16)
        common += ["--dtypes", ",".join(dtypes)]
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
        path = write_evidence(out_dir if out_dir is not None else root / SWEEPS_DIR, doc, created)
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
