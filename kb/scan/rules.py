"""The records' `scan:` blocks (schema.ScanRules, compiled by kb/compile.py) as the scanner reads them.

A scan rule lives in its record, beside the `calls:` it refines, so a misspelt parameter or
resolver name fails `kb validate` (KB023) instead of silently switching the rule off. This module
turns the compiled blocks into one `Rules` per record, and the code rules the records name
(kb/scan/resolvers.py) into `op -> resolver names`, which the resolver runs on each call of the op.
"""

from __future__ import annotations

from typing import NamedTuple


class RuledOut(NamedTuple):
    """A literal value of `parameter` that rules the record out (for `ops`, or every op when empty)."""

    parameter: str
    values: tuple
    why: str
    ops: tuple[str, ...]


class OnlyIf(NamedTuple):
    """A value of `parameter` that leaves the record depending on `depends_on`, unless a parameter of
    `unless` is given."""

    parameter: str
    values: tuple
    depends_on: str
    unless: tuple[str, ...]
    ops: tuple[str, ...]


class UnknownShape(NamedTuple):
    """A shape fact the code rarely shows: unknown, the call is listed at `level` with `why`."""

    fact: str
    at_least: int
    why: str
    level: str  # "note" | "possible"


class Rules(NamedTuple):
    """One record's scan rules."""

    ruled_out: tuple[RuledOut, ...] = ()
    only_if: tuple[OnlyIf, ...] = ()
    needs_word: tuple[str, ...] = ()
    unknown_shape: UnknownShape | None = None
    data_note: str | None = None
    resolvers: tuple[str, ...] = ()
    unique_index: str | None = None


NONE = Rules()
_MEMO: dict[int, tuple[dict, dict[str, Rules], dict[str, tuple[str, ...]], dict[str, str]]] = {}


def _compiled(idx: dict) -> tuple[dict[str, Rules], dict[str, tuple[str, ...]], dict[str, str]]:
    sources = idx["sources"]
    found = _MEMO.get(id(sources))
    if found is not None and found[0] is sources:
        return found[1], found[2], found[3]
    rules: dict[str, Rules] = {}
    for rid, source in sources.items():
        block = source.get("scan")
        if not block:
            continue
        shape = block.get("unknown_shape")
        rules[rid] = Rules(
            tuple(RuledOut(*r) for r in block.get("ruled_out", ())),
            tuple(OnlyIf(*r) for r in block.get("only_if", ())),
            tuple(block.get("needs_word", ())),
            UnknownShape(*shape) if shape else None,
            block.get("data_note"),
            tuple(block.get("resolvers", ())),
            block.get("unique_index"),
        )
    by_op: dict[str, list[str]] = {}
    index_of: dict[str, str] = {}
    for table in idx["names"].values():
        for name, ids in table.items():
            for rid in ids:
                for resolver in rules.get(rid, NONE).resolvers:
                    if resolver not in by_op.setdefault(name, []):
                        by_op[name].append(resolver)
                unique = rules.get(rid, NONE).unique_index
                if unique:
                    index_of.setdefault(name, unique)
    resolvers = {name: tuple(sorted(found)) for name, found in by_op.items()}
    _MEMO.clear()
    _MEMO[id(sources)] = (sources, rules, resolvers, index_of)
    return rules, resolvers, index_of


def of(idx: dict) -> dict[str, Rules]:
    """Record id -> its scan rules (records without a `scan:` block are left out)."""
    return _compiled(idx)[0]


def resolvers_by_op(idx: dict) -> dict[str, tuple[str, ...]]:
    """Op name (as the index's name tables spell it, aliases included) -> the code rules that the
    records of that op name, which the resolver runs on each of its calls."""
    return _compiled(idx)[1]


def index_parameters(idx: dict) -> dict[str, str]:
    """Op name -> the parameter holding the indices a record of it needs to repeat (`unique_index`)."""
    return _compiled(idx)[2]


def applies_to(rule: RuledOut | OnlyIf, op: str) -> bool:
    return not rule.ops or op in rule.ops
