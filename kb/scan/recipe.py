"""One recipe for the whole code base: the fewest fixes that cover every finding, in order.

The same rule as a single op's recipe (docs/api.md): fewest codes, ties broken by the
codes' preference, a code also covering what it implies; ordered by the phase in which a
user applies them (environment first, then calls). Fixes the code already applies are not
repeated.
"""

from __future__ import annotations

from typing import NamedTuple

from kb.query import smallest_cover
from kb.scan.lookup import Finding

class Recipe(NamedTuple):
    framework: str
    version: str
    codes: tuple[str, ...]
    unsolved: tuple[str, ...]  # record ids with no known solution in this version
    raising: tuple[str, ...]  # record ids whose calls raise under a switch the code sets


def recipes(found: list[Finding], solutions: dict, order: tuple[str, ...]) -> list[Recipe]:
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in found:
        groups.setdefault((finding.framework, finding.version), []).append(finding)
    out = []
    for (framework, version), group in sorted(groups.items()):
        needs = sorted({frozenset(f.codes) for f in group if f.kind == "nondeterministic" and f.codes}, key=sorted)
        unsolved = sorted({f.record for f in group if f.kind == "nondeterministic" and not f.codes})
        raising = sorted({f.record for f in group if f.kind == "raises"})
        out.append(Recipe(framework, version, smallest_cover(needs, solutions, order), tuple(unsolved), tuple(raising)))
    return out
