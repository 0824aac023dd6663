"""Empirical re-checks of the records: verifiers and their registry.

A verifier is a function registered under a dotted name with `@verifier(...)`. It receives a
`Context` (the solution codes in force, the device, a size scale) and returns a zero-argument
callable; the harness (verifiers/measure.py, run by kb/verify/) calls that callable N times
in a fresh process per mode, hashes what it returns (an array or a dict of arrays: outputs
and gradients) and compares the runs bit for bit.

Why a decorator with literal arguments: `kb validate` (lint KB014) and `kb verify`'s planner
find registered names by reading this package's source with `ast` (verifiers/discover.py),
so neither imports torch, jax or tensorflow. Adding a source means one YAML file and one
small function in the module of its framework area.
"""

from __future__ import annotations

from typing import Any, Callable

REGISTRY: dict[str, "Verifier"] = {}


class Verifier:
    """A registered verifier: its name, framework, device and the function itself."""

    __slots__ = ("name", "framework", "device", "handles", "solutions", "fn")

    def __init__(self, name: str, framework: str, device: str, handles: tuple, solutions: tuple, fn: Callable) -> None:
        self.name, self.framework, self.device = name, framework, device
        self.handles, self.solutions, self.fn = tuple(handles), tuple(solutions), fn


class Context:
    """What a verifier is told: the codes in force, the device, how big to make inputs.

    `handled` are the practice codes (DL1, CPU1 ...) the verifier applies itself; the
    harness applied every other code before the verifier was called.
    """

    def __init__(self, solutions: tuple[str, ...], device: str, scale: float, seed: int = 0) -> None:
        self.solutions = tuple(solutions)
        self.device = device
        self.scale = scale
        self.seed = seed

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
) -> Callable[[Callable[[Context], Callable[[], Any]]], Callable[[Context], Callable[[], Any]]]:
    """Register `fn` under `name`. Arguments must be literals (they are read with `ast`).

    framework: tensorflow | pytorch | jax | synthetic.  device: gpu | cpu | any.
    handles: practice codes the function applies itself (it reads ctx.solutions).
    solutions: codes to try when no record names this verifier yet (an unlinked run).
    """

    def register(fn: Callable[[Context], Callable[[], Any]]) -> Callable[[Context], Callable[[], Any]]:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"verifier {name!r} is registered twice")
        REGISTRY[name] = Verifier(name, framework, device, handles, solutions, fn)
        return fn

    return register
