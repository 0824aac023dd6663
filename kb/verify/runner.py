"""Run planned modes, each in a fresh child process with its own environment and timeouts.

Isolation is the point: environment switches are read at import time by the frameworks,
and a crash, hang, CUDA error or out-of-memory must not take the run down. Every switch
variable any table knows is removed from the inherited environment first, so a user's
shell (or a previous mode) can never leak a switch into the default mode.

Speed without losing either isolation or honest timings: a child spends seconds importing
its framework and building inputs, and milliseconds measuring. So up to `jobs` children
prepare at once, but only one measures at a time. A child reports "ready" on a pipe once
its inputs exist, then waits for "go"; the parent lets one child measure, and the next
only after that one reports "done" (or exits): hashing, writing its result and tearing
down a CUDA context take about a second, which would otherwise be serial too. The measured
loop therefore never shares the device with another verifier's measured loop (the others may still be importing), and each phase has
its own timeout: a child that hangs while measuring is killed at its own deadline and
never holds up the queue for longer than that.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Iterator

from kb.case import WHOLE, Case
from verifiers.outcomes import ENV_ERROR, FAILED
from verifiers.solutions import TABLES, UnknownCode, resolve

SWITCHES = {key for table in TABLES.values() for env, _, _ in table.values() for key in env} | {
    "TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC", "TF_CUDNN_USE_FRONTEND", "XLA_FLAGS",
    "CUBLAS_WORKSPACE_CONFIG", "TF_USE_CUDNN_AUTOTUNE",
}

# Settings a machine's owner imposes for safety are never stripped, though a table knows them:
# NVLink multicast (NVLS) can put a shared host's GPUs out of service, so machines that forbid
# it set these, and a verifier must not turn them back to NCCL's default.
KEPT = frozenset({"NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"})

# Children that share a GPU must not each grab most of its memory (JAX preallocates 75% by
# default, so a second JAX child would fail with out-of-memory). Set for every child, so the
# setting is the same whether a run used one job or eight.
CHILD_DEFAULTS = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "TF_FORCE_GPU_ALLOW_GROWTH": "true",
                  "TF_CPP_MIN_LOG_LEVEL": "2"}


@dataclass(frozen=True)
class Task:
    """One mode of one verifier: what a child process measures."""

    verifier: str
    module: str
    framework: str
    handles: tuple[str, ...]
    codes: tuple[str, ...]
    n: int
    device: str
    scale: float = 1.0
    key: Any = None             # the caller's handle for the result (e.g. (item, mode) indexes)
    cases: tuple[Case, ...] = ()  # measured one after another in this child (kb/case.py)


class ChildState(Enum):
    """Where a child is in its life: preparing -> waiting (for its turn) -> measuring -> finishing
    -> (exited). Each phase but waiting has its own deadline."""

    PREPARING = "while preparing (imports, inputs)"
    WAITING = "while waiting for its turn"
    MEASURING = "while measuring"
    FINISHING = "after measuring (writing its result, exiting)"


@dataclass
class _Child:
    task: Task
    tmp: str
    proc: subprocess.Popen
    ready_r: int
    go_w: int
    state: ChildState = ChildState.PREPARING
    deadline: float = 0.0       # of the current phase; none while waiting for its turn


def _limit(memory_mb: int | None):
    if not memory_mb:
        return None

    def apply() -> None:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def child_env(extra: dict[str, str], root: Path) -> dict[str, str]:
    """The inherited environment minus every known switch, plus this mode's switches."""
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES or k in KEPT}
    for key, value in CHILD_DEFAULTS.items():
        env.setdefault(key, value)
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _start(task: Task, root: Path, memory_mb: int | None, timeout: float) -> _Child | dict:
    try:
        extra, _ = resolve(task.framework, task.codes, task.handles)
    except UnknownCode as exc:
        return {"outcome": "error", "message": str(exc)}
    tmp = tempfile.mkdtemp(prefix="kb-verify-")
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    spec = {
        "verifier": task.verifier, "module": task.module, "solutions": list(task.codes), "n": task.n,
        "device": task.device, "scale": task.scale, "result": os.path.join(tmp, "result.json"),
        "cases": [c.to_dict() for c in task.cases] or [WHOLE.to_dict()],
        "ready_fd": ready_w, "go_fd": go_r,
    }
    spec_path = os.path.join(tmp, "spec.json")
    with open(spec_path, "w", encoding="utf-8") as handle:
        json.dump(spec, handle)
    # stderr goes to a file, not a pipe: with several children a full pipe nobody reads would block one.
    with open(os.path.join(tmp, "stderr"), "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "verifiers.child", spec_path], env=child_env(extra, root), cwd=str(root),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
            preexec_fn=_limit(memory_mb), pass_fds=(ready_w, go_r),
        )
    os.close(ready_w)
    os.close(go_r)
    return _Child(task, tmp, proc, ready_r, go_w, deadline=time.monotonic() + timeout)


