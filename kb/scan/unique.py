"""Indices that never repeat (Context.is_unique), for the records whose nondeterminism needs two writes or reads of
one element: a scatter at repeated indices, the backward of a gather or an embedding.

A permutation or a range never repeats a value: `torch.arange`, `torch.randperm`, an argsort, `torch.unique`, the
sorting permutation a sort hands back second (`_, order = torch.sort(lengths)`), a list of a range's values
(`torch.LongTensor([i for i in range(n - 1, -1, -1)])`, GraphRNN's reversal), the coordinates of a mask, a literal
list of distinct ints; and what only moves, casts or reshapes such indices keeps them so.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from kb.scan import counts, tfcompat
from kb.scan.nodes import iwalk
from kb.scan.syntax import plain_literal

# what makes indices that never repeat, and the methods that keep them so (not expand, repeat, broadcasting)
_UNIQUE_MAKERS = frozenset({"torch.arange", "torch.randperm", "torch.argsort", "torch.unique", "jax.numpy.arange", "jax.numpy.argsort", "tf.range"})
# Of one argument, the coordinates of a mask's true elements: each once (rows of a 2-D result).
_NONZERO = frozenset({"torch.nonzero", "tf.where", "tf.compat.v1.where"})
_UNIQUE_CASTS = frozenset({"tf.cast", "tf.to_int64", "tf.to_int32", "tf.compat.v1.to_int64", "tf.compat.v1.to_int32",
                           "tf.expand_dims", *counts.SHUFFLES})  # (an axis of one: `[[i], [j]]`, each row one index)
_FLATTENING = frozenset({"view", "reshape", "flatten"})  # a 2-D nonzero's rows made one list: coordinates repeat
_UNIQUE_KEEPING = frozenset({"to", "cuda", "cpu", "long", "int", "view", "reshape", "flatten", "contiguous", "clone",
                             "detach", "flip", "squeeze", "unsqueeze", "type"})
# legacy typed constructors of one list (`torch.LongTensor(idx)` holds idx's values), and the old autograd wrapper,
# which holds its tensor's (`Variable(torch.LongTensor(idx))`)
_TYPED_CONSTRUCTORS = frozenset({*(f"torch.{where}{kind}Tensor" for where in ("", "cuda.") for kind in ("Long", "Int")),
                                 "torch.autograd.Variable", "torch.autograd.variable.Variable"})
# what sorts and hands back the sorting permutation second (`values, indices = torch.sort(x, 0)`, `x.sort()`), or
# the first k of it (`torch.topk`: k distinct positions of each row)
_SORTS = frozenset({"torch.sort", "torch.topk"})


def single_index_row(node: ast.AST) -> bool:
    """`[[i]]` or `[[i, j]]`: a literal list of one index row whose entries are not themselves lists, the
    indices of a scatter that writes one slice (simclr's `tf.scatter_nd(indices=[[replica_id]], updates=[t])`
    gathering replicas). One row cannot repeat; `[idx]` is left out, as idx may hold many rows."""
    if not (isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) == 1):
        return False
    row = node.elts[0]
    return isinstance(row, (ast.List, ast.Tuple)) and bool(row.elts) \
        and not any(isinstance(e, (ast.List, ast.Tuple, ast.Starred, ast.ListComp, ast.GeneratorExp)) for e in row.elts)


def is_unique(ctx: Any, node: ast.AST, fn: ast.AST | None, depth: int = 4, rows: bool = False,
              seen: frozenset[str] = frozenset()) -> bool:
    """Indices that never repeat: `torch.arange`, `torch.randperm`, an `argsort`, `torch.unique`, a literal
    list of distinct ints (also in `torch.tensor([...])`), the coordinates of a mask (`mask.nonzero()`,
    `torch.nonzero(mask)`, `tf.where(mask)`), what keeps them (`.to()`, `.view()`, a slice, `.flip()`,
    `tf.cast`...), a literal single index row (`[[replica_id]]`), or a name every assignment in the function
    makes so. `rows`: unique within each row is
    enough (a gather along the last dimension), so a slice of rows (`t[:, :k]` of a row-wise `argsort`) keeps
    it; an embedding or a scatter reads the whole tensor, where rows of permutations repeat each other."""
    if isinstance(node, ast.Name) and node.id in seen:
        return True  # `idx = torch.LongTensor(idx)`: unique if the name's other bindings are
    if depth <= 0:
        return False
    if single_index_row(node) or (isinstance(node, ast.Constant) and type(node.value) is int):  # one index
        return True
    if isinstance(node, ast.ListComp):  # `[i for i in range(n - 1, -1, -1)]`: a range's values, each once
        return _range_values(node)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [plain_literal(e) for e in node.elts]
        return bool(items) and all(type(v) is int for v in items) and len(set(items)) == len(items)
    if isinstance(node, ast.Subscript):
        slices = node.slice.elts if rows and isinstance(node.slice, ast.Tuple) else [node.slice]
        return all(isinstance(s, ast.Slice) for s in slices) and is_unique(ctx, node.value, fn, depth - 1, rows, seen)
    if isinstance(node, ast.Name):
        values = ctx.assigned_in(fn).get(node.id, []) if fn is not None else []
        if not values:  # `_, order = torch.sort(lengths, 0, descending=True)`: a permutation, as an argsort is
            return fn is not None and sort_indices(ctx, fn, node.id)
        if all(any(isinstance(n, ast.Name) and n.id == node.id for n in iwalk(v)) for v in values):
            return False  # only `idx = idx.cuda()`: what idx held first (a parameter's value) is not shown
        return all(is_unique(ctx, v, fn, depth - 1, rows, seen | {node.id}) for v in values)
    if not isinstance(node, ast.Call):
        return False
    name = _public_tf(ctx.dotted(node.func) or _tf_written(ctx, node.func))
    if name in _UNIQUE_MAKERS or (name in counts.PERMUTATIONS and counts.permutes_a_count(ctx, node, fn)):
        return True
    if (name == "torch.tensor" or name in _UNIQUE_CASTS or name in _TYPED_CONSTRUCTORS) and len(node.args) > counts.PERMUTATIONS.get(name, 0):
        return is_unique(ctx, node.args[counts.PERMUTATIONS.get(name, 0)], fn, depth - 1, rows, seen)
    if name in _NONZERO:
        return len(node.args) == 1 and not node.keywords
    if isinstance(node.func, ast.Attribute) and name is None:
        if node.func.attr in ("argsort", "unique") or (node.func.attr == "nonzero" and not node.args and not node.keywords):
            return True
        if node.func.attr in _UNIQUE_KEEPING:
            inner = node.func.value
            if node.func.attr in _FLATTENING and isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                    and inner.func.attr == "nonzero":
                return False
            return is_unique(ctx, inner, fn, depth - 1, rows, seen)
    return False


_TF_PRIVATE = re.compile(r"^tf\.python\.ops\.[a-z_]+_ops\.(\w+)$")


def _public_tf(name: str | None) -> str | None:
    """TensorFlow's own spelling `from tensorflow.python.ops import array_ops; array_ops.where(...)` (google/seq2seq)
    of a public function (`tf.where`), and TF 1 code's `import tensorflow.compat.v1 as tf` (`tf.range`)."""
    found = _TF_PRIVATE.match(name) if name else None
    if found:
        return f"tf.{found.group(1)}"
    return (tfcompat.tf2_name(name, _UNIQUE_MAKERS) if name and name.startswith("tf.compat.") else None) or name


