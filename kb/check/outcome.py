"""What the runs did: each run's own account (check.json, written inside the process), each
pair of runs compared bit for bit (the probe's diff of their logs), the time the recipe
costs, and whether the prediction was right.

A pair of runs is `identical` (every loss and every parameter after every step has the same
bytes), `differs` (the first record that differs, and the probe's message for it), `raises`
(a run ended with an exception: its type, message and the program's line), or `failed` (a
run ended otherwise without its steps: a crash, a timeout, a signal, no step seen).

Standard library plus the knowledge base.
"""

from __future__ import annotations

import math
import os
import re
import statistics

from kb import jsonio
from kb.check.boot import CHECK_FILE

KERNEL = re.compile(r"^(\S+) does not have a deterministic implementation")
RESOURCES = re.compile(r"CUDA error: out of memory|CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|"
                       r"RESOURCE_EXHAUSTED|Unable to initialize backend 'cuda'|no CUDA-capable device|"
                       r"no supported devices found")
"""An exception that says the machine ran out of memory or had no device: the run did not get
far enough to say anything about repeating (a second program on the same GPU, a JAX process that
took the memory first), so the pair is `failed` with the reason, never `raises`, which would
count as the recipe's switch raising."""
LIMITS = jsonio.Limits(max_bytes=4 * 1024 * 1024, max_depth=16, max_nodes=200_000, max_string=64 * 1024)


def read_check(directory: str) -> dict | None:
    """A run's check.json (None when the run did not write one)."""
    path = os.path.join(directory, CHECK_FILE)
    if not os.path.isfile(path):
        return None
    try:
        data = jsonio.load(path, limits=LIMITS)
    except (jsonio.JsonError, OSError):
        return None
    return data if isinstance(data, dict) else None


def run_summary(directory: str, rc: int | None, seconds: float, stderr_tail: str) -> dict:
    """One run: its exit, its steps and their times, what the hook applied and noted."""
    check = read_check(directory) or {}
    out = {"dir": directory, "rc": rc, "wall_s": round(seconds, 3), "steps": check.get("steps", 0),
           "stopped": check.get("stopped"), "step_times": check.get("step_times", []),
           "recipe": check.get("recipe"), "notes": check.get("notes", []), "errors": check.get("errors", []),
           "raised": check.get("raised"), "device": check.get("device"), "frameworks": check.get("frameworks", {}),
           "hooked": bool(check)}
    if rc not in (0, None) and not out["raised"]:
        out["stderr_tail"] = stderr_tail[-2000:]
    return out


def step_seconds(run: dict) -> list[float]:
    """The time of each step after the first (the first holds start-up and compilation)."""
    times = run.get("step_times") or []
    return [b - a for a, b in zip(times, times[1:]) if b >= a]


def _raised(run: dict) -> dict | None:
    raised = run.get("raised")
    if raised:
        found = KERNEL.match(str(raised.get("message", "")).strip())
        where = raised.get("where") or []
        return {"type": raised.get("type"), "message": str(raised.get("message", ""))[:500],
                "kernel": found.group(1) if found else None, "line": where[-1] if where else None}
    return None


def pair(a: dict, b: dict, steps: int) -> dict:
    """Compare two runs of the same configuration."""
    for run in (a, b):
        raised = _raised(run)
        if raised and RESOURCES.search(raised["message"] or ""):
            return {"result": "failed", "why": "a run ran out of GPU memory or found no GPU, so it says nothing about "
                    "repeating: " + raised["message"].strip().splitlines()[0][:200], "raised": raised}
        if raised:
            return {"result": "raises", "raised": raised}
    for run in (a, b):
        if not run["hooked"]:
            return {"result": "failed", "why": "the start-up hook did not run (is the command a Python program? "
                    "python -I, -E or -S ignore the hook)", "rc": run["rc"]}
        if run["rc"] not in (0, None):
            how = f"was killed by signal {-run['rc']}" if run["rc"] < 0 else f"exited with status {run['rc']}"
            return {"result": "failed", "why": f"a run {how}", "rc": run["rc"], "tail": run.get("stderr_tail", "")[-800:]}
        if run["rc"] is None:
            return {"result": "failed", "why": "a run did not end in time (--timeout)"}
        if not run["steps"]:
            return {"result": "failed", "why": "no training step was seen (a PyTorch optimizer.step(), a backward(), "
                    "or a jitted JAX function that takes a gradient)"}
    from kb.probe.diff import ProbeInputError, Run, compare

    try:
        report = compare(Run(a["dir"]), Run(b["dir"]), first_only=True)
    except ProbeInputError as exc:
        return {"result": "failed", "why": f"the logs could not be compared: {exc}"}
    out = {"result": "identical" if report["identical"] else "differs", "compared": report["compared"],
           "steps": min(a["steps"], b["steps"])}
    if a["steps"] != b["steps"]:
        out["note"] = f"the runs took {a['steps']} and {b['steps']} steps"
    if not report["identical"]:
        first = report["first"]
        out["first"] = {k: first.get(k) for k in ("step", "kind", "name", "path", "shape", "dtype",
                                                  "max_abs_diff_at_least")}
        out["message"] = report.get("message")
    return out


