"""Compare two probe logs: the first step, and within it the first probe, whose values differ.

Standard library only (plus `kb.status`), so `kb probe diff` runs where no framework and no
pydantic is installed, e.g. on a GPU box that only has the training stack.

Records are matched by (kind, name, path, occurrence) within a step rather than by position:
inside `tf.function` or jit, independent probes may fire in a different order each run.
Execution order is run A's. Everything that differs after the first difference is
"downstream": it may be caused by the first one, so it is never blamed.
"""

from __future__ import annotations

import json
import os

from kb.probe.blame import blame_calls
from kb.probe.blame import message as blame_message
from kb.probe.kbask import ask, verdict
from kb.probe.recorder import META, PLACES, RECORDS

KIND_WORDS = {
    "input": "input of",  # what a watched module was handed (recorded before its forward)
    "call": "output of a call in",  # a call a module made between its children (first step; every step with --calls)
    "forward": "forward of",
    "backward": "backward of",  # a module's own backward: the gradient it produced for its inputs
    "dout": "gradient at the output of",  # what flowed back through a monitor() place
    "grad": "gradient of",
    "param": "parameter",
    "update": "after the optimizer step, parameter",
}
DOWNSTREAM_LIMIT = 50
MAX_LOG_BYTES = 64 * 1024 * 1024  # a probe log: ~300 bytes a record, so ~200k records at most
MAX_RECORDS = 100_000             # ~2 s and ~200 MB to compare two such logs


class ProbeInputError(ValueError):
    """A log directory that is missing, empty or malformed (exit code 2)."""


class Run:
    def __init__(self, directory: str) -> None:
        self.dir = directory
        path = os.path.join(directory, RECORDS)
        if not os.path.isdir(directory):
            raise ProbeInputError(f"{directory}: not a directory (expected a probe log from `kb probe run`)")
        if not os.path.isfile(path):
            raise ProbeInputError(f"{path}: missing: no probe recorded (is KB_PROBE_DIR set and does the script use kb.probe?)")
        size = os.path.getsize(path)
        if size > MAX_LOG_BYTES:
            raise ProbeInputError(f"{path}: {size:,} bytes; at most {MAX_LOG_BYTES:,} are read (a log is untrusted "
                                  "input): probe fewer steps or fewer places, e.g. stop the script after the first steps")
        self.steps: dict[int, list[dict]] = {}
        self.count = 0
        with open(path, encoding="utf-8", errors="replace") as handle:
            for lineno, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                if self.count >= MAX_RECORDS:
                    raise ProbeInputError(f"{path}:{lineno}: more than {MAX_RECORDS:,} probe records; probe fewer "
                                          "steps or fewer places")
                try:
                    rec = json.loads(line)
                    step = int(rec["step"])
                    if not all(isinstance(rec[k], str) for k in ("hash", "kind", "name")) \
                            or not isinstance(rec.get("path", ""), str) or type(rec.get("occ", 0)) is not int:
                        raise TypeError("hash, kind, name and path are text, occ an integer")
                except (ValueError, KeyError, TypeError) as exc:
                    raise ProbeInputError(f"{path}:{lineno}: not a probe record ({exc}); expected JSON with step, kind, name, hash") from None
                self.steps.setdefault(step, []).append(rec)
                self.count += 1
        for recs in self.steps.values():
            recs.sort(key=lambda r: r.get("seq", 0))
        self.meta = _read_json(os.path.join(directory, META))
        self.places = _read_json(os.path.join(directory, PLACES))


def _read_json(path: str) -> dict:
    if not os.path.isfile(path):
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except ValueError as exc:
        raise ProbeInputError(f"{path}: not JSON ({exc})") from None
    return data if isinstance(data, dict) else {}


def _key(rec: dict) -> tuple:
    return (rec["kind"], rec["name"], rec.get("path", ""), rec.get("occ", 0))


def _place(rec: dict) -> dict:
    return {k: rec.get(k) for k in ("step", "kind", "name", "path", "shape", "dtype", "device", "framework") if rec.get(k) not in (None, "")}


def max_abs_lower_bound(a: dict, b: dict) -> float | None:
    """A lower bound of max|a-b| from the statistics: min, max and mean are 1-Lipschitz in
    the max norm, and the sample holds the same positions in both runs."""
    sa, sb = a.get("stats"), b.get("stats")
    if not sa or not sb or a.get("shape") != b.get("shape"):
        return None
    diffs = [abs(sa[k] - sb[k]) for k in ("min", "max", "mean") if k in sa and k in sb]
    diffs += [abs(x - y) for x, y in zip(sa.get("sample", []), sb.get("sample", []))]
    diffs = [d for d in diffs if d == d]  # NaN compares unequal to itself
    return max(diffs) if diffs else None