def sort_indices(ctx: Any, fn: ast.AST, name: str) -> bool:
    """`name` is bound in `fn` only as the indices of a sort (`y_len, sort_index = torch.sort(lengths, 0,
    descending=True)`, snap-stanford/GraphRNN): the sorting permutation, whose values never repeat along the sorted
    dimension, as an argsort's. False when the function binds the name any other way."""
    found = False
    for node in iwalk(fn):
        if isinstance(node, ast.Assign):
            targets: list[ast.expr | None] = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [item.optional_vars for item in node.items]
        else:
            continue
        for target in targets:
            if target is None or not any(isinstance(n, ast.Name) and n.id == name for n in iwalk(target)):
                continue
            if not (isinstance(node, ast.Assign) and _sorted_second(ctx, target, node.value, name)):
                return False
            found = True
    return found


def _sorted_second(ctx: Any, target: ast.expr, value: ast.expr, name: str) -> bool:
    """`values, name = torch.sort(...)` or `torch.topk(...)` (or the method of a receiver not known to be another
    library's)."""
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)
            and target.elts[1].id == name and isinstance(value, ast.Call)):
        return False
    func = value.func
    if _tf_written(ctx, func) in _TF_TOP_K:  # TensorFlow's top_k of a flattened tensor (google-research/rigl's mask
        flat = value.args[0] if value.args else None  # updates: `_, idx = tf.math.top_k(tf.reshape(s, [-1]), k=n)`)
        return isinstance(flat, ast.Call) and _tf_written(ctx, flat.func) == "tf.reshape" and len(flat.args) == 2 \
            and _literal(flat.args[1]) in ([-1], (-1,))  # 1-D: k distinct positions (of each row, if more)
    return ctx.dotted(func) in _SORTS or (isinstance(func, ast.Attribute) and func.attr in ("sort", "topk")
                                          and ctx.dotted(func) is None)


_TF_TOP_K = frozenset({"tf.math.top_k", "tf.nn.top_k"})


def _literal(node: ast.expr) -> object:
    """A literal's value (a negative number too, which plain_literal leaves unread), or None."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _tf_written(ctx: Any, func: ast.expr) -> str | None:
    """A TensorFlow function as the imports spell it, where the knowledge base names no op of it (`tf.expand_dims`)."""
    name = ctx.written(func)
    return name if name is not None and name.startswith("tf.") else None


def _range_values(node: ast.ListComp) -> bool:
    """`[i for i in range(...)]`: one loop over a range, no condition, each element the loop's own variable."""
    if len(node.generators) != 1:
        return False
    loop = node.generators[0]
    return not loop.ifs and not loop.is_async and isinstance(loop.target, ast.Name) and isinstance(node.elt, ast.Name) \
        and node.elt.id == loop.target.id and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) \
        and loop.iter.func.id == "range"
