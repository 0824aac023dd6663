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
from typing import Any
from pathlib import Path

from kb import jsonio, untrusted

from kb.probe.blame import blame_calls
from kb.probe.blame import message as blame_message
from kb.probe.kbask import ask, verdict
from kb.probe.recorder import MAX_LOG_BYTES, MAX_RECORDS, META, PLACES, RECORDS

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
NON_FINITE = frozenset(jsonio.NON_FINITE)  # "nan", "inf", "-inf": how the log writes such statistics


MAX_SIDE_BYTES = 16 * 1024 * 1024  # meta.json and places.json: a few KB to a few MB in real runs
LINE_LIMITS = jsonio.Limits(max_bytes=MAX_LOG_BYTES, max_depth=8, max_nodes=100_000, max_string=64 * 1024)
SIDE_LIMITS = jsonio.Limits(max_bytes=MAX_SIDE_BYTES, max_depth=16, max_nodes=2_000_000, max_string=64 * 1024)


class ProbeInputError(ValueError):
    """A log directory that is missing, empty or malformed (exit code 2)."""


def _number(value: object) -> bool:
    return value is None or value in NON_FINITE or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _scalars(value: object) -> bool:
    """A call's facts: names to plain values (what kb.status(call=...) takes)."""
    return value is None or (isinstance(value, dict) and all(
        v is None or isinstance(v, (str, int, float, bool)) for v in value.values()))


# What each field of a probe record must be when present: the reader checks them all, so the
# comparison and the blame never meet a value of another type (a traceback, a wrong answer).
_RECORD_FIELDS = {
    "step": (_int, "an integer"),
    "seq": (_int, "an integer"),
    "occ": (_int, "an integer"),
    "hash": (lambda v: isinstance(v, str), "text"),
    "kind": (lambda v: isinstance(v, str), "text"),
    "name": (lambda v: isinstance(v, str), "text"),
    "path": (lambda v: isinstance(v, str), "text"),
    "dtype": (lambda v: v is None or isinstance(v, str), "text"),
    "device": (lambda v: v is None or isinstance(v, str), "text"),
    "framework": (lambda v: v is None or isinstance(v, str), "text"),
    "op": (lambda v: v is None or isinstance(v, str), "text"),
    "shape": (lambda v: v is None or (isinstance(v, list) and all(_int(n) for n in v)), "a list of integers"),
    "stats": (lambda v: v is None or (isinstance(v, dict) and all(_number(v.get(k)) for k in ("min", "max", "mean"))
                                      and isinstance(v.get("sample", []), list) and all(_number(x) for x in v.get("sample", []))),
              "an object of numbers min, max, mean and a list sample"),
}
_REQUIRED = ("step", "kind", "name", "hash")
_PLACE_FIELDS = {
    "type": (lambda v: isinstance(v, str), "text"),
    "module": (lambda v: v is None or isinstance(v, str), "text"),
    "parent": (lambda v: v is None or isinstance(v, str), "text"),
    "param": (lambda v: v is None or isinstance(v, str), "text"),
    "framework": (lambda v: v is None or isinstance(v, str), "text"),
    "leaf": (lambda v: isinstance(v, bool), "true or false"),
    "compiled": (lambda v: isinstance(v, str), "text"),
    "inside": (lambda v: isinstance(v, str), "text"),
    "ops": (_strs, "a list of op names"),
    "call": (_scalars, "an object of call facts (names to plain values)"),
    "calls": (lambda v: isinstance(v, list) and all(
        isinstance(c, dict) and isinstance(c.get("op"), str) and _scalars(c.get("call"))
        and _strs(c.get("from", [])) and (c.get("shown") is None or isinstance(c.get("shown"), str)) for c in v),
              "a list of objects with op (text), call (call facts), from (a list of text)"),
    "children": (lambda v: isinstance(v, dict) and all(_strs(x) for x in v.values()), "an object of lists of names"),
}