def compare(a: Run, b: Run, *, first_only: bool = False) -> dict:
    """The first differing record, what differs after it, and the blame.

    `first_only` stops at the step of the first difference (downstream is not counted)."""
    first = None
    first_pair: tuple[dict, dict | None] | None = None
    step_differing: dict[tuple, tuple[dict, dict | None]] = {}
    upstream = 0
    downstream: list[dict] = []
    compared = 0
    for step in sorted(set(a.steps) | set(b.steps)):
        others = {_key(r): r for r in b.steps.get(step, [])}
        differing = []
        for rec in a.steps.get(step, []):
            other = others.pop(_key(rec), None)
            compared += 1
            if other is None:
                differing.append((rec, None, "only in A"))
            elif (rec["hash"], rec.get("shape"), rec.get("dtype")) != (other["hash"], other.get("shape"), other.get("dtype")):
                differing.append((rec, other, "values differ"))
            elif first is None:
                upstream += 1
        differing += [(r, None, "only in B") for r in others.values()]
        for rec, other, why in differing:
            if first is None:
                first_pair = (rec, other)
                step_differing = {_key(r): (r, o) for r, o, _ in differing}
                first = _place(rec)
                first["why"] = why
                first["upstream_identical"] = upstream
                if other is not None:
                    first["max_abs_diff_at_least"] = max_abs_lower_bound(rec, other)
                    first["stats_a"], first["stats_b"] = rec.get("stats"), other.get("stats")
                if rec.get("op"):
                    first["op"] = rec["op"]
                if rec["kind"] == "dout" and not _has_calls(a):
                    first["produced_by"] = _producer(a.steps.get(step, []), rec)
            else:
                entry = _place(rec)
                entry["why"] = why
                downstream.append(entry)
        if first is None:
            upstream = 0
        elif first_only:
            break
    report = {
        "identical": first is None,
        "runs": [a.dir, b.dir],
        "probes": [a.count, b.count],
        "steps": len(set(a.steps) | set(b.steps)),
        "compared": compared,
        "first": first,
        "downstream_count": None if first_only else len(downstream),
        "downstream": [] if first_only else downstream[:DOWNSTREAM_LIMIT],
        "not_recorded": {run.dir: _not_recorded(run) for run in (a, b) if _not_recorded(run)},
    }
    if first is not None:
        if _has_calls(a) and first["kind"] in ("input", "call", "forward", "dout", "grad"):
            report["blame"] = blame_calls(first, first_pair, step_differing, a)
        else:
            report["blame"] = blame(first, a)
        report["message"] = (blame_message(first, report["blame"], KIND_WORDS) if "certainty" in report["blame"]
                             else message(report))
    return report


def _not_recorded(run: Run) -> list[dict]:
    """What the probe failed to record in this run (meta.json's `not_recorded`)."""
    listed = run.meta.get("not_recorded")
    if not isinstance(listed, list):
        return []
    return [{"where": str(e.get("where")), "why": str(e.get("why")), "count": e.get("count")}
            for e in listed[:100] if isinstance(e, dict)]


def _has_calls(run: Run) -> bool:
    """A log from `watch()` with the calls recorded (the call-level blame applies)."""
    return any("calls" in info or "children" in info for info in run.places.values() if isinstance(info, dict))


def _producer(records: list[dict], rec: dict) -> str | None:
    """The gradient at a monitored output is made by the backward of what consumed it: the
    place whose gradient was recorded just before (backward runs from the loss inwards)."""
    before = None
    for other in records:
        if other is rec:
            return before
        if other["kind"] in ("dout", "backward"):
            before = other["name"]
    return before


def _place_info(first: dict, run: Run) -> tuple[str, dict]:
    """The place to blame: a parameter belongs to its module; a path suffix to its name."""
    name = first.get("produced_by") or first["name"]
    info = dict(run.places.get(name, {}))
    module = info.get("module")
    if module and module in run.places:
        merged = dict(run.places[module])
        merged.update({k: v for k, v in info.items() if k != "ops"})
        merged["ops"] = run.places[module].get("ops", [])
        info = merged
    return name, info


def blame(first: dict, run: Run) -> dict:
    name, info = _place_info(first, run)
    known = run.meta.get("frameworks", {})
    framework = first.get("framework") or info.get("framework") or (next(iter(known)) if len(known) == 1 else None)
    version = run.meta.get("frameworks", {}).get(framework) if framework else None
    device = first.get("device") or ("gpu" if "gpu" in run.meta.get("devices", []) else "cpu")
    candidates = []
    if info.get("type"):
        candidates.append(info["type"])
    hint = "" if first.get("produced_by") else (first.get("op") or "")
    for op in hint.split(",") + list(info.get("ops", [])):
        if op and op not in candidates:
            candidates.append(op)
    answers = [ask(op, framework, version, device, info.get("call") if op == info.get("type") else None)
               for op in candidates]
    return {"place": name, "module": info.get("module"), "type": info.get("type"), "ops": candidates,
            "framework": framework, "version": version, "device": device, "answers": answers}


def message(report: dict) -> str:
    first, b = report["first"], report["blame"]
    what = f"{KIND_WORDS.get(first['kind'], first['kind'])} `{first['name']}{first.get('path', '')}`"
    if b.get("type") and first["kind"] != "dout":
        what += f" ({b['type']}" + (f" `{b['module']}`" if b.get("module") else "") + ")"
    text = f"differs first at step {first['step']}, {what}"
    if first["kind"] == "dout":
        producer = first.get("produced_by")
        text = (f"differs first at step {first['step']}, in the backward of `{producer}`" if producer else
                f"differs first at step {first['step']}, in the loss gradient") + f" ({what})"
        if producer and b.get("type"):
            text = text.replace(f"`{producer}`", f"`{producer}` ({b['type']})", 1)
    lead = next((a for a in b["answers"] if a.get("deterministic") is False), None)
    if lead is None:
        lead = next((a for a in b["answers"] if a.get("known")), b["answers"][0] if b["answers"] else None)
    if lead is not None:
        text += f": {lead['op']}: {verdict(lead)}"
    else:
        text += ": no op known for this place (pass op=... to probe.monitor)"
    return text
