"""KB018: a signal read from a released wheel (an alert or a raising check) that no record claims.

Every refusal the framework's code holds is a known non-deterministic op; a signal that no
record's `verify.alerts` names is a missing record (or a record that forgot to claim it).
One finding per signal, naming the releases that hold it.
"""

from __future__ import annotations

from kb.catalog import Catalog

CODE = "KB018"
TITLE = "static: every alert read from a released wheel is claimed by a record's verify.alerts"

def check(catalog: Catalog) -> None:
    from kb.verify.static.merge import UNCLAIMED_FRAMEWORKS, unclaimed

    for framework in UNCLAIMED_FRAMEWORKS:
        for name, releases in sorted(unclaimed(catalog, framework).items()):
            first, last = releases[0], releases[-1]
            span = first.release if first is last else f"{first.release} .. {last.release} ({len(releases)} releases)"
            catalog.report(
                catalog.root / last.file, 1, CODE,
                f"{framework}: {name!r} is in the wheels of {span}, and no record claims it",
                "add it to the verify.alerts of the record it belongs to, or write the missing record",
            )
