"""Probes on plain Python values (no tensor among the leaves)."""

from __future__ import annotations

from kb.probe.nest import map_with_path
from kb.probe.recorder import record


def monitor(value, name: str, ops: list[str]):
    op = ",".join(ops) or None
    map_with_path(lambda leaf, path: record(name, "forward", leaf, path=path, op=op), value)
    return value


def monitor_gradients(grads, name: str):
    map_with_path(lambda leaf, path: record(name, "grad", leaf, path=path), grads)
    return grads


def summarize(variables, name: str) -> None:
    map_with_path(lambda leaf, path: record(name, "param", leaf, path=path), variables)
