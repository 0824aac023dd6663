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


CONDITION_CHARS = 110


def condition(finding: Finding) -> str:
    """The record's first stated condition, shortened: what makes the call risky or harmless."""
    if not finding.conditions:
        return ""
    text = " ".join(str(finding.conditions[0]).split())
    return text if len(text) <= CONDITION_CHARS else text[: CONDITION_CHARS - 3].rstrip() + "..."


def line(finding: Finding) -> str:
    if finding.note:
        return f"{location(finding)}: {finding.text} [{finding.record}]: note: {finding.note}"
    out = f"{location(finding)}: {finding.text} [{finding.record}]: {finding.level}: {finding.answer}; {finding.fix}"
    when = condition(finding)
    return f"{out}; applies when: {when}" if when else out


def summary_lines(report: Report, solutions: dict) -> list[str]:
    out = []
    counts = {level: sum(1 for f in report.findings if f.level == level) for level in STYLE}
    versions = ", ".join(f"{p.framework} {p.version} ({p.origin})" for p in report.pins.values()) or "no framework calls found"
    out.append(f"scanned {report.files} file(s) for {report.device}; versions: {versions}")
    cpu_builds = [p for p in report.pins.values() if p.origin.startswith("installed") and "+cpu" in p.origin]
    if cpu_builds and report.device == "gpu":
        out.append("note: the installed " + ", ".join(f"{p.framework} is a CPU build" for p in cpu_builds)
                   + "; the answers are for that release on a GPU: pass --versions or --lockfile for the build you train with")
    out.extend(_switch_lines(report))
    out.append(f"{len(report.findings)} finding(s): {counts['raises']} raise, {counts['nondeterministic']} not deterministic, "
               f"{counts['possible']} possible; {report.suppressed} suppressed; {len(report.errors)} file(s) not parsed"
               + (f"; {len(report.notes)} note(s), not findings" if report.notes else "")
               + (f"; {report.unverified} call(s) answered only with \"no known source, not verified\""
                  if report.unverified else ""))
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
        out.append("clean: no known source of run-to-run non-determinism in these calls"
                   + (f" ({report.unverified} of them not verified either)" if report.unverified else ""))
    return out


RUNS_LISTED = 20


def _switch_lines(report: Report) -> list[str]:
    """Which fixes hold, per entry point (a switch holds only in the processes that run it)."""
    out = []
    runs = list(report.runs)
    if len(runs) <= 1:  # one run: the fixes of the whole code base
        applied = runs[0].applied if runs else report.applied
        sure = [a for a in applied.values() if a.condition is None]
        iffy = [a for a in applied.values() if a.condition is not None]
        if sure:
            out.append("fixes already applied: " + ", ".join(
                f"{a.code} ({a.path}:{a.line})" if a.path else f"{a.code} (default)" for a in sure))
        if iffy:
            out.append("fixes set only under a condition (not counted): " + ", ".join(
                f"{a.code} ({a.path}:{a.line}, if {a.condition})" for a in iffy))
        return out
    setting = [r for r in runs if any(a.path for a in r.applied.values())]
    quiet = [r for r in runs if r not in setting]
    if not setting:
        return out
    out.append(f"fixes per entry point ({len(runs)} run(s); a switch holds only in the process that runs it):")
    groups: dict[tuple, list] = {}
    for r in setting:  # runs that apply the same fixes, set in the same places, share one line
        set_at = tuple(f"{a.code} ({a.path}:{a.line})" for a in r.applied.values() if a.path and a.condition is None)
        set_if = tuple(f"{a.code} ({a.path}:{a.line}, only if {a.condition})" for a in r.applied.values()
                       if a.path and a.condition is not None)
        groups.setdefault((set_at, set_if), []).append(r)
    for (set_at, set_if), members in list(groups.items())[:RUNS_LISTED]:
        parts = []
        if set_at:
            parts.append("applies " + ", ".join(set_at))
        if set_if:
            parts.append("not counted: " + ", ".join(set_if))
        out.append(f"  {_runs_named(members)}: " + "; ".join(parts))
    if len(groups) > RUNS_LISTED:
        out.append(f"  ... and {len(groups) - RUNS_LISTED} more group(s) of runs that set a fix (--format json lists them)")
    if quiet:
        out.append(f"  {len(quiet)} run(s) set no fix, so the findings in the files they run stay: {_runs_named(quiet, why=False)}")
    return out


def is_test(path: str) -> bool:
    """A test file, which pytest runs (each is its own run here): summarised as a count, not by name."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" \
        or (len(parts) > 1 and parts[-2] in ("tests", "test"))


def _runs_named(runs: list, why: bool = True) -> str:
    """`train.py (__main__ block), eval.py (__main__ block) and 3 more; 120 test file(s)`."""
    programs = [r for r in runs if not is_test(r.entry)]
    tests = len(runs) - len(programs)
    shown = [f"{r.entry} ({r.why})" if why else r.entry for r in programs[:5]]
    text = ", ".join(shown) + (f" and {len(programs) - 5} more" if len(programs) > 5 else "")
    if tests:
        text += ("; " if text else "") + f"{tests} test file(s)"
    return text


def render(report: Report, solutions: dict, stream: TextIO | None = None) -> None:
    """Print the report: every user-derived string (paths, code, messages) as a rich Text, which is
    never read as markup, with emoji codes off (`t.py:100:5` would otherwise print a 💯)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False, soft_wrap=True, emoji=False, markup=False)
    for error in report.errors:
        console.print(Text(f"{visible(error.path)}:{error.line}:{error.col}: error: {visible(error.message)}", style="red"))
    for finding in report.findings:
        console.print(Text(visible(line(finding)), style=STYLE[finding.level]))
    for finding in report.notes:
        console.print(Text(visible(line(finding)), style="dim"))
    for text in summary_lines(report, solutions):
        console.print(Text(visible(text)))
