"""Whether an expression is visibly a `tf.data` dataset, or arrays held in memory, for `Model.fit`
(tf.data-loader-parallelism).

Keras runs `fit`'s `workers` threads or processes (Keras 2) and a `PyDataset`'s workers (Keras 3) only over
Python-side data: a generator, a `keras.utils.Sequence` / `PyDataset`. A `tf.data.Dataset` given to `fit` is
iterated by tf.data itself (Keras's TFDatasetAdapter): the record's condition, a stateful Python loader
replicated into parallel workers, cannot hold for it, and its own parallel `map`s are sites of their own.

A dataset is read where the code shows it: a `tf.data.*` or `tensorflow_datasets` call; a call of a method
only a tf.data dataset (or a tfds builder's `as_dataset`, a strategy's `experimental_distribute_dataset`)
has, whose result is again one (`ds.map(f).batch(32).prefetch(1)`: a generator or a Sequence has none of
these); a name every assignment of which (in the function, else the module) is one; a call of a function of
the code base (this file or a module it imports) every `return` of which is one. Arrays in memory (a dict,
list or tuple display or comprehension, a NumPy or pandas call, a column's `.values`) are no generator or
Sequence either: Keras slices them itself.
"""

from __future__ import annotations

import ast

from kb.scan import follow
from kb.scan.context import Context
from kb.scan.nodes import iwalk, own
from kb.scan.prepare import local_module

_METHODS = frozenset({"map", "batch", "padded_batch", "ragged_batch", "prefetch", "shuffle", "repeat", "cache", "take",
                      "skip", "unbatch", "with_options", "interleave", "flat_map", "shard", "rebatch", "zip",
                      "concatenate", "as_dataset", "experimental_distribute_dataset",
                      "distribute_datasets_from_function", "bucket_by_sequence_length"})
_MAKERS = ("tf.data.", "tensorflow.data.", "tensorflow_datasets.", "tfds.")
_DEPTH = 6


def is_dataset(ctx: Context, node: ast.AST | None, scope: ast.AST | None = None, defs: dict | None = None,
               depth: int = _DEPTH) -> bool:
    """The expression is visibly a tf.data dataset (False: it may be anything else, or cannot be read)."""
    if node is None or depth <= 0:
        return False
    foreign = defs is not None  # another module of the code base: its imports are not read
    if isinstance(node, ast.Call):
        func = node.func
        written = ctx.written(func) if not foreign else ast.unparse(func)
        if written is not None and written.startswith(_MAKERS):
            return True
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and not _module(ctx, func.value, foreign):
            return True
        found = _function(ctx, func, defs)
        if found is None:
            return False
        fn, fn_defs = found
        returns = [s for s in own(fn) if isinstance(s, ast.Return)]
        return bool(returns) and all(is_dataset(ctx, r.value, fn, fn_defs if fn_defs is not None else defs, depth - 1)
                                     for r in returns)
    if isinstance(node, ast.Name):
        values = _assigned(ctx, scope, node.id)
        if not values and not foreign and ctx.tree is not None and scope is not ctx.tree:
            values = _assigned(ctx, ctx.tree, node.id)
        return bool(values) and all(is_dataset(ctx, v, scope, defs, depth - 1) for v in values)
    return False


def _module(ctx: Context, node: ast.AST, foreign: bool) -> bool:
    """The receiver is an imported module or a name from one (`np.random.shuffle`, `tf.map_fn`): a function
    of a library, not a dataset's method."""
    if foreign:
        return isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node).split(".")[0] in ("np", "numpy", "tf", "random", "torch", "jnp", "jax")
    return ctx.written(node) is not None


def _function(ctx: Context, func: ast.AST, defs: dict | None) -> tuple[ast.AST, dict | None] | None:
    """A function of the code base a call calls (with its module's definitions when that is another file)."""
    here = defs if defs is not None else {n.name: n for n in (ctx.tree.body if ctx.tree is not None else ())
                                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if isinstance(func, ast.Name) and isinstance(here.get(func.id), (ast.FunctionDef, ast.AsyncFunctionDef)):
        return here[func.id], defs
    if defs is not None:
        return None
    if isinstance(func, ast.Name) and "." in ctx.aliases.get(func.id, ""):
        module, _, name = ctx.aliases[func.id].rpartition(".")
        found = local_module(ctx.filename, module)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        name, found = func.attr, local_module(ctx.filename, ctx.aliases.get(func.value.id, func.value.id))
    else:
        return None
    if found is not None and isinstance(found.get(name), (ast.FunctionDef, ast.AsyncFunctionDef)):
        return found[name], found
    return None


def _assigned(ctx: Context, scope: ast.AST | None, name: str) -> list[ast.expr]:
    if scope is None:
        scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None:
        return []
    values: list[ast.expr] = []
    for sub in iwalk(scope):
        if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in sub.targets):
            values.append(sub.value)
        elif isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)) and any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in iwalk(sub)
                if not isinstance(sub, ast.Assign) or n not in sub.targets):
            return []  # bound another way (unpacked, a loop variable, +=): not read
    return values


_SEQUENCES = ("PyDataset", "Sequence")
_WORKERS_AT = 17  # Keras 2's fit(x, y, ..., max_queue_size, workers, use_multiprocessing): positions 17 and 18