def _check(obj: dict, fields: dict, where: str, what: str) -> None:
    for key, (ok, expected) in fields.items():
        if key in obj and not ok(obj[key]):
            raise ProbeInputError(f"{where}: {what}: {key!r} should be {expected}, not {_short(obj[key])}")


def _short(value: object) -> str:
    text = json.dumps(value)[:60] if not isinstance(value, float) or value == value else "NaN"
    return visible(text)


def visible(text: str) -> str:
    from kb.untrusted import shown

    return shown(text)


class Run:
    def __init__(self, directory: str) -> None:
        self.dir = directory
        path = os.path.join(directory, RECORDS)
        if not os.path.isdir(directory):
            raise ProbeInputError(f"{visible(directory)}: not a directory (expected a probe log from `kb probe run`)")
        if not os.path.lexists(path):
            raise ProbeInputError(f"{visible(path)}: missing: no probe recorded (is KB_PROBE_DIR set and does the script use kb.probe?)")
        raw = _read(path, directory, MAX_LOG_BYTES, "a log is untrusted input: probe fewer steps or fewer places, "
                                                     "e.g. stop the script after the first steps")
        self.steps: dict[int, list[dict]] = {}
        self.count = 0
        for lineno, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            if self.count >= MAX_RECORDS:
                raise ProbeInputError(f"{visible(path)}:{lineno}: more than {MAX_RECORDS:,} probe records; probe fewer "
                                      "steps or fewer places")
            where = f"{visible(path)}:{lineno}"
            try:
                rec = _line(line, where)
            except jsonio.JsonError as exc:
                raise ProbeInputError(f"{where}: not a probe record ({visible(exc.message)}); "
                                      "expected JSON with step, kind, name, hash") from None
            if not isinstance(rec, dict) or any(k not in rec for k in _REQUIRED):
                raise ProbeInputError(f"{where}: not a probe record; expected a JSON object with step, kind, name, hash")
            _check(rec, _RECORD_FIELDS, where, "not a probe record")
            self.steps.setdefault(rec["step"], []).append(rec)
            self.count += 1
        if not self.count:
            raise ProbeInputError(f"{visible(path)}: the run recorded nothing (an empty log): nothing to compare; "
                                  "does the script call kb.probe, and did it reach its first step?")
        for recs in self.steps.values():
            recs.sort(key=lambda r: r.get("seq", 0))
        self.meta = _read_json(os.path.join(directory, META), directory)
        self.places = _read_json(os.path.join(directory, PLACES), directory)
        meta_path = visible(os.path.join(directory, META))
        frameworks = self.meta.get("frameworks", {})
        if not isinstance(frameworks, dict) or not all(isinstance(v, str) for v in frameworks.values()):
            raise ProbeInputError(f"{meta_path}: 'frameworks' should be an object of framework names to versions, "
                                  f"not {_short(frameworks)}")
        if not _strs(self.meta.get("devices", [])):
            raise ProbeInputError(f"{meta_path}: 'devices' should be a list of device names, not {_short(self.meta['devices'])}")
        self.incomplete = _incomplete(self.meta, meta_path)
        places_path = visible(os.path.join(directory, PLACES))
        for name, info in self.places.items():
            if not isinstance(info, dict):
                raise ProbeInputError(f"{places_path}: place {visible(name)[:80]!r} should be an object, not {_short(info)}")
            _check(info, _PLACE_FIELDS, places_path, f"place {visible(name)[:80]!r}")


def _incomplete(meta: dict, where: str) -> str | None:
    """Why a log may lack records, or None. A log of format 3 or later says `closed: true` once
    the recorder closed it; a process that ended with os._exit or was killed never did, and its
    last step's records were still in memory. Older logs (format 2) cannot say: taken as whole."""
    for key in ("closed", "truncated"):
        if key in meta and not isinstance(meta[key], bool):
            raise ProbeInputError(f"{where}: {key!r} should be true or false, not {_short(meta[key])}")
    if meta.get("truncated"):
        return (f"the recorder stopped writing at its limit ({MAX_RECORDS:,} records or {MAX_LOG_BYTES:,} bytes): "
                "later probes are missing")
    fmt = meta.get("format")
    if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt >= 3 and meta.get("closed") is not True:
        return ("the log was never closed (the script ended with os._exit, was killed, or is still running): "
                "its last step's records may be missing")
    return None


