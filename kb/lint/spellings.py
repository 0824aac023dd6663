"""KB022: a record names every public spelling of its kernel that the signature inventory lists.

The same kernel is reached through several names: a function and its Tensor method
(`torch.median`, `torch.Tensor.median`), the in-place and out-of-place method
(`torch.Tensor.index_add_`, `torch.Tensor.index_add`), and a module and the functional op
its forward() calls (`torch.nn.ReflectionPad1d` -> `torch.nn.functional.pad`, the `>` field
of data/api/<framework>.signatures.txt). A record that names one spelling and not another
answers the other "no known source", the way F.pad(mode='reflect') was answered
deterministic while ReflectionPad1d's record said it raises. For each op of a record (its
`ops` and `aliases`), every spelling of that family the inventory lists must be named too,
with a call condition where the spelling reaches the kernel only for some arguments (F.pad:
`mode`, `pad.len`, `input.ndim`). A spelling is excused when its signature lacks a parameter
the record's conditions use (`torch.scatter` does not list `reduce`, so a record about
`Tensor.scatter_(reduce=...)` cannot be stated for it), and a functional op is not asked of
a record whose module has no call condition naming it: the module's record then claims every
call of the module, and the lint asks for `ops:` + `calls:` on the functional op.
"""

from __future__ import annotations

from kb import signatures
from kb.catalog import Catalog

CODE = "KB022"
TITLE = ("spellings: a record names every spelling of its kernel the signature inventory lists (function, "
         "Tensor method, in-place and out-of-place, a module and the functional op it calls)")

FAMILIES = {"pytorch": ("torch.", "torch.Tensor.")}
"""Where a framework's function and method spellings of one op live; for other frameworks only
the inventory's `>` fields (a layer and the op it calls) make a family."""
NOT_SAME: dict[tuple[str, str], str] = {
    ("torch.Tensor.resize_", "torch.Tensor.resize"): "the deprecated Tensor.resize is autograd's Resize function, "
    "a view of a copy (torch/autograd/_functions/tensor.py), not the resize_ kernel",
}
"""Name pairs that look like spellings of one kernel and are not, each with the reason read in
the framework's code."""


def family(op: str, table: dict[str, tuple[str, ...]], framework: str) -> list[str]:
    """The other spellings of `op` the inventory lists: function, method, in-place method, and
    the functional op a module forwards to."""
    spaces = FAMILIES.get(framework, ())
    out: list[str] = []
    fields = table.get(op)
    if fields is not None:
        out.extend(f for f in signatures.parse(fields).forwards if f in table)
    if not spaces:
        return out
    short = None
    for space in sorted(spaces, key=len, reverse=True):
        rest = op[len(space):]
        if op.startswith(space) and rest and "." not in rest:
            short = rest.rstrip("_") if not rest.startswith("_") else None
            break
    if short:
        for name in (f"{spaces[0]}{short}", f"{spaces[1]}{short}", f"{spaces[1]}{short}_"):
            if name != op and name in table:
                out.append(name)
    return list(dict.fromkeys(out))


def _keys(record) -> set[str]:
    """Parameters the record's conditions use (facts and lengths excluded)."""
    keys = {key for pattern in record.calls for key in pattern.when}
    keys |= {key for item in record.status if item.when for key in item.when}
    return {k for k in keys if "." not in k}


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        table = signatures.table(record.framework, str(catalog.root))
        if not table:
            continue
        named = {*record.ops, *record.aliases}
        used = _keys(record)
        for i, op in enumerate(record.ops):
            for other in family(op, table, record.framework):
                if other in named or (op, other) in NOT_SAME:
                    continue
                params = signatures.parse(table[other])
                if not signatures.open_ended(params) and not used <= set(signatures.names(params)):
                    continue  # that spelling cannot take the call the record is about
                catalog.report(
                    path, doc.line_of(("ops", i)), CODE,
                    f"{record.id} names {op} but not {other}, which the signature inventory lists as another "
                    "spelling of the same kernel",
                    f"add {other} to ops: (with a calls: pattern naming it where it reaches this kernel only for some "
                    "arguments), or, if it does not reach this kernel, say so in notes: and list it under another record",
                )
