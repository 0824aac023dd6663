"""Synthetic verifiers that prove the harness in CI (no GPU): one truly non-deterministic on
CPU, one deterministic, one that crashes, one that hangs, one that exhausts memory, one
that reports an environment switch (isolation) and one that raises under its solution."""

from __future__ import annotations

import os
import random
import threading
import time

import numpy as np

from verifiers import verifier


@verifier("synthetic.thread_sum", framework="synthetic", device="cpu", solutions=("SYN_FIX",))
def thread_sum(ctx):
    """Sixteen threads each sum a chunk of mixed-magnitude float32 values and add their partial
    into a shared float32 accumulator in an order that varies from run to run (the order they finish in, shuffled
    by the system's random source, since on a loaded machine threads can finish in the same order every run), and
    so does the rounding. SYN_FIX (env SYN_ONE_THREAD=1) adds in thread order."""
    rng = np.random.default_rng(0)
    chunks = [(rng.standard_normal(10_000) * 10.0 ** rng.integers(0, 8, 10_000)).astype(np.float32) for _ in range(16)]
    ordered = os.environ.get("SYN_ONE_THREAD") == "1"
    jitter = random.SystemRandom()

    def run():
        partials: list[tuple[int, np.float32]] = []
        lock = threading.Lock()

        def work(i):
            time.sleep(jitter.random() * 0.005)
            value = chunks[i].sum(dtype=np.float32)
            with lock:
                partials.append((i, value))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if ordered:
            partials.sort()
        else:  # the finishing order alone can repeat on a loaded machine (CI's 2 cores): add in a drawn order
            jitter.shuffle(partials)
        total = np.float32(0)
        for _, value in partials:
            total = np.float32(total + value)
        return np.array([total], dtype=np.float32)

    return run


@verifier("synthetic.deterministic", framework="synthetic", device="cpu")
def deterministic(ctx):
    data = np.random.default_rng(1).standard_normal(100_000).astype(np.float32)
    return lambda: np.cumsum(data)


@verifier("synthetic.crash", framework="synthetic", device="cpu")
def crash(ctx):
    def run():
        os.abort()

    return run


@verifier("synthetic.hang", framework="synthetic", device="cpu")
def hang(ctx):
    def run():
        time.sleep(3600)

    return run


@verifier("synthetic.memory", framework="synthetic", device="cpu")
def memory(ctx):
    def run():
        blocks = []
        while True:  # 1 GiB at a time, untouched: fails at once under an address-space limit
            blocks.append(np.empty(1 << 30, dtype=np.uint8))

    return run


@verifier("synthetic.env_switch", framework="synthetic", device="cpu", solutions=("SYN_ENV",))
def env_switch(ctx):
    """Returns what it sees of SYN_SWITCH: proves a mode's variable reaches only that mode."""
    seen = os.environ.get("SYN_SWITCH", "")
    return lambda: np.frombuffer(seen.encode().ljust(8, b"\0"), dtype=np.uint8)


@verifier("synthetic.raises", framework="synthetic", device="cpu", handles=("SYN_RAISE",), solutions=("SYN_RAISE",))
def raises(ctx):
    if ctx.has("SYN_RAISE"):
        raise RuntimeError("synthetic op does not have a deterministic implementation")
    return lambda: np.zeros(4, dtype=np.float32)


@verifier("synthetic.slow", framework="synthetic", device="cpu")
def slow(ctx):
    """Deterministic but 0.2 s a run: long enough that two timed loops would overlap if the
    harness let two children measure at once."""
    data = np.arange(16, dtype=np.float32)

    def run():
        time.sleep(0.2)
        return data

    return run


CASES = (
    {"op": "synthetic.op", "call": {"mode": "threads"}},
    {"op": "synthetic.op", "call": {"mode": "fixed"}},
    {"op": "synthetic.op", "call": {"mode": "raise"}},
    {"op": "synthetic.op", "call": {"mode": "fixed", "input.ndim": 2}},
)


@verifier("synthetic.cases", framework="synthetic", device="cpu", solutions=("SYN_FIX",), cases=CASES)
def cases(ctx):
    """One call per case, all measured in one child: `threads` adds in thread order only under
    SYN_FIX (as synthetic.thread_sum), `fixed` is deterministic, `raise` raises while its
    inputs are built, which must not stop the cases after it."""
    mode = ctx.call.get("mode")
    if mode == "raise":
        raise RuntimeError("synthetic case does not have a deterministic implementation")
    if mode == "threads":
        return thread_sum(ctx)
    data = np.arange(ctx.call.get("input.ndim", 1) * 8, dtype=np.float32)
    return lambda: data


@verifier("synthetic.backend", framework="synthetic", device="cpu")
def backend(ctx):
    """The backend cannot start (as JAX says on a machine whose GPU it cannot use): an
    environment failure, never evidence about the op. With SYN_FLAKY_MARKER set to a path, it
    fails only while that file does not exist (and creates it): a transient failure that the
    harness's one retry gets past."""
    marker = os.environ.get("SYN_FLAKY_MARKER")
    if marker and os.path.exists(marker):
        return lambda: np.zeros(4, dtype=np.float32)
    if marker:
        open(marker, "w").close()
    raise RuntimeError("Unable to initialize backend 'cuda': no supported devices found for platform CUDA")
