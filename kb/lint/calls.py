"""KB016: a record's call conditions name parameters its ops really have.

`calls:` and a range's `when:` say which calls a record applies to (docs/calls.md). A
misspelt parameter (`mdoe: [bilinear]`) would make the condition undecidable for every
call, and a parameter of another op would never be given: both silently change answers.
Each key must be a call fact (kb/calls.py FACTS), or a parameter (or `<parameter>.len`, a sequence parameter's length) of every op the condition
covers, by the op's signature in data/api/<framework>.signatures.txt (an op
whose signature the inventory lacks cannot be checked and is not reported).
"""

from __future__ import annotations

from kb import signatures
from kb.calls import arg_fact, base_of
from kb.catalog import Catalog
from kb.calls import FACTS as CALL_FACTS

CODE = "KB016"
TITLE = f"calls: call conditions name the record's own ops and parameters those ops have (or a call fact: {', '.join(CALL_FACTS)})"


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        table = signatures.table(record.framework, str(catalog.root))
        everything = [*record.ops, *record.aliases]
        for i, pattern in enumerate(record.calls):
            for j, op in enumerate(pattern.ops):
                if op not in everything:
                    catalog.report(
                        path, doc.line_of(("calls", i, "ops", j)), CODE,
                        f"calls[{i}] names {op!r}, which is not one of this record's ops or aliases",
                        "a pattern narrows the record's own ops: add the op to ops: or fix the name",
                    )
        places = [(("calls", i, "when"), pattern.ops or everything, pattern.when) for i, pattern in enumerate(record.calls)]
        places += [(("status", i, "when"), everything, r.when) for i, r in enumerate(record.status) if r.when]
        for loc, ops, when in places:
            for key in when:
                if key in CALL_FACTS or ((fact := arg_fact(key)) is not None and fact[0] == "input"):
                    continue
                for op in ops:
                    fields = table.get(op)
                    if fields is None:
                        continue
                    # `pad` for pad.len, `targets` for targets.dtype
                    known = signatures.lacks(signatures.parse(fields), base_of(key))
                    if known is None:
                        continue
                    catalog.report(
                        path, doc.line_of((*loc, key)), CODE,
                        f"{op} has no parameter {key!r} (its parameters: {known})",
                        f"use the op's own parameter name, a call fact ({', '.join(CALL_FACTS)}), "
                        "or list the ops this condition is about under the pattern's ops:",
                    )
