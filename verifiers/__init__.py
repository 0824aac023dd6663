"""Empirical re-checks of the records: verifiers and their registry.

A verifier is a function registered under a dotted name with `@verifier(...)`. It receives a
`Context` (the solution codes in force, the device, a size scale) and returns a zero-argument
callable; the harness (verifiers/measure.py, run by kb/verify/) calls that callable N times
in a fresh process per mode, hashes what it returns (an array or a dict of arrays: outputs
and gradients) and compares the runs bit for bit.

A verifier checks calls, not names: `cases=` lists each op called one way
(`{"op": "torch.nn.functional.nll_loss", "call": {"reduction": "mean", "input.ndim": 4}}`),
including the calls its record says are not affected. The function is called once per case
with `ctx.case` set, and builds that call; one child process measures every case of one mode.
A verifier without `cases` has one case, `{"op": None, "call": None}` (the record's claim).

Why a decorator with literal arguments: `kb validate` (lint KB014) and `kb verify`'s planner
find registered names by reading this package's source with `ast` (verifiers/discover.py),
so neither imports torch, jax or tensorflow. Adding a source means one YAML file and one
small function in the module of its framework area.

To add a verifier:
1. In verifiers/<framework>/<area>.py, write a function decorated with literal arguments,
   `@verifier("<framework>.<name>", framework="<framework>", solutions=(<codes>,))`, that
   takes `ctx` and returns a zero-argument callable computing what differs run to run.
2. Name it in the record: `verify: {verifier: <framework>.<name>}`; `python -m kb validate
   --strict` (KB014) checks that the name is registered.
3. Run `python -m kb build`, then `python -m kb verify --verifier <framework>.<name> --dry-run`
   (the plan: the record's id beside the verifier, or `(unlinked)` on a machine without the
   record's device), then without `--dry-run` where the framework and device are; commit the
   run file it writes, as written.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, Mapping

from kb.case import WHOLE, Case, as_cases

REGISTRY: dict[str, Verifier] = {}


class Verifier:
    """A registered verifier: its name, framework, device and the function itself."""

    __slots__ = ("name", "framework", "device", "handles", "solutions", "cases", "fn", "gpus")

    def __init__(self, name: str, framework: str, device: str, handles: tuple, solutions: tuple, fn: Callable,
                 cases: tuple[Case, ...] = (), gpus: int = 1) -> None:
        self.name, self.framework, self.device = name, framework, device
        self.handles, self.solutions, self.fn = tuple(handles), tuple(solutions), fn
        self.cases = tuple(cases)  # kb/case.py Case, one call each
        self.gpus = gpus


class Context:
    """What a verifier is told: the codes in force, the device, how big to make inputs.

    `handled` are the practice codes (DL1, CPU1 ...) the verifier applies itself; the
    harness applied every other code before the verifier was called.
    """

    def __init__(self, solutions: tuple[str, ...], device: str, scale: float, seed: int = 0,
                 case: Case | Mapping[str, Any] | None = None) -> None:
        self.solutions = tuple(solutions)
        self.device = device
        self.scale = scale
        self.seed = seed
        self.case = WHOLE if case is None else Case.from_dict(case, "the child's spec")

    @property
    def op(self) -> str | None:
        """The op this case calls (None: a verifier without cases)."""
        return self.case.op

    @property
    def call(self) -> dict:
        """The case's call: parameter values and facts (`input.ndim`, `backend`)."""
        return dict(self.case.call)

    def size(self, n: int, minimum: int = 1) -> int:
        """`n` scaled for this run (CI runs GPU verifiers on CPU with a small scale)."""
        return max(minimum, int(n * self.scale))

    def has(self, code: str) -> bool:
        return code in self.solutions


def verifier(
    name: str,
    *,
    framework: str,
    device: str = "gpu",
    handles: tuple[str, ...] = (),
    solutions: tuple[str, ...] = (),
    cases: tuple[dict[str, Any] | Case, ...] = (),
    gpus: int = 1,
) -> Callable[[Callable[[Context], Callable[[], Any]]], Callable[[Context], Callable[[], Any]]]:
    """Register `fn` under `name`. Arguments must be literals (they are read with `ast`).

    framework: tensorflow | pytorch | jax | torchvision | synthetic.  device: gpu | cpu | any.
    handles: practice codes the function applies itself (it reads ctx.solutions).
    solutions: codes to try when no record names this verifier yet (an unlinked run).
    cases: each `{"op": name, "call": {param: value, "input.ndim": n, ...}}`, one call per case
    (literals, read with `ast`; each becomes a kb/case.py Case here and in verifiers/discover.py).
    gpus: GPUs the verifier needs; above 1 it runs one process per GPU (verifiers/collectives), not in
    the harness's one child per mode: `kb verify` starts it where the machine has that many GPUs and
    says "skipped: needs N GPUs" elsewhere (kb/verify/multigpu.py).
    """
    made = as_cases(cases, f"verifier {name!r}") if cases else ()

    def register(fn: Callable[[Context], Callable[[], Any]]) -> Callable[[Context], Callable[[], Any]]:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"verifier {name!r} is registered twice")
        REGISTRY[name] = Verifier(name, framework, device, handles, solutions, fn, made, gpus)
        return fn

    return register
