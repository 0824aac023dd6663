"""KB017: a record's ranges disagree with the static evidence read from the released wheels.

A record that names its signals (`verify.alerts`) says, per range, whether the switch makes
the op raise. The wheels of every release read (`kb verify --static`) hold the code's
answer: a range that raises where no claimed signal is in the release, or that does not
raise where one is, is wrong or needs a dispute. The evidence is the reference; fix the
range (cite the evidence file) or, where the evidence cannot decide, move the alert claim.
A malformed static evidence file is a KB002 error.
"""

from __future__ import annotations

from kb.catalog import Catalog

CODE = "KB017"
TITLE = "static: a record's ranges agree with the alerts read from each released wheel (kb verify --static)"


def check(catalog: Catalog) -> None:
    from kb.verify.static.merge import disagreements, releases_for, static_of

    for path, problem in static_of(catalog)[1]:
        catalog.report(path, 1, "KB002", f"static evidence: {problem}",
                       "static evidence is written by `kb verify --static`; delete the file and read the release again")
    for path, record in catalog.sources.items():
        found = disagreements(record, releases_for(catalog, record.framework))
        if not found:
            continue
        doc = catalog.documents.get(path)
        line = doc.line_of(("verify", "alerts")) if doc else 1
        for release, why in found:
            catalog.report(path, line, CODE, f"{record.id}: {why} ({release.file})",
                           "fix the range to follow the evidence file, or drop the alert from verify.alerts "
                           "when it is not this op's")
