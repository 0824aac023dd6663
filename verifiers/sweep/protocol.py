"""The line protocol between a sweep worker and the driver (kb/verify/sweep.py): one JSON object
per stdout line after PREFIX; anything else a framework prints is ignored by the driver."""

from __future__ import annotations

import json
import math
import sys

PREFIX = "@@SWEEP "  # the same as kb/verify/sweep.py's


def finite(obj):
    """Non-finite floats as strings: the evidence file is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def emit(obj) -> None:
    """One protocol line, flushed at once (the driver reads as the worker goes)."""
    sys.stdout.write(PREFIX + json.dumps(finite(obj), default=str, allow_nan=False) + "\n")
    sys.stdout.flush()
