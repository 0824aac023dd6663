"""KB023: a record's `scan:` rules name its own ops, parameters those ops have, and code rules that exist.

`scan:` (schema.ScanRules, docs/scan.md) tells `kb scan` what a literal argument rules out, what
leaves a call possible, and which code rules (kb/scan/resolvers.py) can rule the record out. A
misspelt parameter or rule name would not fail anything at scan time: the rule would simply never
fire. So each parameter must be a call fact or a parameter of every op the rule covers (by the
op's signature in data/api/<framework>.signatures.txt; an op the inventory lacks is not checked; `unique_index`
of at least one op, since the scan reads it only where a call's op takes it),
a value must be one of the parameter's closed set of values where the inventory has one, each
rule's `ops:` must be the record's own, and each resolver name one of schema.SCAN_RESOLVERS.
"""

from __future__ import annotations

from collections.abc import Sequence

from kb import signatures
from kb.catalog import Catalog
from kb.schema import CALL_FACTS, SCAN_RESOLVERS, ScanOnlyIf, ScanRuledOut

CODE = "KB023"
TITLE = "scan: a record's scan rules name its own ops, parameters those ops have (or a call fact), and known code rules"


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        rules = record.scan
        if rules is None:
            continue
        doc = catalog.documents[path]
        table = signatures.table(record.framework, str(catalog.root))
        everything = [*record.ops, *record.aliases]

        def report(loc: tuple, message: str, hint: str) -> None:
            catalog.report(path, doc.line_of(("scan", *loc)), CODE, message, hint)

        def parameter(loc: tuple, name: str, ops: list[str], values: list | None = None) -> None:
            if name in CALL_FACTS:
                return
            for op in ops:
                fields = table.get(op)
                if fields is None:
                    continue
                params = signatures.parse(fields)
                known = signatures.lacks(params, name)
                if known is not None:
                    report(loc, f"{op} has no parameter {name!r} (its parameters: {known})",
                           "use the op's own parameter name or a call fact, or list the ops the rule is about under its ops:")
                    return
                allowed = params.choices.get(name)
                stray = [v for v in values or () if allowed and v is not None and v not in allowed]
                if stray:
                    report(loc, f"{op}: {name}={stray[0]!r} is not one of its values ({', '.join(allowed or ())})",
                           "a value the op never takes can never rule a call out: fix the spelling")
                    return

        listed: tuple[tuple[str, Sequence[ScanRuledOut | ScanOnlyIf]], ...] = (
            ("ruled_out", rules.ruled_out), ("only_if", rules.only_if))
        for kind, items in listed:
            for i, rule in enumerate(items):
                for j, op in enumerate(rule.ops):
                    if op not in everything:
                        report((kind, i, "ops", j), f"scan.{kind}[{i}] names {op!r}, which is not one of this record's ops",
                               "a rule narrows the record's own ops: fix the name or add the op to ops:")
                covered = list(rule.ops) or everything
                parameter((kind, i, "parameter"), rule.parameter, covered, list(rule.values))
                for j, other in enumerate(getattr(rule, "unless", ())):
                    parameter((kind, i, "unless", j), other, covered)
        for i, name in enumerate(rules.resolvers):
            if name not in SCAN_RESOLVERS:
                report(("resolvers", i), f"scan.resolvers names {name!r}, which is no code rule of kb scan",
                       "one of: " + ", ".join(SCAN_RESOLVERS))
        if rules.unique_index is not None:  # the ops that take it (jnp.take's indices, not lax.gather's start_indices)
            taking = [op for op in everything if table.get(op) is not None
                      and signatures.lacks(signatures.parse(table[op]), rules.unique_index) is None]
            parameter(("unique_index",), rules.unique_index, taking or everything)
        if ("unique-indices" in rules.resolvers) != (rules.unique_index is not None):
            report(("resolvers",) if rules.resolvers else ("unique_index",),
                   "the unique-indices rule and scan.unique_index go together",
                   "name the parameter that holds the indices under unique_index: and the rule under resolvers:")