def _line(line: bytes, where: str) -> object:
    """One log line as JSON. A line with few brackets cannot nest deeply and is handed to the
    C decoder at once (a real record has 2-4: 3x faster than the bounded reader); any other
    goes through kb.jsonio's bounds."""
    if len(line) <= LINE_LIMITS.max_string and line.count(b"[") + line.count(b"{") <= LINE_LIMITS.max_depth:
        try:
            return json.loads(line)
        except (ValueError, RecursionError):  # invalid, or an integer of more than 4,300 digits:
            pass  # the bounded reader says what and where
    return jsonio.loads(line, where, limits=LINE_LIMITS)


def _read(path: str, directory: str, limit: int, hint: str) -> bytes:
    """A log file through kb.untrusted: a regular file (a folder, FIFO or device is refused,
    never opened blocking), inside the log directory (no symlink out), at most `limit` bytes."""
    try:
        return untrusted.read_bytes(Path(path), limit, Path(directory))
    except untrusted.Refused as exc:
        extra = f" ({hint})" if "at most" in exc.message else ""
        raise ProbeInputError(f"{visible(path)}: {exc.message}{extra}") from None
    except OSError as exc:
        raise ProbeInputError(f"{visible(path)}: cannot read: {exc.strerror or exc}") from None


def _read_json(path: str, directory: str) -> dict:
    if not os.path.lexists(path):
        return {}
    raw = _read(path, directory, MAX_SIDE_BYTES, "a log is untrusted input")
    try:
        data = jsonio.loads(raw, visible(path), limits=SIDE_LIMITS)
    except jsonio.JsonError as exc:
        what = "refused" if exc.code else "not JSON"
        raise ProbeInputError(f"{visible(path)}:{exc.line}: {what}: {visible(exc.message)}") from None
    if not isinstance(data, dict):
        raise ProbeInputError(f"{visible(path)}: expected a JSON object, not {type(data).__name__}")
    return data


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
    pairs = [(sa[k], sb[k]) for k in ("min", "max", "mean") if k in sa and k in sb]
    pairs += list(zip(sa.get("sample", []), sb.get("sample", [])))
    diffs = [abs(float(x) - float(y)) for x, y in pairs if x is not None and y is not None]  # "nan" -> nan
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
        differing: list[tuple[dict, dict | None, str]] = []
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
    incomplete = {run.dir: run.incomplete for run in (a, b) if run.incomplete}
    report: dict[str, Any] = {
        # True only when both logs are whole: a log cut short cannot prove the runs identical (None)
        "identical": first is None if not incomplete or first is not None else None,
        "incomplete": incomplete,
        "runs": [a.dir, b.dir],
        "probes": [a.count, b.count],
        "steps": len(set(a.steps) | set(b.steps)),
        "compared": compared,
        "first": first,
        "downstream_count": None if first_only else len(downstream),
        "downstream": [] if first_only else downstream[:DOWNSTREAM_LIMIT],
        "not_recorded": {run.dir: _not_recorded(run) for run in (a, b) if _not_recorded(run)},
    }
    if first is None and incomplete:
        report["message"] = ("no difference in the records both logs hold, but "
                             + "; ".join(f"{d}: {why}" for d, why in incomplete.items()) + ": not called identical")
    if first is not None:
        if first_pair is not None and _has_calls(a) and first["kind"] in ("input", "call", "forward", "dout", "grad"):
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
    """A log from `watch()` with the calls recorded, or with a torch.compile'd module watched at
    its boundary (the call-level blame applies)."""
    return any("calls" in info or "children" in info or "compiled" in info
               for info in run.places.values() if isinstance(info, dict))


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
    answers = [ask(op, framework, version, device, call=info.get("call") if op == info.get("type") else None)
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