def crash_message(code: int | None, stderr: bytes) -> str:
    """Why a child left no result: its signal or exit status and the last lines it printed."""
    tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    why = f"crashed: killed by signal {signal.Signals(-code).name}" if code is not None and code < 0 else \
        f"crashed: exit status {code}"
    return (why + (": " + " | ".join(tail) if tail else ""))[:600]


def _kill(child: _Child) -> None:
    try:
        os.killpg(child.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    child.proc.wait()


def _finish(child: _Child, timed_out: float | None) -> dict:
    """The child's measurement, or an `error` saying why there is none."""
    try:
        if timed_out is not None:
            # a child is killed only in a phase with a deadline; waiting has none
            phase = (child.state if child.state is not ChildState.WAITING else ChildState.PREPARING).value
            return {"outcome": "error", "message": f"timed out after {timed_out:g} s {phase} (hang or too slow); killed"}
        try:
            with open(os.path.join(child.tmp, "result.json"), encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            pass
        try:
            with open(os.path.join(child.tmp, "stderr"), "rb") as handle:
                err = handle.read()[-4000:]
        except OSError:
            err = b""
        code = child.proc.returncode
        # killed by a signal (the kernel's OOM killer, an abort, the machine): the environment
        # ended the run, which says nothing about the op
        return {"outcome": ENV_ERROR if code is not None and code < 0 else "error", "message": crash_message(code, err)}
    finally:
        for fd in (child.ready_r, child.go_w):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(child.tmp, ignore_errors=True)


def _env_failed(result: dict) -> bool:
    cases = result.get("cases")
    return result.get("outcome") == ENV_ERROR or (
        isinstance(cases, list) and any(isinstance(c, dict) and c.get("outcome") == ENV_ERROR for c in cases))


def run_modes(
    tasks: Iterable[Task], *, root: Path, jobs: int = 1, timeout: float = 120.0, memory_mb: int | None = None,
    retry: bool = True,
) -> Iterator[tuple[Task, dict]]:
    """Measure every task in its own child; yield (task, measurement) as each finishes.

    `timeout` bounds each phase of a child separately: preparing (start to "ready") and
    measuring ("go" to exit). Time spent waiting for its turn counts against neither.
    A mode whose child failed for the environment (`env-error`: a backend that could not
    start, memory that ran out, a signal) is run once more, alone, after all the others
    (another child's memory or start-up may have been the cause); its second result is the
    one reported, marked `retried`.
    """
    again: list[Task] = []
    for task, result in _run_modes(tasks, root=root, jobs=jobs, timeout=timeout, memory_mb=memory_mb):
        if retry and _env_failed(result):
            again.append(task)
        else:
            yield task, result
    for task in again:
        for _, result in _run_modes([task], root=root, jobs=1, timeout=timeout, memory_mb=memory_mb):
            result["retried"] = True
            if _env_failed(result):
                note = " (retried once alone: the same environment failure)"
                result["message"] = (result.get("message") or "") + note
                for case in result.get("cases") or ():
                    if isinstance(case, dict) and case.get("outcome") == ENV_ERROR:
                        case["message"] = (case.get("message") or "") + note
            yield task, result


def _run_modes(
    tasks: Iterable[Task], *, root: Path, jobs: int, timeout: float, memory_mb: int | None,
) -> Iterator[tuple[Task, dict]]:
    pending = collections.deque(tasks)
    live: dict[int, _Child] = {}          # ready_r fd -> child
    waiting: collections.deque[_Child] = collections.deque()
    measuring: _Child | None = None
    selector = selectors.DefaultSelector()
    jobs = max(1, jobs)
    try:
        while pending or live:
            while pending and len(live) < jobs:
                task = pending.popleft()
                child = _start(task, root, memory_mb, timeout)
                if isinstance(child, dict):
                    yield task, child
                    continue
                live[child.ready_r] = child
                selector.register(child.ready_r, selectors.EVENT_READ)
            if measuring is None and waiting:
                measuring = waiting.popleft()
                measuring.state, measuring.deadline = ChildState.MEASURING, time.monotonic() + timeout
                try:
                    os.write(measuring.go_w, b"G")
                except OSError:
                    pass  # it died while waiting: its EOF arrives below
            if not live:
                continue
            now = time.monotonic()
            deadlines = [c.deadline for c in live.values() if c.state is not ChildState.WAITING]
            wait = max(0.0, min(deadlines) - now) if deadlines else 0.5
            finished: list[tuple[_Child, float | None]] = []
            for key, _ in selector.select(timeout=min(wait, 0.5)):
                child = live[key.fd]
                try:
                    data = os.read(key.fd, 1)
                except OSError:
                    data = b""
                if data == b"R" and child.state is ChildState.PREPARING:
                    child.state = ChildState.WAITING
                    waiting.append(child)
                elif data == b"D" and child.state is ChildState.MEASURING:
                    # Its timed loop is over: the next child may measure while this one exits.
                    child.state, child.deadline = ChildState.FINISHING, time.monotonic() + timeout
                    if measuring is child:
                        measuring = None
                elif not data:
                    child.proc.wait()
                    finished.append((child, None))
            now = time.monotonic()
            for child in list(live.values()):
                if child.state is not ChildState.WAITING and now > child.deadline and all(c is not child for c, _ in finished):
                    _kill(child)
                    finished.append((child, timeout))
            for child, timed_out in finished:
                selector.unregister(child.ready_r)
                del live[child.ready_r]
                if child in waiting:
                    waiting.remove(child)
                if measuring is child:
                    measuring = None
                yield child.task, _finish(child, timed_out)
    finally:
        for child in live.values():
            _kill(child)
            _finish(child, None)
        selector.close()


def per_case(result: dict, count: int) -> list[dict]:
    """A child's measurement split into one per case: a child that crashed, hung or could not
    start leaves one `error` for the mode, which then stands for each of its cases."""
    cases = result.get("cases")
    if isinstance(cases, list) and len(cases) == count:
        return cases
    if result.get("outcome") in FAILED or not isinstance(cases, list):
        return [dict(result) for _ in range(count)]
    # A child that died between cases: what it measured, then the crash for the rest.
    rest = {"outcome": "error", "message": result.get("message") or "the child ended before this case"}
    return list(cases) + [dict(rest) for _ in range(count - len(cases))]


def run_mode(
    verifier: str, module: str, framework: str, handles: tuple, codes: tuple[str, ...], *,
    n: int, device: str, scale: float, timeout: float, memory_mb: int | None = None, root: Path,
    cases: tuple[Case, ...] = (),
) -> dict:
    """One mode's measurement: a dict with outcome, distinct, diffs, median_s, message (for a
    verifier with several cases, the first case's, and every case's under `cases`)."""
    task = Task(verifier, module, framework, tuple(handles), tuple(codes), n, device, scale, cases=tuple(cases))
    for _, result in run_modes([task], root=root, jobs=1, timeout=timeout, memory_mb=memory_mb):
        split = per_case(result, max(1, len(cases)))
        return {**split[0], "cases": split, **({"retried": True} if result.get("retried") else {})}
    raise AssertionError("run_modes yielded nothing for one task")


def default_jobs(device: str) -> int:
    """GPU runs: one preparing child per core, up to 16 (imports and CUDA start-up dominate and
    are CPU work; measuring stays serial, on the GPU). CPU runs: 1, because there the
    preparing children would share the cores being timed."""
    if device != "gpu":
        return 1
    return max(1, min(16, os.cpu_count() or 2))


MODE_FIELDS = ("outcome", "distinct", "max_abs_diff", "max_ulp_diff", "median_s", "message", "hashes")


def mode_entry(mode: str, codes: tuple[str, ...], measured: dict) -> dict:
    """A mode in the run file's field order; numbers absent when nothing was measured."""
    entry: dict[str, object] = {"mode": mode, "solutions": list(codes)}
    for key in MODE_FIELDS:
        entry[key] = measured.get(key)
    return entry
