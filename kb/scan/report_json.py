"""The JSON report: every finding with its path, line, column, op, call facts, answer and fix."""

from __future__ import annotations

import json
import os

import kb
from kb.scan.run import Report


def dumps(doc: dict) -> str:
    """JSON with one top-level key a line and one list item a line: readable, and written by
    the C encoder (json.dumps with indent= is pure Python: seconds for thousands of findings)."""
    out = ["{"]
    keys = list(doc)
    for n, key in enumerate(keys):
        value = doc[key]
        comma = "," if n < len(keys) - 1 else ""
        if isinstance(value, list) and value:
            items = ",\n    ".join(json.dumps(v, ensure_ascii=False) for v in value)
            out.append(f"  {json.dumps(key)}: [\n    {items}\n  ]{comma}")
        else:
            out.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    out.append("}")
    return "\n".join(out)


def text_path(path: str | None) -> str | None:
    """A path as JSON text: the bytes of a name that is not UTF-8 as \\xNN (printing the
    raw surrogates os.fsdecode made would fail, and no JSON reader could take them)."""
    if path is None:
        return None
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")


def _paths(item: dict) -> dict:
    if "path" in item:
        item["path"] = text_path(item["path"])
    return item


def document(report: Report) -> dict:
    return {
        "tool": "kb scan",
        "kb_version": kb.__version__,
        "device": report.device,
        "files": report.files,
        "versions": {fw: {"version": p.version, "from": p.origin} for fw, p in report.pins.items()},
        "applied": [{"code": a.code, "path": text_path(a.path), "line": a.line, "text": a.text, "condition": a.condition}
                    for a in report.applied.values()],
        "runs": [{"entry": text_path(r.entry), "why": r.why,
                  "applied": [{"code": a.code, "path": text_path(a.path), "line": a.line, "condition": a.condition}
                              for a in r.applied.values()]} for r in report.runs],
        "summary": {**{level: sum(1 for f in report.findings if f.level == level)
                       for level in ("raises", "nondeterministic", "possible")},
                    "no_known_source": report.unverified},
        "findings": [_paths(f.to_dict()) for f in report.findings],
        "notes": [_paths(f.to_dict()) for f in report.notes],
        "errors": [_paths(e._asdict()) for e in report.errors],
        "suppressed": report.suppressed,
        "recipes": [r._asdict() for r in report.recipes],
    }
