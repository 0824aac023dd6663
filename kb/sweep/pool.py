"""The one driver of every sweep's workers: a pool of warm interpreters, each taking one unit at a
time on its stdin and answering in the line protocol (kb/protocol.py); a unit that hangs past its
timeout, or a worker that dies, is that unit's error and a fresh worker takes the next unit.

`kb verify --sweep` (kb/verify/sweep.py) gives it operator units, one pool per XLA mode for JAX;
the CPU sweeps of TensorFlow and Keras (kb/sweep/harness.py) give it the index of each unit to
plan, then each case of one (mode, repetition), a pool of its own per repetition so that every
repetition runs in other processes. Imports no framework.
"""

from __future__ import annotations

import collections
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kb import protocol


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
