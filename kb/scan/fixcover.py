"""Which fixes hold for a file and for the whole code base, from those each run applies (for kb/scan/run.py).

The runs are kb/scan/scope.py's, their tables kb/scan/switches.py's. For one file: the fixes that hold in every
run that executes it (and those that only may, with where each was set); for the whole code base: one table in
which a fix counts only when it holds in every run; and a setting in a function a run does not call, made
conditional on that function being called.
"""

from __future__ import annotations

from typing import NamedTuple

from kb.scan import resolve, scope, switches


def conditional(setting: resolve.Setting) -> resolve.Setting:
    """A setting in a function this run does not call: conditional on that function being called."""
    note = f"{setting.scope}() is called (this program does not call it)"
    return setting._replace(condition=f"{setting.condition} and {note}" if setting.condition else note)


class Coverage(NamedTuple):
    codes: frozenset[str]
    maybe: frozenset[str]
    where: dict[str, str]


def coverage(runs: list[scope.Run], ids: tuple[int, ...], per_run: list[dict[str, switches.Applied]],
             solutions: dict) -> Coverage:
    """The fixes that hold for a file: those that hold in every run that executes it."""
    codes_each: list[frozenset[str]] = []
    maybe_all: set[str] = set()
    where: dict[str, str] = {}
    for k in ids:
        applied = per_run[k]
        sure = switches.closure({c for c, a in applied.items() if a.condition is None}, solutions)
        iffy = switches.closure({c for c, a in applied.items() if a.condition is not None}, solutions) - sure
        codes_each.append(sure)
        maybe_all |= iffy
        for code, a in applied.items():
            where.setdefault(code, (f"{a.path}:{a.line}" if a.path else "default")
                             + (f", only if {a.condition}" if a.condition else ""))
        for code in (sure | iffy) - set(where):  # implied codes: name where their implier was set
            where[code] = next((w for c, w in where.items() if code in switches.closure({c}, solutions)), "?")
    codes = frozenset.intersection(*codes_each) if codes_each else frozenset()
    partial = set().union(*codes_each) - codes if codes_each else set()
    for code in partial:
        having = [runs[k].entry for k, c in zip(ids, codes_each) if code in c]
        lacking = [runs[k].entry for k, c in zip(ids, codes_each) if code not in c]
        where[code] = f"{where[code]}; holds in the run of {having[0]} but not in that of {lacking[0]}, which also runs this file"
    return Coverage(codes, frozenset((maybe_all | partial) - codes), where)


def combined(runs: list[scope.Run], per_run: list[dict[str, switches.Applied]],
             used: set[str]) -> dict[str, switches.Applied]:
    """One table for the whole code base: a fix counts (condition None) only when it holds in
    every run; otherwise it says in which runs it holds."""
    if not runs:
        return switches.applied([], used)
    out: dict[str, switches.Applied] = {}
    for code in sorted({c for a in per_run for c in a}):  # sorted: a set of strings iterates in hash order
        have = [(r, a[code]) for r, a in zip(runs, per_run) if code in a]
        first = have[0][1]
        if len(have) == len(runs) and all(a.condition is None for _, a in have):
            out[code] = first
            continue
        sure = [r.entry for r, a in have if a.condition is None]
        if first.condition is None and sure:
            more = f" and {len(sure) - 1} more" if len(sure) > 1 else ""
            first = first._replace(condition=f"it runs only in the run of {sure[0]}{more}")
        out[code] = first
    return out
