"""KB020: a range's `switch:` agrees with its solutions: the switch is never offered where it does not fix.

`switch: silent` says the framework's determinism switch (kb/schema.py SWITCHES: PT_DET,
XLA_DET, EOD, ...) runs without an error and the results still differ. An answer built from
such a range must never offer the switch as the fix, so the range may not list a switch code
among its solutions; what it lists instead is a replacement a run verified (a practice code),
or nothing (NS: none known). `switch: fixes` is the opposite claim and needs a switch code
among the solutions. Disputed statuses are held to the same rule.
"""

from __future__ import annotations

from kb.catalog import Catalog
from kb.schema import SWITCHES, Range

CODE = "KB020"
TITLE = "switch: a range with `switch: silent` lists no determinism-switch code (PT_DET, XLA_DET, ...) among its solutions; `switch: fixes` lists one"


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        codes = SWITCHES.get(record.framework, ())
        places: list[tuple[tuple[str | int, ...], Range]] = [(("status", i), r) for i, r in enumerate(record.status)]
        places += [(("distributions", name, i), r) for name, rs in record.distributions.items() for i, r in enumerate(rs)]
        places += [(("disputes", d, "status", i), r) for d, dispute in enumerate(record.disputes)
                   for i, r in enumerate(dispute.status)]
        for loc, item in places:
            listed = [c for c in item.solutions if c in codes]
            if item.switch == "silent" and listed:
                catalog.report(
                    path, doc.line_of((*loc, "solutions")), CODE,
                    f"{record.id} {item.versions}: switch: silent, yet solutions list {', '.join(listed)}, the switch "
                    "that does not fix this source",
                    "list only a replacement a run verified (a practice code in data/solutions.yaml), or no solution "
                    "(NS: none known); or, if the switch does fix it, say switch: fixes",
                )
            if item.switch == "fixes" and not listed:
                catalog.report(
                    path, doc.line_of((*loc, "switch")), CODE,
                    f"{record.id} {item.versions}: switch: fixes, yet no switch code "
                    f"({', '.join(codes) or 'this framework has none'}) is among the solutions",
                    "add the switch's code to solutions, or drop switch: (it is derived from the solutions)",
                )
