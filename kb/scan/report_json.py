"""The JSON report: every finding with its path, line, column, op, call facts, answer and fix."""

from __future__ import annotations

import kb
from kb.scan.run import Report


def document(report: Report) -> dict:
    return {
        "tool": "kb scan",
        "kb_version": kb.__version__,
        "device": report.device,
        "files": report.files,
        "versions": {fw: {"version": p.version, "from": p.origin} for fw, p in report.pins.items()},
        "applied": [{"code": a.code, "path": a.path, "line": a.line, "text": a.text, "condition": a.condition}
                    for a in report.applied.values()],
        "findings": [f.to_dict() for f in report.findings],
        "errors": [e._asdict() for e in report.errors],
        "suppressed": report.suppressed,
        "recipes": [r._asdict() for r in report.recipes],
    }
