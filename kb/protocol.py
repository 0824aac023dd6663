"""The one line protocol between a sweep worker and its driver: one JSON object per stdout line
after PREFIX; every other line (what a framework prints) is not the protocol and is ignored.

Why one: the GPU sweeps (kb/verify/sweep.py, workers under verifiers/sweep/) and the CPU sweeps
of TensorFlow and Keras (kb/sweep/harness.py, kb/sweep/tf_worker.py) spoke two dialects, one
with a prefix and one without, so a framework that printed a JSON line could be taken for a
result by the second. Both drivers and every worker now read and write lines here.

Messages, in order:
  {"ready": true} | {"ready": false, "error": "..."}   once, after imports (a worker whose backend
                                                        cannot start says why and exits)
  {"units": [...]}                                     the reply to a listing (`--list`, `list`)
  {"start": UNIT}                                      before each unit (a name or an index)
  {"case": {...}}                                      each result of the unit (one or more)
  {"done": UNIT}                                       after the unit

Standard library only: the workers run in processes that import a framework and nothing of kb
beyond the base layer.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

PREFIX = "@@SWEEP "


def finite(obj: Any) -> Any:
    """Non-finite floats as strings: the evidence file is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def line(obj: dict[str, Any]) -> str:
    """One protocol line (without its newline)."""
    return PREFIX + json.dumps(finite(obj), default=str, allow_nan=False)


def emit(obj: dict[str, Any]) -> None:
    """Write one protocol line, flushed at once (the driver reads as the worker goes)."""
    sys.stdout.write(line(obj) + "\n")
    sys.stdout.flush()


def result(unit: Any, case: dict[str, Any]) -> None:
    """A unit with exactly one result: its case, then done (the CPU sweeps' plan and run steps)."""
    emit({"case": case})
    emit({"done": unit})


def parse(text: str) -> dict[str, Any] | None:
    """The message of one stdout line, or None for a line that is not the protocol's (no
    PREFIX, not JSON, or not an object)."""
    if not text.startswith(PREFIX):
        return None
    try:
        msg = json.loads(text[len(PREFIX):])
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None


def units(stdout: str) -> list[Any] | None:
    """The unit list of a listing's output, or None when it gave none (see `refusal`)."""
    for text in stdout.splitlines():
        msg = parse(text)
        if msg is not None and isinstance(msg.get("units"), list):
            return msg["units"]
    return None


def refusal(stdout: str) -> str | None:
    """Why a worker could not start its backend, when it said so ({"ready": false})."""
    for text in stdout.splitlines():
        msg = parse(text)
        if msg is not None and msg.get("ready") is False:
            return str(msg.get("error"))
    return None
