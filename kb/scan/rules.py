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


def parse(block: dict) -> Rules:
    """A record's compiled `scan:` block (kb/compile.py) as Rules."""
    shape = block.get("unknown_shape")
    return Rules(
        tuple(RuledOut(*r) for r in block.get("ruled_out", ())),
        tuple(OnlyIf(*r) for r in block.get("only_if", ())),
        tuple(block.get("needs_word", ())),
        UnknownShape(*shape) if shape else None,
        block.get("data_note"),
        tuple(block.get("resolvers", ())),
        block.get("unique_index"),
    )


def _compiled(idx: dict) -> tuple[dict[str, Rules], dict[str, tuple[str, ...]], dict[str, str]]:
    sources = idx["sources"]
    found = _MEMO.get(id(sources))
    if found is not None and found[0] is sources:
        return found[1], found[2], found[3]
    rules = {rid: parse(source["scan"]) for rid, source in sources.items() if source.get("scan")}
    by_op: dict[str, list[str]] = {}
    index_of: dict[str, str] = {}
    for table in idx["names"].values():
        for op, ids in table.items():
            # tf.keras is Keras 3 from 2.16, and a standalone Keras call is answered by tf.keras's TensorFlow records
            # (kb/scan/run.py's _answered_as) with the rules the visitor ran for it: either spelling runs both's rules
            spellings = (op, "tf." + op) if op.startswith("keras.") else (op, op[3:]) if op.startswith("tf.keras.") else (op,)
            for rid in ids:
                rule = rules.get(rid, NONE)
                for name in spellings:
                    for resolver in rule.resolvers:
                        if resolver not in by_op.setdefault(name, []):
                            by_op[name].append(resolver)
                    if rule.unique_index:
                        index_of.setdefault(name, rule.unique_index)
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


class CodeRules(NamedTuple):
    """What the resolver needs of the records, per op name (shared with its worker processes)."""

    by_op: dict[str, tuple[str, ...]]  # op -> the code rules its records name
    index_param: dict[str, str]  # op -> the parameter holding the indices its records need to repeat
    params: dict[str, tuple[tuple[str, object], ...]]  # op with code rules -> its parameters as a call passes them
    shape_ops: frozenset[str] = frozenset()  # ops whose records need a shape the code rarely shows (scan.unknown_shape)
    backward_ops: frozenset[str] = frozenset()  # ops with a record of the backward pass (resolvers.no_input_requires_grad)


_KERAS = ("tf.keras.", "keras.")


def _signature(idx: dict, op: str) -> tuple | None:
    from kb import signatures

    names = [op] + (["keras." + op[len(_KERAS[0]):]] if op.startswith(_KERAS[0]) else [])
    for name in names:
        for table in (idx.get("params") or {}).values():
            if name in table:
                return signatures.parse(table[name])
    framework = next((fw for fw, prefixes in idx.get("prefixes", {}).items() if op.startswith(tuple(prefixes))), None)
    fields = signatures.table(framework).get(op) if framework else None
    return signatures.parse(fields) if fields is not None else None


def code_rules(idx: dict) -> CodeRules:
    """The code rules of every op, where each op's call passes the indices its records need to repeat
    (`scan.unique_index`), and the parameters of the ops that have code rules (in the order a call passes
    them: a method's receiver is not an argument)."""
    _, by_op, index_of = _compiled(idx)
    params: dict[str, tuple[tuple[str, object], ...]] = {}
    for op in by_op:
        found = _signature(idx, op)
        if found is None:
            continue
        listed = tuple((name, default) for name, default in found if not name.startswith("*"))
        owner = op.rsplit(".", 2)[-2] if op.count(".") >= 2 else ""
        if (owner[:1].isupper() or owner == "ndarray") and listed and listed[0][0] in ("input", "self"):
            listed = listed[1:]
        params[op] = listed
    shaped = {rid for rid, rule in of(idx).items() if rule.unknown_shape is not None}
    shape_ops = frozenset(op for table in idx["names"].values() for op, ids in table.items() if shaped & set(ids))
    backward = {rid for rid, source in idx["sources"].items() if source.get("pass") == "backward"}
    backward_ops = frozenset(op for table in idx["names"].values() for op, ids in table.items() if backward & set(ids))
    return CodeRules(by_op, index_of, params, shape_ops, backward_ops)


def applies_to(rule: RuledOut | OnlyIf, op: str) -> bool:
    """Whether a rule narrowed to some ops covers `op` (`tf.keras.X` is the Keras op `keras.X` it answers for)."""
    return not rule.ops or op in rule.ops or (op.startswith("tf.keras.") and op[3:] in rule.ops)
