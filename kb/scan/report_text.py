"""The text report: one line per finding (`path:line:col: call: answer; fix`), then a summary
with one recipe for the whole code base. Printed with rich (colour only on a terminal)."""

from __future__ import annotations

from typing import TextIO

from kb.scan.lookup import Finding
from kb.untrusted import shown as visible
from kb.scan.run import Report

STYLE = {"raises": "red", "nondeterministic": "yellow", "possible": "cyan"}


def location(finding: Finding) -> str:
    cell = f"#cell{finding.cell}" if finding.cell is not None else ""
    return f"{visible(finding.path)}{cell}:{finding.line}:{finding.col}"


def line(finding: Finding) -> str:
    return f"{location(finding)}: {finding.text} [{finding.record}]: {finding.level}: {finding.answer}; {finding.fix}"


def summary_lines(report: Report, solutions: dict) -> list[str]:
    out = []
    counts = {level: sum(1 for f in report.findings if f.level == level) for level in STYLE}
    versions = ", ".join(f"{p.framework} {p.version} ({p.origin})" for p in report.pins.values()) or "no framework calls found"
    out.append(f"scanned {report.files} file(s) for {report.device}; versions: {versions}")
    sure = [a for a in report.applied.values() if a.condition is None]
    iffy = [a for a in report.applied.values() if a.condition is not None]
    if sure:
        out.append("fixes already applied: " + ", ".join(
            f"{a.code} ({a.path}:{a.line})" if a.path else f"{a.code} (default)" for a in sure))
    if iffy:
        out.append("fixes set only under a condition (not counted): " + ", ".join(
            f"{a.code} ({a.path}:{a.line}, if {a.condition})" for a in iffy))
    out.append(f"{len(report.findings)} finding(s): {counts['raises']} raise, {counts['nondeterministic']} not deterministic, "
               f"{counts['possible']} possible; {report.suppressed} suppressed; {len(report.errors)} file(s) not parsed")
    for r in report.recipes:
        if r.codes:
            out.append(f"recipe for {r.framework} {r.version} (add, in this order):")
            for n, code in enumerate(r.codes, start=1):
                info = solutions.get(code, {})
                out.append(f"  {n}. {code}: {info.get('title', code)}")
                for snippet_line in (info.get("snippet") or "").splitlines():
                    out.append(f"       {snippet_line}".rstrip())
        if r.unsolved:
            out.append(f"no known solution in {r.framework} {r.version} for: {', '.join(r.unsolved)}")
        if r.raising:
            out.append(f"raise under a switch this code sets ({r.framework} {r.version}): {', '.join(r.raising)}")
    if not report.findings and not report.errors:
        out.append("clean: no known source of run-to-run non-determinism in these calls")
    return out


def render(report: Report, solutions: dict, stream: TextIO | None = None) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=stream, highlight=False, soft_wrap=True)
    for error in report.errors:
        console.print(f"[red]{escape(visible(error.path))}:{error.line}:{error.col}: error: {escape(visible(error.message))}[/]")
    for finding in report.findings:
        console.print(f"[{STYLE[finding.level]}]{escape(visible(line(finding)))}[/]")
    for text in summary_lines(report, solutions):
        console.print(escape(visible(text)))