def blame(a: str, b: str) -> dict:
    """The probe's account of two watched runs: the first place that split and the calls it
    blames, each with the knowledge base's answer."""
    from kb.probe.diff import ProbeInputError, Run, compare
    from kb.probe.kbask import verdict

    try:
        report = compare(Run(a), Run(b), first_only=True)
    except ProbeInputError as exc:
        return {"result": "failed", "why": str(exc)}
    if report["identical"]:
        return {"result": "identical", "note": "the watched runs did not differ this time"}
    found = report.get("blame", {})
    return {"result": "differs", "message": report.get("message"),
            "first": {k: report["first"].get(k) for k in ("step", "kind", "name", "path")},
            "how": found.get("how"),
            "calls": [{"call": x.get("shown", x.get("op")), "op": x.get("op"), "place": x.get("place"),
                       "kb": verdict(x)} for x in found.get("answers", [])[:8]]}


def time_ratio(written: list[dict], recipe: list[dict]) -> dict:
    """The recipe's cost: median step time under it over the median as written (steps after
    the first), and the same for whole runs."""
    a = [s for run in written for s in step_seconds(run)]
    b = [s for run in recipe for s in step_seconds(run)]
    out: dict = {"as_written_step_s": _round(statistics.median(a)) if a else None,
                 "recipe_step_s": _round(statistics.median(b)) if b else None}
    out["step_ratio"] = _round(out["recipe_step_s"] / out["as_written_step_s"]) if a and b and out["as_written_step_s"] else None
    fa = [r["step_times"][0] for r in written if r.get("step_times")]
    fb = [r["step_times"][0] for r in recipe if r.get("step_times")]
    out["as_written_first_step_s"] = _round(statistics.median(fa)) if fa else None  # start-up, compilation, step 1
    out["recipe_first_step_s"] = _round(statistics.median(fb)) if fb else None
    wa = [r["wall_s"] for r in written if r["rc"] == 0]
    wb = [r["wall_s"] for r in recipe if r["rc"] == 0]
    out["as_written_wall_s"] = _round(statistics.median(wa)) if wa else None
    out["recipe_wall_s"] = _round(statistics.median(wb)) if wb else None
    out["wall_ratio"] = _round(out["recipe_wall_s"] / out["as_written_wall_s"]) if wa and wb else None
    return out


def _round(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.3g}")


def agreement(prediction: dict, written: dict, recipe: dict) -> dict:
    """Right or wrong: the predicted outcome under the recipe (and as written) against the runs."""
    got = recipe["result"]
    right = got == prediction["expect"] if got in ("identical", "differs", "raises") else None
    written_got = written["result"]
    written_right = (written_got == prediction["as_written_expect"]
                     if written_got in ("identical", "differs", "raises") else None)
    return {"predicted": prediction["under_recipe"], "expected": prediction["expect"], "outcome": got,
            "right": right, "as_written_predicted": prediction["as_written"],
            "as_written_expected": prediction["as_written_expect"], "as_written_outcome": written_got,
            "as_written_right": written_right}


def finite(value):
    """The value with NaN and infinities as None, for JSON without NaN or Infinity."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
