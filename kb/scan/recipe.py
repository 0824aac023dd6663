"""One recipe for the whole code base: the fewest fixes that cover every finding, in order.

The same rule as a single op's recipe (docs/api.md): fewest codes, ties broken by the
codes' preference, a code also covering what it implies; ordered by the phase in which a
user applies them (environment first, then calls). Fixes the code already applies are not
repeated.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

from kb.scan.lookup import Finding

MAX_CODES = 12  # exhaustive search over at most this many candidate codes (2^12 subsets)


class Recipe(NamedTuple):
    framework: str
    version: str
    codes: tuple[str, ...]
    unsolved: tuple[str, ...]  # record ids with no known solution in this version
    raising: tuple[str, ...]  # record ids whose calls raise under a switch the code sets


def _cover(needs: list[frozenset[str]], solutions: dict, order: tuple[str, ...]) -> tuple[str, ...]:
    codes = sorted(set().union(*needs)) if needs else []
    if len(codes) > MAX_CODES:  # greedy beyond the exhaustive bound: most needs covered first
        chosen: list[str] = []
        left = list(needs)
        while left:
            best = max(codes, key=lambda c: (sum(1 for n in left if c in n or n & set(solutions[c]["implies"])),
                                             -solutions[c]["preference"]))
            chosen.append(best)
            covered = {best, *solutions[best]["implies"]}
            left = [n for n in left if not n & covered]
        return tuple(sorted(chosen, key=order.index))
    for size in range(len(codes) + 1):
        best = None
        for combo in combinations(codes, size):
            covered = set(combo)
            for code in combo:
                covered.update(solutions[code]["implies"])
            if all(need & covered for need in needs):
                rank = (sum(solutions[c]["preference"] for c in combo), combo)
                best = rank if best is None or rank < best else best
        if best is not None:
            return tuple(sorted(best[1], key=order.index))
    return ()


def recipes(found: list[Finding], solutions: dict, order: tuple[str, ...]) -> list[Recipe]:
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in found:
        groups.setdefault((finding.framework, finding.version), []).append(finding)
    out = []
    for (framework, version), group in sorted(groups.items()):
        needs = sorted({frozenset(f.codes) for f in group if f.kind == "nondeterministic" and f.codes}, key=sorted)
        unsolved = sorted({f.record for f in group if f.kind == "nondeterministic" and not f.codes})
        raising = sorted({f.record for f in group if f.kind == "raises"})
        out.append(Recipe(framework, version, _cover(needs, solutions, order), tuple(unsolved), tuple(raising)))
    return out
