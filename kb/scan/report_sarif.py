"""SARIF 2.1.0 for GitHub code scanning: one rule per source record (help text, sources,
links), one result per finding. Levels: raises -> error, not deterministic -> warning,
possible -> note. Paths are relative to the scan's base (the repository root in CI)."""

from __future__ import annotations

import os
from pathlib import PurePath
from urllib.parse import quote

import kb
from kb.scan.ruledoc import sentences
from kb.scan.rules import parse
from kb.scan.run import Report

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {"raises": "error", "nondeterministic": "warning", "possible": "note"}


def _url(ref: dict) -> str | None:
    if ref.get("url"):
        return ref["url"]
    if ref.get("repo") and ref.get("number") and ref.get("kind") in ("issue", "pr"):
        return f"https://github.com/{ref['repo']}/{'pull' if ref['kind'] == 'pr' else 'issues'}/{ref['number']}"
    if ref.get("repo") and ref.get("sha"):
        return f"https://github.com/{ref['repo']}/commit/{ref['sha']}"
    return None


def _rule(record: dict, site_url: str | None) -> dict:
    links = [u for u in (_url(r) for r in record.get("references", ())) if u]
    page = f"{site_url.rstrip('/')}/sources/{record['id']}.html" if site_url else None
    conditions = "; ".join(record.get("conditions") or ())
    scanning = " ".join(sentences(parse(record["scan"]))) if record.get("scan") else ""
    text = f"{record['summary']}" + (f" Applies when: {conditions}" if conditions else "") + \
        (f" How kb scan reads the call: {scanning}" if scanning else "") + \
        f" Ask `kb status {record['id']} <version>` for the fix in your version."
    markdown = text + ("\n\nSources:\n" + "\n".join(f"- <{u}>" for u in links) if links else "")
    rule = {
        "id": record["id"],
        "name": record["id"].replace(".", "_").replace("-", "_"),
        "shortDescription": {"text": record["title"]},
        "fullDescription": {"text": record["summary"]},
        "help": {"text": text, "markdown": markdown},
        "properties": {"tags": ["determinism", record["framework"], record["mechanism"]]},
    }
    if page or links:
        rule["helpUri"] = page or links[0]
    return rule


def _uri(path: str, base: str) -> str:
    """A URI reference (RFC 3986): relative to the base when under it, percent-encoded from the
    file name's bytes, so a space, '#', a control character or a name that is not UTF-8 stays
    one valid URI (GitHub resolves it back to the file)."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    if rel.startswith(".."):
        return PurePath(os.path.abspath(path)).as_uri()
    return quote(os.fsencode(PurePath(rel).as_posix()), safe="/")


MAX_RESULTS = 25_000
"""GitHub code scanning takes at most 25,000 results a run: past it the upload is refused (a
4.7 MB file of 180,000 calls made a 102 MB SARIF). The most severe findings are kept; a
notification says how many more there are (`--format json` lists every one)."""


def document(report: Report, records: dict, base: str = ".", site_url: str | None = None) -> dict:
    order = {"raises": 0, "nondeterministic": 1, "possible": 2}
    kept = sorted(report.findings, key=lambda f: order.get(f.level, 3))[:MAX_RESULTS]
    kept_ids = {id(f) for f in kept}
    findings = [f for f in report.findings if id(f) in kept_ids]  # in the report's order (path, line)
    used = sorted({f.record for f in findings})
    index_of = {rid: n for n, rid in enumerate(used)}
    results = []
    for f in findings:
        region = {"startLine": f.line, "startColumn": f.col}
        message = f"{f.text}: {f.answer}; {f.fix}" + (f" (notebook cell {f.cell})" if f.cell is not None else "")
        results.append({
            "ruleId": f.record,
            "ruleIndex": index_of[f.record],
            "level": LEVEL[f.level],
            "message": {"text": message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.path, base), "uriBaseId": "%SRCROOT%"},
                                                "region": region}}],
            "properties": {"op": f.op, "facts": f.facts, "dependsOn": list(f.depends_on), "codes": list(f.codes),
                           "framework": f.framework, "version": f.version, "cell": f.cell},
        })
    notifications = [{
        "level": "error",
        "message": {"text": f"cannot scan: {e.message}"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(e.path, base), "uriBaseId": "%SRCROOT%"},
                                            "region": {"startLine": e.line, "startColumn": max(1, e.col)}}}],
    } for e in report.errors]
    if len(findings) < len(report.findings):
        notifications.append({"level": "warning", "message": {"text": (
            f"{len(report.findings) - len(findings):,} more finding(s) are not in this SARIF: GitHub code scanning "
            f"takes at most {MAX_RESULTS:,} results a run (the most severe are kept; kb scan --format json lists all)")}})
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kb scan",
                "semanticVersion": kb.__version__,
                "rules": [_rule(records[rid], site_url) for rid in used],
            }},
            "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
            "results": results,
            "properties": {"versions": {fw: {"version": p.version, "from": p.origin} for fw, p in report.pins.items()}},
        }],
    }