def starts_no_workers(ctx: Context, node: ast.Call) -> bool:
    """`Model.fit` that starts no parallel loader: `workers` not given, 0 or 1, no `use_multiprocessing=True`, and
    no Keras `PyDataset` or `Sequence` class in the file (a PyDataset carries its own `workers`, which Keras 3 reads
    where it is built, not at `fit`).

    Keras 3's `fit` takes no `workers` argument (keras 3.12's trainer), and its generator adapter starts no worker;
    Keras 2 runs a generator or a Sequence through an enqueuer only when `workers > 1 or (workers > 0 and
    use_multiprocessing)` (tf_keras 2.20.1, engine/data_adapter.py), else in the training loop's own thread."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return False
    given = {k.arg: k.value for k in node.keywords}
    for name, at in (("workers", _WORKERS_AT), ("use_multiprocessing", _WORKERS_AT + 1)):
        if len(node.args) > at:
            given[name] = node.args[at]
    workers, processes = given.get("workers"), given.get("use_multiprocessing")
    if workers is not None and not (isinstance(workers, ast.Constant) and workers.value in (0, 1)):
        return False
    if processes is not None and not (isinstance(processes, ast.Constant) and processes.value in (False, None)):
        return False
    return ctx.tree is not None and not any(
        isinstance(n, ast.ClassDef) and any(ast.unparse(b).rpartition(".")[2] in _SEQUENCES for b in n.bases)
        for n in iwalk(ctx.tree))


_STAGES = {"tf.data.Dataset.map": (1, 2), "tf.data.Dataset.interleave": (3, 4)}  # num_parallel_calls, deterministic
_ORDER_OPTIONS = frozenset({"experimental_deterministic", "deterministic"})


def options_facts(ctx: Context, op: str, node: ast.Call) -> tuple:
    """`(("deterministic", False),)` for a parallel map or interleave that gives no `deterministic` argument
    in a function (or module) that applies, with `with_options`, a `tf.data.Options` whose
    `experimental_deterministic` / `deterministic` it sets to False: the argument's default None takes the
    options' value (Dataset.map's docstring), so the stage may yield out of order as `deterministic=False`
    does. Options apply to the whole pipeline, wherever `with_options` stands in it."""
    positions = _STAGES.get(op)
    if positions is None or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return ()
    parallel, ordered = positions
    if any(k.arg == "deterministic" for k in node.keywords) or len(node.args) > ordered:
        return ()
    calls = next((k.value for k in node.keywords if k.arg == "num_parallel_calls"), None)
    if calls is None and len(node.args) > parallel:
        calls = node.args[parallel]
    if calls is None or (isinstance(calls, ast.Constant) and calls.value in (None, 1)):
        return ()
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None:
        return ()
    unordered = applied = False
    for sub in iwalk(scope):
        if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Constant) and sub.value.value is False \
                and any(isinstance(t, ast.Attribute) and t.attr in _ORDER_OPTIONS for t in sub.targets):
            unordered = True
        elif isinstance(sub, ast.Call) and (ctx.written(sub.func) or "").endswith("data.Options") \
                and any(k.arg in _ORDER_OPTIONS and isinstance(k.value, ast.Constant) and k.value.value is False
                        for k in sub.keywords):
            unordered = True
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "with_options":
            applied = True
    return (("deterministic", False),) if unordered and applied else ()


_ARRAY_METHODS = frozenset({"to_numpy", "numpy", "astype", "reshape", "copy"})


def in_memory(ctx: Context, node: ast.AST | None, where: follow.Where | None = None, index: int | None = None,
              depth: int = _DEPTH) -> bool:
    """The expression is visibly arrays held in memory: a dict, list or tuple display or comprehension, a
    NumPy or pandas call, a column's `.values` / `.to_numpy()`, or a name every value of which is one (through
    kb/scan/follow.py: `x, y = make_xy()` takes position 0 of what a function of the file returns)."""
    if node is None or depth <= 0:
        return False
    if where is None:
        where = follow.Where(ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree, follow.top_level(ctx), False)
    if isinstance(node, ast.Name):
        values = follow.values_of(ctx, where, node.id)
        if not values or (index is not None and any(i is not None for _, _, i in values)):
            return False
        return all(in_memory(ctx, v, w, i if index is None else index, depth - 1) for v, w, i in values)
    if index is not None:
        if isinstance(node, (ast.Tuple, ast.List)):
            return index < len(node.elts) and in_memory(ctx, node.elts[index], where, None, depth - 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not where.foreign \
                and isinstance(where.defs.get(node.func.id), (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = where.defs[node.func.id]
            returns = follow.returns(fn)
            return bool(returns) and all(in_memory(ctx, r, follow.Where(fn, where.defs, False), index, depth - 1)
                                         for r in returns)
        return False
    if isinstance(node, (ast.Dict, ast.DictComp, ast.List, ast.ListComp, ast.Tuple)):
        return True
    if isinstance(node, ast.Attribute) and node.attr == "values":
        return True
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in _ARRAY_METHODS:
            return True
        return (ctx.written(node.func) or "").startswith(("numpy.", "pandas."))
    return False
