"""The scanner's code rules, each a small named function registered in one table (`TABLE`).

Most of what a scan rule knows is data in its record (`scan:`, kb/scan/rules.py). What needs to
read code stays code, here, under a name, with a docstring that says what it reads and why:

- `rule`: rules a record out at a call of one of its ops; a record names it in `scan.resolvers`
  (schema.SCAN_RESOLVERS lists the names; lint KB023 checks them). Returns why, or None.
- `module`: the same, at `self.X = <op>(...)` in a module class (the module's own kernel).
- `spelling`: another spelling of a KB op (`F.pad(mode="reflect")` runs ReflectionPad2d).
- `fact`: a call fact the code around a call states (the attention backend a context pins).

docs/scan.md lists the table (kb build renders it from the docstrings' first paragraphs).
Why one module: it is the one table of named code rules that records name and docs/scan.md renders;
each rule is a few lines that state its conclusion and call the module of its topic (values, datasets,
gradient, tfdata, mapped), where the reading of the code lives.

To add a rule: write the function here with `@resolver(name, kind)`, add its name to
schema.SCAN_RESOLVERS if records name it, name it in the records' `scan.resolvers`, and put a
fixture line with its `# expect:` under tests/fixtures/scanrules/.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import NamedTuple

from kb.scan import constants, datasets, dummyinputs, firstlayer, gradient, inputgrads, jaxarrays, jitbody, kernels, mapped, members, nodes, options, placeholders, pyints, quantized, rank, seededinit, slices, tfdata, tfvariables, uniform, values
from kb.scan.context import Context
from kb.scan.prepare import TF_SET_SEED
from kb.scan.syntax import constant_value, hands_on, last_name, one_per_element, plain_literal, self_attribute


class Resolver(NamedTuple):
    name: str
    kind: str  # "rule" | "module" | "spelling" | "fact"
    run: Callable
    doc: str


TABLE: dict[str, Resolver] = {}


def resolver(name: str, kind: str) -> Callable[[Callable], Callable]:
    """Register a code rule under `name` (its docstring is its documentation: required)."""
    def register(fn: Callable) -> Callable:
        doc = (fn.__doc__ or "").strip()
        if not doc:
            raise ValueError(f"resolver {name} needs a docstring")
        if name in TABLE:
            raise ValueError(f"resolver {name} is registered twice")
        TABLE[name] = Resolver(name, kind, fn, " ".join(doc.split("\n\n")[0].split()))
        return fn
    return register


def record_rules() -> tuple[str, ...]:
    """The names records may give in `scan.resolvers` (kinds `rule` and `module`)."""
    return tuple(sorted(n for n, r in TABLE.items() if r.kind in ("rule", "module")))


# --- rules a record names ---------------------------------------------------------------------
_TF_DATA_STAGES = frozenset({"tf.data.Dataset.map", "tf.data.Dataset.interleave"})


@resolver("mapped-function-draws-no-random", "rule")
def mapped_function_draws_no_random(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A `tf.data` map or interleave whose function (a lambda, a function or class of the file and what
    it calls there, a `functools.partial` of one, or one from another module of the code base) visibly
    draws no random numbers: the order the parallel calls finish in changes nothing. A name is the definition
    bound at the call (kb/scan/mapped.py: the def in the call's branch, what `make_parser(size)` returns)."""
    if op not in _TF_DATA_STAGES:
        return None
    given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "map_func"), None)
    bound = mapped.definitions(ctx, given) if given is not None else [None]  # bound at the call (None: not in a function)
    if not any(d is None or ctx.may_draw_randomness(d) for d in (bound if bound is not None else [given])):
        return "the mapped function draws no random numbers"
    return None


@resolver("fit-reads-tf-data", "rule")
def fit_reads_tf_data(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`Model.fit` whose training data (and validation data, if given) is visibly a `tf.data` dataset or arrays
    held in memory (kb/scan/tfdata.py): Keras's `workers` and a `PyDataset`'s workers run only Python
    generators and Sequences; tf.data iterates its own dataset, whose parallel `map`s are sites of their own,
    and Keras slices arrays itself."""
    if not op.endswith(".fit") or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    x = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "x"), None)
    validation = node.args[7] if len(node.args) > 7 else next((k.value for k in node.keywords if k.arg == "validation_data"), None)
    if not _fed(ctx, x) or (validation is not None and not _fed(ctx, validation)):
        return None
    return "fit reads tf.data datasets or arrays in memory, which no Keras worker runs"


@resolver("fit-runs-no-workers", "rule")
def fit_runs_no_workers(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`Model.fit` that asks for no parallel loader (no `workers` above 1, no `use_multiprocessing=True`) in a file
    that defines no Keras `PyDataset` or `Sequence` (kb/scan/tfdata.py): Keras 3's fit has no workers of its own,
    and Keras 2 runs one worker's generator in the training loop's thread."""
    if not op.endswith(".fit") or not tfdata.starts_no_workers(ctx, node):
        return None
    return "fit starts no parallel loader (no workers above 1, no use_multiprocessing)"


@resolver("jit-holds-no-gemm", "rule")
def jit_holds_no_gemm(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`jax.jit` or `jax.pmap` of a function (decorated, a lambda, or one of the file it names) whose every call
    builds, copies, slices or updates arrays, draws random numbers or computes element by element, with no `@`
    (kb/scan/jitbody.py): no GEMM, convolution or float reduction for the autotuner to choose a kernel for."""
    if op not in ("jax.jit", "jax.pmap"):
        return None
    fn = jitbody.function_of(ctx, node, getattr(ctx, "decorated", None) if not node.args else None)
    if not jitbody.library_function(ctx, node) and (fn is None or not jitbody.holds_no_gemm(ctx, fn)):
        return None
    return "the compiled function holds no GEMM, convolution or float reduction: no kernel choice changes its bits"


@resolver("jit-never-runs", "rule")
def jit_never_runs(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`jax.jit(f)` whose result is only traced (`.eval_shape(x)`, `.trace(x)`) or lowered and compiled to read its
    `cost_analysis()` (kb/scan/jitbody.py): no executable runs, so no autotuned kernel reaches a result."""
    if op not in ("jax.jit", "jax.pmap") or not jitbody.never_runs(ctx, node):
        return None
    return "the jitted function is only traced or lowered, never run"


@resolver("in-pallas-kernel", "rule")
def in_pallas_kernel(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A dot, einsum or convolution inside a function the file hands to `pallas_call` as its kernel
    (kb/scan/jitbody.py): Pallas lowers the body itself with the block shapes the code fixes; XLA picks no library
    GEMM for it and autotunes nothing."""
    if not op.startswith("jax.") or not jitbody.in_pallas_kernel(ctx):
        return None
    return "inside a Pallas kernel, which Pallas lowers itself: no XLA library GEMM or autotuning"


@resolver("input-is-a-placeholder", "rule")
def input_is_a_placeholder(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A TensorFlow convolution whose input is visibly a `tf.placeholder` (kb/scan/placeholders.py): data fed by
    the session, for which no gradient is asked, so the graph's backprop-to-data kernel is never run. Likewise a
    Keras convolution that is a model's first layer on its data input (`Conv2D(32, 3)(keras.Input(shape))`, the
    first layer of a `Sequential`, kb/scan/firstlayer.py): the data's gradient is never used. Neither where the
    program differentiates with respect to that input (style transfer) or trains a discriminator."""
    if ".keras.layers." in op or op.startswith("keras.layers."):
        return "the layer is the model's first, on its data input: the gradient passed back to the data is never used" \
            if firstlayer.on_model_input(ctx, node) else None
    if not op.startswith("tf.nn.conv") or inputgrads.only_inputs(ctx.tree, ctx.lines):
        return None
    given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("input", "value")), None)
    if not placeholders.is_placeholder(ctx, given):
        return None
    return "the convolution's input is a placeholder fed with data: no gradient is asked for it"


def _fed(ctx: Context, data: ast.AST | None) -> bool:
    return tfdata.is_dataset(ctx, data) or tfdata.in_memory(ctx, data)


@resolver("dataset-draws-no-random", "rule")
def dataset_draws_no_random(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A DataLoader that does not shuffle (no `shuffle=True`, no sampler) over a dataset that visibly draws no
    random numbers (kb/scan/datasets.py: a dataset class of the code base whose `__getitem__`, and what it
    runs, draws none and calls no transform it was given; a torchvision dataset with deterministic transforms)
    and a collate function that draws none: its workers have no randomness to seed."""
    if not op.endswith(".DataLoader"):
        return None
    return datasets.draws_no_random(ctx, node)


@resolver("counts-of-ones", "rule")
def counts_of_ones(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A segment sum, `scatter_nd`, `index_add` or `scatter_add` whose added values are ones (`ones_like(x)`,
    `ones(...)`, a boolean mask cast to numbers, or a name only so assigned in the function): it counts, and
    counts (below 2**24 even in float32) are exact in any order of addition."""
    return "the added values are ones: counts, exact in any order" if uniform.adds_ones(ctx, op, node) else None


@resolver("constant-summed", "rule")
def constant_summed(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`jax.lax.psum(1, axis)` (the number of shards) or a psum/pmean of ones: the values added are equal
    small integers, so the sum is exact whatever order or hardware (NVLS) adds them."""
    if op.rpartition(".")[2] not in ("psum", "pmean"):
        return None
    return "the summed value is a constant integer (a count): exact in any order" if uniform.sums_constant(ctx, node) else None


@resolver("exact-all-reduce", "rule")
def exact_all_reduce(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`torch.distributed.all_reduce` with an op that adds nothing (`op=ReduceOp.MAX`, `MIN`, `BAND`, `BOR`,
    `BXOR`), or of a tensor visibly of an integer dtype (`torch.tensor([n], dtype=torch.long)`, `.long()`, also
    updated in place by `+=`, which keeps the dtype), or made from Python ints whatever its dtype
    (`torch.as_tensor([num_boxes], dtype=torch.float)` with `num_boxes = sum(len(t) for t in targets)`): what NVLS
    makes differ is the order of the switch's floating-point additions, and a maximum or a sum of whole numbers is
    exact in any order."""
    if op.rpartition(".")[2] != "all_reduce":
        return None
    reduce_op = nodes.call_argument(node, ("op",), 1)
    named = ctx.dotted(reduce_op) if reduce_op is not None else None
    last = (named or (reduce_op.attr if isinstance(reduce_op, ast.Attribute) else "")).rpartition(".")[2]
    if last in _EXACT_REDUCTIONS:
        return f"the reduction is {last}: it adds nothing, exact in any order"
    tensor = nodes.call_argument(node, ("tensor",), 0)
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if tensor is not None and values.integer(ctx, tensor, scope, in_place=True):
        return "the tensor is of an integer dtype: its sum is exact in any order"
    if tensor is not None and values.whole_numbers(ctx, tensor, scope):
        return "the tensor is made from Python ints (a count): a sum of whole numbers is exact in any order"
    return None


_EXACT_REDUCTIONS = frozenset({"MAX", "MIN", "BAND", "BOR", "BXOR"})


@resolver("one-value-written", "rule")
def one_value_written(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`scatter_(dim, index, src)` whose `src` holds one value in every element (`torch.zeros_like(i)`, `ones`, `full`
    with a literal, also converted: `.to(dtype=x.dtype)`): as the record says of a scalar value, every duplicate index
    writes the same value, so no order of the writes changes the result. Also a `src` that is visibly a Python number
    held in a name (`scatter_(1, x, on_value)`, `on_value=1.` a parameter): the scalar form, which no record names,
    with or without `reduce=`."""
    if op.rpartition(".")[2] not in ("scatter", "scatter_"):
        return None
    at = 2 if isinstance(node.func, ast.Attribute) and ctx.dotted(node.func) is None else 3  # a method: no input
    src = nodes.call_argument(node, ("src", "value"), at)
    if src is None:
        return None
    fn = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if uniform.python_number(ctx, src, fn):
        return "src is a Python number: the scalar form, which writes one value from every duplicate index"
    if any(k.arg == "reduce" for k in node.keywords) or len(node.args) > at + 1:
        return None
    return "every element of src holds the same value: duplicates write it alike" if uniform.one_value(ctx, src, fn) else None


@resolver("fake-implementation", "rule")
def fake_implementation(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A call inside a custom op's fake implementation (`@torch.library.register_fake("ns::op")`, `@op.register_fake`,
    the older `impl_abstract`, `register_meta`): PyTorch runs it only on FakeTensors, which hold no data, to
    learn the output's shape and dtype while torch.compile or export traces; its `torch.empty` allocates no memory
    whose values anything reads."""
    for fn in ctx.fn_nodes:
        for decorator in getattr(fn, "decorator_list", ()):
            made = decorator.func if isinstance(decorator, ast.Call) else decorator
            if last_name(made) in _FAKE_REGISTRARS:
                return f"in the fake implementation {fn.name}: run only on FakeTensors while tracing"
    return None


_FAKE_REGISTRARS = frozenset({"register_fake", "impl_abstract", "register_meta", "register_fake_class"})


# whose sparse result is coalesced: torch 2.13 on the CPU, and 2.11 on an H200 (5 of 5 runs, 256K entries on 64 x 64
# positions: benchmarks/scan_corpus/evidence/h200-2026-11-29T151127Z-gpu-checks.json)
_COALESCING = frozenset({"torch.sparse.sum"})


@resolver("coalesced-input", "rule")
def coalesced_input(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`x.to_dense()` of a sparse tensor that is visibly coalesced: the result of `.coalesce()` or of
    `torch.sparse.sum(x, dim)` (HKUDS/SSLRec's `t.sparse.sum(adj, dim=-1).to_dense()`), directly or through a name
    every binding of which in the function is one: a coalesced COO tensor holds one entry per index, so no
    duplicates are summed (the record's own condition)."""
    if op != "torch.Tensor.to_dense" or not isinstance(node.func, ast.Attribute):
        return None
    value: ast.expr | None = node.func.value
    if isinstance(value, ast.Name) and ctx.fn_nodes:
        bound = values.bindings_of(ctx.fn_nodes[-1], value.id)
        value = bound[0] if len(bound) == 1 else None
    if isinstance(value, ast.Call) and (ctx.written(value.func) in _COALESCING
                                        or isinstance(value.func, ast.Attribute) and value.func.attr == "coalesce"):
        return "the sparse tensor is coalesced (.coalesce() or torch.sparse.sum's result): no duplicate entries to sum"
    return None


@resolver("dense-input", "rule")
def dense_input(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`tf.convert_to_tensor(value)` whose value is visibly dense: a Python number, string, list or tuple, or a
    NumPy value (made by `np.*`, a NumPy generator's draw, or a name only so assigned): no tf.IndexedSlices to
    reduce with a segment sum.

    Followed through the function (kb/scan/values.py, dense_value): what a function of the file returns
    (`X, Y = load_train_data()`), and a bool flag the function takes and tests (`if is_training:`).

    And any value that comes from no gradient (kb/scan/slices.py): a tf.IndexedSlices is made only by the
    gradient APIs (`tf.gradients`, `tape.gradient`, `compute_gradients`, their `grads_and_vars`) or by
    `tf.IndexedSlices(...)`, so a placeholder, `past_length + tf.range(n)`, a config's learning rate or a
    parameter the file's calls pass such values for is dense. A value not visible (a parameter no call of the
    file passes) is kept where it is named after gradients (`grads`, `slices`)."""
    value = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "value"), None)
    if value is None:
        return None
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float, str, bool)):
        return "the value is a Python literal, not a tf.IndexedSlices"
    if ctx.kind_of(value) in ("numpy", "python"):
        return "the value is a NumPy or Python value, not a tf.IndexedSlices"
    if ctx.fn_nodes and values.dense_value(ctx, value, ctx.fn_nodes[-1]):
        return "the value is a NumPy or Python value (followed through the function), not a tf.IndexedSlices"
    if not slices.may_be_indexed_slices(ctx, value, ctx.fn_nodes[-1] if ctx.fn_nodes else None):
        return "the value is traced to no gradient (tf.gradients, GradientTape.gradient, compute_gradients, " \
            "tf.IndexedSlices) and no name calls it one, so it is taken as a dense tensor, not a tf.IndexedSlices"
    return None


@resolver("single-operand", "rule")
def single_operand(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """An einsum of one operand (`jnp.einsum("b...->b", x)`, a sum; `"bhwc->bchw"`, a transposition;
    kb/scan/values.py, one_operand): it contracts nothing, so no GEMM, convolution or attention library
    kernel runs for XLA to choose by timing."""
    return "an einsum of one operand multiplies nothing: no GEMM kernel runs" if values.one_operand(op, node) else None


def _weight_argument(node: ast.Call) -> ast.expr | None:
    """A `tf.nn` op's weight: a convolution's filter, `bias_add`'s bias (its second argument)."""
    return next((k.value for k in node.keywords if k.arg in ("filter", "filters")), node.args[1] if len(node.args) > 1 else None)


@resolver("constant-filter", "rule")
def constant_filter(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A `tf.nn` convolution whose filter is visibly built from no variable (kb/scan/constants.py: a blur
    filter from a random sigma, `tf.constant(np.eye(n))`): no gradient flows to it, so no filter-gradient
    kernel is built."""
    given = _weight_argument(node)
    fn = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    return "the filter is built from constants and random draws, no variable: it takes no gradient" \
        if op.startswith("tf.nn.") and not any(isinstance(a, ast.Starred) for a in node.args[:2]) and constants.constant(ctx, given, fn) else None


@resolver("weights-not-differentiated", "rule")
def weights_not_differentiated(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A file that differentiates only with respect to its input (style transfer's `K.gradients(loss,
    combination_image)` of a placeholder, `tape.gradient(loss, image)` of a `tf.Variable` of the image) and trains
    no weight (kb/scan/inputgrads.py): TensorFlow builds only the gradients on the path to what is asked for, and
    a weight's gradient (a convolution's filter, a bias) that an eager tape computes on the way is thrown away: no
    result of the run depends on it. A `tf.nn` op whose own weight argument is one of the names differentiated
    (`tape.gradient(loss, w)` of `tf.nn.conv2d(x, w)`) is not ruled out."""
    sources = inputgrads.only_inputs(ctx.tree, ctx.lines)
    given = _weight_argument(node)
    if not sources or (op.startswith("tf.nn.") and (isinstance(given, ast.Name) and given.id in sources or given is None)):
        return None  # `tf.nn.conv2d(x, w)` with `tape.gradient(loss, [w])`: that filter is differentiated
    return f"the program differentiates only with respect to its input ({', '.join(sources)}) and trains no weight"


@resolver("seed-set-by-this-call", "rule")
def seed_set_by_this_call(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`tf.random.set_seed(seed)` itself, with a seed that is not a literal `None`: it is the seeding, not an
    unseeded random op (what the seed's value is, an int or a flag, does not make the call draw numbers)."""
    given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "seed"), None)
    if op in TF_SET_SEED and given is not None and plain_literal(given) is not None:
        return "the call sets the global seed: it is the seeding, not an unseeded op"
    return None


@resolver("module-seeded", "rule")
def module_seeded(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A TensorFlow op in a module whose top level (not under an `if`, not in a function) calls
    `tf.random.set_seed(<int>)`: an op without a seed takes one derived from the global seed."""
    return ctx.tf_seeded or None if op.startswith("tf.") else None


@resolver("seed-argument-is-int", "rule")
def seed_argument_is_int(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`seed=x` where x is a parameter of the enclosing function annotated `int` (not Optional) or one
    the function asserts `is not None`, arithmetic on a number (`self.seed + i`: None would raise), or an
    attribute every assignment of which in the class is an int or a parameter with an int default
    (`self.seed = seed`, `seed=1024`), a parameter with a number for its default, or one named for a seed with no None
    default (`initializer_seed`: kb/scan/seededinit.py), or a name or module-level tuple entry that is never None
(kb/scan/pyints.py, never_none: `seed = index * n + k`, `seed=SEEDS[0]`), or a command-line option of the file with
a number as its default (kb/scan/options.py: `seed=args.seed`): the op (or Keras layer) has its own seed, so its
sequence is fixed."""
    if not op.startswith(("tf.", "keras.")):
        return None
    given = next((k.value for k in node.keywords if k.arg == "seed"), None)
    if isinstance(given, ast.BinOp) and isinstance(given.op, (ast.Add, ast.Sub, ast.Mult, ast.Mod, ast.FloorDiv)):
        return "the op's seed is arithmetic on numbers: a number, never None"
    if isinstance(given, (ast.Name, ast.Subscript)) and pyints.never_none(ctx, given, ctx.fn_nodes[-1] if ctx.fn_nodes else None):
        return "the op's seed is a fixed value the code binds, never None"
    if self_attribute(given) and ctx.class_nodes and values.int_attribute(ctx, ctx.class_nodes[-1], given.attr):
        return "the op's seed is an attribute the class sets to an int"
    if options.int_option(ctx, given):
        return "the op's seed is a command-line option of the file with a number as its default"
    if not isinstance(given, ast.Name) or not ctx.fn_nodes:
        return None
    fn = ctx.fn_nodes[-1]
    if seededinit.fixed(ctx, given, fn):
        return "the op's seed is a parameter with a number for its default, or one the code threads through as a seed"
    for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
        if arg.arg == given.id and isinstance(arg.annotation, ast.Name) and arg.annotation.id == "int":
            return "the op's seed is an int the function is given"
    if any(isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and isinstance(n.test.left, ast.Name)
           and n.test.left.id == given.id and len(n.test.ops) == 1 and isinstance(n.test.ops[0], ast.IsNot)
           and isinstance(n.test.comparators[0], ast.Constant) and n.test.comparators[0].value is None
           for n in nodes.iwalk(fn)):
        return "the op's seed is an int the function is given"
    return None


@resolver("draw-builds-only", "rule")
def draw_builds_only(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A random draw held in a name that only feeds calls of a model whose results nothing keeps (`fake =
    tf.random.uniform(shape); self(fake)`, to build a Keras model's weights: kb/scan/dummyinputs.py): the drawn values
    reach no result."""
    if not dummyinputs.builds_only(ctx, node):
        return None
    return "the drawn values only feed model calls whose results nothing keeps (a build on fake input)"


@resolver("boolean-mask-count", "rule")
def boolean_mask_count(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A `cumsum` of a boolean mask (`~mask`, a comparison, or a name only ever assigned one): a running
    count, whose values (even accumulated as float32, below 2**24) are exact in any order."""
    if op.endswith(".cumsum") and data is not None and ctx.fn_nodes and ctx.is_mask(data, ctx.fn_nodes[-1]):
        return "a running count of a boolean mask: integer values, exact in any order"
    return None


_EMPTY = frozenset({"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.empty_permuted",
                    "torch.Tensor.new_empty"})
# torch.distributed collectives -> (position, keyword) of the argument they write whole (their output).
_FILLS = {f"torch.distributed.{name}": where for name, where in (
    ("all_gather", (0, "tensor_list")), ("all_gather_into_tensor", (0, "output_tensor")),
    ("all_to_all", (0, "output_tensor_list")), ("all_to_all_single", (0, "output")), ("scatter", (0, "tensor")),
    ("gather", (1, "gather_list")), ("recv", (0, "tensor")), ("irecv", (0, "tensor")),
    ("reduce_scatter", (0, "output")), ("reduce_scatter_tensor", (0, "output")), ("broadcast", (0, "tensor")))}


def _fills(name: str) -> tuple[int, str] | None:
    """Where a collective takes the buffer it fills: torch.distributed's, or the same function of a module named
    `distributed` that re-exports it (huggingface/nanotron's `from nanotron import distributed as dist`)."""
    module, _, last = name.rpartition(".")
    if name in _FILLS:
        return _FILLS[name]
    return _FILLS.get(f"torch.distributed.{last}") if module.rpartition(".")[2] == "distributed" else None
_VIEWS = frozenset({"split", "chunk", "unbind", "view", "reshape", "narrow", "tensor_split"})


@resolver("written-before-read", "rule")
def written_before_read(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`torch.empty(...)` (or `resize_`) visibly written before it is read: filled in place at once by a method
    that writes every element (`torch.empty(n).normal_()`, `x.new().resize_(n, 1).bernoulli_(p)`, or `mask.bernoulli_(p)`
    as the next statement, `nn.init.xavier_uniform_(torch.empty(n, m))` directly or through a local name bound only
    to an initialiser), made into an `nn.Parameter` in a class that initialises its
    parameters (a `reset_parameters` method, an `nn.init.*` call), or, in the same function, handed
    after it is made to a `torch.distributed` collective as the output it fills (`all_gather`'s list,
    `all_to_all_single`'s output, `scatter`'s tensor, `gather`'s `gather_list`, `broadcast`'s tensor on the
    receiving ranks; also through a module named `distributed` that re-exports them), directly, in a list, or
    as its `split` views (`x.split(n)`, `torch.split(x, n)`), or filled row by row by the loop right after it (`buf = torch.empty([n, ...])`,
    then `for i in range(n):` writing `buf[i] = ...` before any read of it), or handed, before any other use, to a
    Triton or TileLang kernel launch (`_kernel[grid](x, out)`: the kernel's output, kb/scan/kernels.py); or made
    with a literal size of zero (`torch.empty(0)`, `x.new_empty(0)`), which has no element to read."""
    if op not in _EMPTY and op != "torch.Tensor.resize_":
        return None
    if id(node) in ctx.initialised:
        return "the memory is written before it is read"
    if ctx.fn_nodes and values.filled_next(node, ctx.fn_nodes[-1]):
        return "the statement right after it fills the whole tensor in place before it is read"
    if op == "torch.Tensor.resize_":
        return None
    if values.no_elements(op, node):
        return "a size is zero: the tensor has no element, so no uninitialised value is read"
    if ctx.fn_nodes and _filled_by_collective(ctx, node, ctx.fn_nodes[-1]):
        return "a torch.distributed collective writes the whole buffer before it is read"
    if ctx.fn_nodes and values.filled_by_loop(node, ctx.fn_nodes[-1]):
        return "the loop right after it writes every row before the buffer is read"
    if ctx.fn_nodes and kernels.written_by_launch(ctx, node, ctx.fn_nodes[-1]):
        return "it is handed to a Triton or TileLang kernel launch, which writes it, before anything else reads it"
    return None


@resolver("not-quantized", "rule")
def not_quantized(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """`x.resize_(...)` of a tensor the code shows is not quantized: made by a typed constructor
    (`torch.LongTensor(n, m)`), a factory without a quantized dtype (`torch.empty(n)`), visibly integer or
    float, `new()` of such a tensor or of a module's parameter (`embed.weight.data.new()`), or moved to a
    device (`data.to(self.device)`): a record about quantized tensors does not apply (kb/scan/quantized.py)."""
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    if op == "torch.Tensor.resize_" and quantized.not_quantized(ctx, receiver, ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree):
        return "the tensor is visibly made with a non-quantized dtype, so it is not a quantized tensor"
    return None


def _buffer_name(fn: ast.AST, node: ast.Call) -> tuple[str, int] | None:
    """The name the empty buffer is kept in (`out = x.new_empty(...)`, `bufs = [torch.empty_like(x) for ...]`,
    `bufs.append(torch.empty(...))`) and the line it is kept at."""
    for sub in nodes.iwalk(fn):
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) \
                and (sub.value is node or (isinstance(sub.value, ast.ListComp) and sub.value.elt is node)):
            return sub.targets[0].id, sub.lineno
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "append" \
                and isinstance(sub.func.value, ast.Name) and len(sub.args) == 1 and sub.args[0] is node:
            return sub.func.value.id, sub.lineno
    return None


def _feeds(ctx: Context, expr: ast.AST, fn: ast.AST, depth: int = 3) -> set[str]:
    """The names whose memory `expr` hands on: a name, `list(x)`, views of x (`x.split(...)`), `x[i]`,
    either branch of `a if c else b`, the items of a list, or what a name is assigned."""
    if depth <= 0:
        return set()
    if isinstance(expr, ast.Name):
        found = {expr.id}
        for value in ctx.assigned_in(fn).get(expr.id, ()):
            found |= _feeds(ctx, value, fn, depth - 1)
        return found
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "list" and len(expr.args) == 1:
            return _feeds(ctx, expr.args[0], fn, depth)
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _VIEWS:
            name = ctx.dotted(expr.func)
            if name is not None and name.startswith("torch.") and expr.args:  # torch.split(x, sizes): x's views
                return _feeds(ctx, expr.args[0], fn, depth)
            return _feeds(ctx, expr.func.value, fn, depth)
        return set()
    if isinstance(expr, ast.Subscript):
        return _feeds(ctx, expr.value, fn, depth)
    if isinstance(expr, ast.IfExp):
        return _feeds(ctx, expr.body, fn, depth) | _feeds(ctx, expr.orelse, fn, depth)
    if isinstance(expr, (ast.List, ast.Tuple)):
        return set().union(*(_feeds(ctx, e, fn, depth) for e in expr.elts))
    return set()


def _filled_by_collective(ctx: Context, node: ast.Call, fn: ast.AST) -> bool:
    fills = ctx.fill_calls
    if fills is None:  # the module's collective calls, found once (most modules have none)
        fills = ctx.fill_calls = [(c, where) for c in ctx.all_calls if (where := _fills(ctx.dotted(c.func) or "")) is not None]
    last = getattr(fn, "end_lineno", None) or 0
    inside = [(c, where) for c, where in fills if node.lineno <= c.lineno <= last]
    kept = _buffer_name(fn, node) if inside else None
    if kept is None:
        return False
    name, line = kept
    for sub, where in inside:
        if sub.lineno < line:
            continue
        position, keyword = where
        given = next((k.value for k in sub.keywords if k.arg == keyword), None)
        if given is None and position < len(sub.args):
            given = sub.args[position]
        if given is not None and name in _feeds(ctx, given, fn):
            return True
    return False


@resolver("unique-indices", "rule")
def unique_indices(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """The indices a record needs to repeat (its `scan.unique_index` parameter) visibly never repeat:
    `torch.arange`, `torch.randperm`, an `argsort`, `torch.unique`, a literal list of distinct ints, the
    coordinates of a mask's true elements (`mask.nonzero()`, `torch.nonzero(mask)`, `tf.where(mask)`), what
    keeps them (`.to()`, `.view()`, a slice, `tf.cast`), a name only ever assigned one, or a list of one Python
    int (`[hidden // 2]`, kb/scan/pyints.py: one index, as `tf.gather(x, [k], axis=-1)` reads one column):
    each element is written (or accumulated) once, so the order of the writes changes nothing."""
    name = ctx.index_param.get(op)
    given = ctx.argument(op, node, name) if name else None
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if given is not None and ctx.is_unique(given, scope):
        return f"the {name} ({ctx.text(given, 30)}) never repeats: each element is written once"
    if isinstance(given, (ast.List, ast.Tuple)) and len(given.elts) == 1 \
            and pyints.int_value(ctx, given.elts[0], scope, {}):
        return f"the {name} ({ctx.text(given, 30)}) is one Python int: one index, written once"
    dim_node = next((ctx.argument(op, node, n) for n in _DIM_NAMES if ctx.argument(op, node, n) is not None), None)
    dim = plain_literal(dim_node) if dim_node is not None else None
    if given is not None and type(dim) is int and _unique_repeated(ctx, given, dim, scope):
        return f"the {name} ({ctx.text(given, 30)}) never repeats along dimension {dim}: " \
            "each element is read once per position of the other dimensions"
    return None


def _unique_repeated(ctx: Context, node: ast.AST, dim: int, scope: ast.AST | None) -> bool:
    """`t.unsqueeze(k).repeat(1, ..., n, ..., 1)` (or `.expand(-1, ..., n, ..., -1)`) of indices `t` that never
    repeat (an `argsort`, kb/scan/context.py is_unique), copied only along the new dimension k, read along
    another dimension `dim`: for each position along k the indices along `dim` are t's, which never repeat
    (mae's `ids_keep.unsqueeze(-1).repeat(1, 1, D)` gathered along dim 1)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("repeat", "expand")
            and node.args and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
        return False
    inner = node.func.value
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "unsqueeze"
            and len(inner.args) == 1 and not inner.keywords and type(plain_literal(inner.args[0])) is int):
        return False
    ndim, added = len(node.args), plain_literal(inner.args[0])
    if type(added) is not int or not (-ndim <= added < ndim and -ndim <= dim < ndim) or added % ndim == dim % ndim:
        return False
    kept = 1 if node.func.attr == "repeat" else -1  # what leaves a dimension as it is
    if any(plain_literal(a) != kept for i, a in enumerate(node.args) if i != added % ndim):
        return False
    return ctx.is_unique(inner.func.value, scope, rows=True)  # along `dim`, each row's indices: t[:, :k] keeps them


_INDEX_NAMES, _DIM_NAMES = ("index", "indices"), ("dim", "axis")
_EXPAND_DIMS = frozenset({"jax.numpy.expand_dims", "torch.unsqueeze"})


@resolver("one-index-per-row", "rule")
def one_index_per_row(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A gather along `dim` (`x.gather(dim, index)`, `torch.gather`, `jnp.take_along_axis(x, index, axis)`)
    whose index visibly has size 1 along that dimension (`t[:, None]` with dim 1, `t[..., None]` with
    dim -1, `t.unsqueeze(dim)`, `jnp.expand_dims(t, dim)`, `t.view(-1, 1)`): each row reads one element, so the backward pass adds
    into each input element at most once."""
    index = next((ctx.argument(op, node, n) for n in _INDEX_NAMES if ctx.argument(op, node, n) is not None), None)
    given = next((ctx.argument(op, node, n) for n in _DIM_NAMES if ctx.argument(op, node, n) is not None), None)
    params = dict(ctx.op_params.get(op, ()))
    dim = plain_literal(given) if given is not None else params.get("axis", params.get("dim"))
    if index is None or type(dim) is not int:
        return None
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if _single_along(ctx, index, dim, scope, 3):
        return f"the index ({ctx.text(index, 30)}) has size 1 along dimension {dim}: each element is read once per row"
    return None


def _single_along(ctx: Context, node: ast.AST, dim: int, scope: ast.AST | None, depth: int) -> bool:
    """The expression visibly has size 1 along `dim` (a negative dim counts from the end)."""
    if depth <= 0:
        return False
    if isinstance(node, ast.Name):
        values = ctx.assigned_in(scope).get(node.id, []) if scope is not None else []
        return bool(values) and all(_single_along(ctx, v, dim, scope, depth - 1) for v in values)
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not all(isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and p.value in (None, Ellipsis)) for p in parts):
            return False
        ellipsis = next((i for i, p in enumerate(parts) if isinstance(p, ast.Constant) and p.value is Ellipsis), None)
        chosen: ast.expr | None = None  # each part makes one dimension; those the subscript leaves out follow it
        if dim >= 0 and dim < (len(parts) if ellipsis is None else ellipsis):
            chosen = parts[dim]
        elif dim < 0 and ellipsis is not None and -dim < len(parts) - ellipsis:
            chosen = parts[dim]
        return isinstance(chosen, ast.Constant) and chosen.value is None
    if isinstance(node, ast.Call) and ctx.dotted(node.func) in _EXPAND_DIMS and len(node.args) == 2:
        return plain_literal(node.args[1]) == dim  # jnp.expand_dims(t, -1), torch.unsqueeze(t, 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        args = [plain_literal(a) for a in node.args]
        if node.func.attr == "unsqueeze" and len(args) == 1:
            at = args[0]
            if type(at) is int and at != dim and (at < 0) != (dim < 0):  # `a.unsqueeze(-1)` gathered at dim 1
                shown = rank.of(ctx, node.func.value)
                return shown.exact is not None and at % (shown.exact + 1) == dim % (shown.exact + 1)
            return at == dim
        if node.func.attr in ("view", "reshape") and args and all(type(a) is int for a in args):
            return -len(args) <= dim < len(args) and args[dim] == 1
    return False


_CONSTANT_INITIALISERS = frozenset({"zeros", "ones", "constant", "identity"})
_RATES = ("dropout", "recurrent_dropout", "rate")


def _constant_initialiser(ctx: Context, node: ast.AST) -> bool:
    """`"zeros"`, `"ones"`, `"constant"`, `"identity"` or a call of an initializers' `Zeros()`, `Ones()`,
    `Constant(v)`, `Identity()` (any spelling of the initializers module): every value it makes is fixed."""
    value = plain_literal(node)
    if isinstance(value, str):
        return value.lower() in _CONSTANT_INITIALISERS
    if isinstance(node, ast.Call):
        name = ctx.dotted(node.func) or ""
        parts = name.split(".")
        return "initializers" in parts[:-1] and parts[-1].lower() in _CONSTANT_INITIALISERS
    return False


@resolver("constant-initializers", "rule")
def constant_initializers(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A Keras layer every initializer of which (`kernel_initializer`, `bias_initializer`, ... given, or by
    the layer's default) is a constant (`"zeros"`, `"ones"`, `Constant(v)`, `Identity()`), with no dropout
    rate: it draws no random number, so the global generator's seed changes nothing."""
    params = ctx.op_params.get(op, ())
    initialisers = [(name, default) for name, default in params if name.endswith("_initializer")]
    if not initialisers or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    for name, default in initialisers:
        given = ctx.argument(op, node, name)
        if given is None:
            if not (isinstance(default, str) and default.lower() in _CONSTANT_INITIALISERS):
                return None
        elif not _constant_initialiser(ctx, given):
            return None
    if _draws_dropout(ctx, op, node):
        return None
    return "every initializer is a constant and no dropout is drawn: nothing is random"


def _draws_dropout(ctx: Context, op: str, node: ast.Call) -> bool:
    """The layer call gives a dropout rate that may not be 0."""
    for name, _ in ctx.op_params.get(op, ()):
        if name in _RATES:
            given = ctx.argument(op, node, name)
            if given is not None and plain_literal(given) not in (0, 0.0, None):
                return True
    return False


@resolver("seeded-initializers", "rule")
def seeded_initializers(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A Keras layer whose random initializers each carry a fixed seed (`kernel_initializer=GlorotNormal(seed=42)`,
    or a call of a module function that returns one with the seed it is given: kb/scan/seededinit.py), its other
    initializers constants, with no dropout rate: it draws the same initial weights in every run."""
    if not seededinit.all_seeded(ctx, op, node, _constant_initialiser) or _draws_dropout(ctx, op, node):
        return None
    return "every random initializer carries a fixed seed and no dropout is drawn"


@resolver("reused-variables", "rule")
def reused_variables(ctx: Context, op: str, node: ast.Call, data: ast.AST | None) -> str | None:
    """A TF 1 layer function (`tf.layers.dense`, `tf.compat.v1.layers.*`) called with `reuse=True`, or inside
    `with tf.variable_scope(..., reuse=True):`, reuses the variables another call created: it creates none
    and runs no initializer, so it draws no initial value (kb/scan/tfvariables.py). `reuse=tf.AUTO_REUSE`
    may create them: kept."""
    return tfvariables.reused_layer(ctx, node)


# --- rules at `self.X = <module>(...)` -------------------------------------------------------------
def _module_class(ctx: Context, target: ast.AST, op: str) -> tuple[ast.ClassDef, bool, str] | None:
    """(the enclosing class, whether it has its own `forward`, X) for `self.X = M(...)` (X "a.b": held in self.a)."""
    if (where := members.path(target)) is None or not ctx.class_nodes or not op.rsplit(".", 1)[-1][:1].isupper():
        return None
    cls = ctx.class_nodes[-1]
    forward = any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward" for item in cls.body)
    return cls, forward, where


@resolver("module-never-called", "module")
def module_never_called(ctx: Context, target: ast.AST, value: ast.Call, op: str) -> str | None:
    """`self.X = nn.Embedding(...)` in a class with its own `forward` that reads `self.X.weight` (or another
    attribute of it) and never calls `self.X(...)` nor hands `self.X` on: the module's own kernel never
    runs, so records of calling it do not apply."""
    found = _module_class(ctx, target, op)
    if found is None or not found[1]:
        return None
    cls, attr = found[0], found[2]
    reads = any(isinstance(sub, ast.Attribute) and self_attribute(sub.value, attr) and isinstance(sub.ctx, ast.Load)
                for sub in nodes.iwalk(cls))
    if not reads:
        return None  # only a whole module (its own forward) that visibly reads self.X.<attr> instead of calling it
    for sub in nodes.iwalk(cls):
        if isinstance(sub, ast.Call) and self_attribute(sub.func, attr):
            return None  # self.X(...) runs it
        if hands_on(sub, attr, value):
            return None
    return f"self.{attr} is never called in its class (its weight is used directly)"


@resolver("unique-position-lookup", "module")
def unique_position_lookup(ctx: Context, target: ast.AST, value: ast.Call, op: str) -> str | None:
    """`self.X = nn.Embedding(...)` (or `self.a.X`, one a ModuleDict holds) whose every call in its class is on
    indices that never repeat (`torch.arange(t).unsqueeze(0)`, a position lookup, directly or through a name only
    ever so assigned), and that is never handed on: the atomic backward adds each row once, nothing accumulates."""
    found = _module_class(ctx, target, op)
    if found is None or not found[1]:
        return None
    cls, attr, calls = found[0], found[2], 0
    for fn in (n for n in nodes.iwalk(cls) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for sub in nodes.iwalk(fn):
            if members.handed_on(sub, attr, value):
                return None
            if isinstance(sub, ast.Call) and members.path(sub.func) == attr:
                if len(sub.args) != 1 or sub.keywords or not ctx.is_unique(sub.args[0], fn):  # arange(t).unsqueeze(0)
                    return None
                calls += 1
    return f"self.{attr} is only called with indices that never repeat (torch.arange): nothing accumulates" if calls else None


# --- spellings and facts (not named by records) ----------------------------------------------------
@resolver("pad-mode", "spelling")
def pad_mode(ctx: Context, node: ast.Call) -> tuple[str, bool, str | None] | None:
    """`F.pad(x, pad, mode="reflect"|"replicate")` runs the ReflectionPad/ReplicationPad kernels: aten's
    `_pad_enum` sends a pad of length 2, 4, 6 to reflection_pad1d/2d/3d (replication_pad1d/2d/3d), as the
    nn.ReflectionPad*/ReplicationPad* modules do through F.pad; a pad that is not a literal is taken as
    2-D, possible; a mode held in an attribute (`self.mode = "reflect"`) is read where the class sets it
    (possible where it is an `__init__` parameter's default). F.pad's own records (measured on F.pad itself) are
    asked too, at the same call (kb/scan/visitor.py).

    Read in https://github.com/pytorch/pytorch/blob/0298aaa1d1d16aebf4497823c9bff2c9e9efa4a4/aten/src/ATen/native/PadNd.cpp.
    Returns (op, certain, why) or None."""
    given = dict((k.arg, k.value) for k in node.keywords if k.arg)
    mode_node = node.args[2] if len(node.args) > 2 else given.get("mode")
    mode = ctx.literal(mode_node) if mode_node is not None else "constant"
    held = None
    if self_attribute(mode_node) and ctx.class_nodes and not isinstance(mode, str):
        found = ctx.attribute_values(mode_node.attr)  # self.mode = mode, an __init__ parameter with a default
        mode = next((v for v in found[0] if v in ("reflect", "replicate")), None) if found else None
        held = f"{ctx.text(mode_node, 30)} is {mode!r} unless the class is made with another mode" if mode else None
    if mode not in ("reflect", "replicate"):
        return None
    size = pad_length(node)
    pad = node.args[1] if len(node.args) > 1 else given.get("pad")
    dims = size // 2 if size in (2, 4, 6) else 2
    op = f"torch.nn.{'ReflectionPad' if mode == 'reflect' else 'ReplicationPad'}{dims}d"
    why = None if size is not None else (f"the pad {ctx.text(pad, 30) if pad is not None else '?'} is not a literal "
                                         "of length 2, 4 or 6 (taken as a 2-D pad)")
    if held:
        why = f"{held}; {why}" if why else held
    return op, size is not None and held is None, why


def pad_length(node: ast.Call) -> int | None:
    """The length of F.pad's `pad` where the code shows it: a tuple or list written out (`(p, p, 1, 1)`), or one
    repeated a literal number of times (`(self.pad,) * 4`); None otherwise."""
    pad = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "pad"), None)
    times = 1
    if isinstance(pad, ast.BinOp) and isinstance(pad.op, ast.Mult):
        count = pad.right if isinstance(pad.left, (ast.Tuple, ast.List)) else pad.left
        pad = pad.left if isinstance(pad.left, (ast.Tuple, ast.List)) else pad.right
        if not (isinstance(count, ast.Constant) and type(count.value) is int and 0 <= count.value <= 8):
            return None
        times = count.value
    if isinstance(pad, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in pad.elts):
        return len(pad.elts) * times
    return None


# Layer functions of TF 1's tf.layers -> the Keras layer each builds.
LAYER_FUNCTIONS = {"tf.compat.v1.layers.dense": "tf.keras.layers.Dense", "tf.layers.dense": "tf.keras.layers.Dense"}


@resolver("tf1-layer-function", "spelling")
def tf1_layer_function(ctx: Context, name: str, node: ast.Call) -> tuple[str, ast.Call] | None:
    """TF 1's `tf.layers.dense(inputs, units, activation, use_bias, ...)` (and `tf.compat.v1.layers.dense`)
    makes `Dense(units, activation=..., use_bias=...)` and applies it to `inputs`
    (tensorflow/python/keras/legacy_tf_layers/core.py): the call is read as that Dense call.

    Read in https://github.com/tensorflow/tensorflow/blob/2ec9b33f2113d1fb5dd18a6d68c93a0cd82b43f7/tensorflow/python/keras/legacy_tf_layers/core.py.
    Returns (op, the layer's call) or None."""
    spelled = LAYER_FUNCTIONS.get(name)
    if spelled is None or spelled not in ctx.wanted:
        return None
    layer = ast.copy_location(ast.Call(func=node.func, args=node.args[1:],
                                       keywords=[k for k in node.keywords if k.arg != "inputs"]), node)
    layer.end_lineno, layer.end_col_offset = node.end_lineno, node.end_col_offset
    return spelled, layer


# `x.at[i].add(...)` and the updates that lower to a scatter-add or scatter-multiply, and `.set`; `.get`
# is a gather and `.min`/`.max` are exact in any order: not findings.
JAX_AT_METHODS = frozenset({"add", "subtract", "multiply", "mul", "divide", "power", "set"})


@resolver("jax-at-update", "spelling")
def jax_at_update(ctx: Context, func: ast.Attribute, node: ast.Call) -> tuple | None:
    """`x.at[i].add(...)` (`.subtract`, `.multiply`, `.divide`, `.power`: scatter-adds or -multiplies) and
    `x.at[i].set(...)` are JAX's `.at` with the method as the `at.method` call fact; an update whose index is
    ints, slices, `...` and `None` only (each element named once, so none takes two updates: `x.at[::2, 3:].add(7.)`)
    or a `.set` whose value is a number literal (every write equal) is not reported. `unique_indices` left out is JAX's default, False
    (jax/_src/numpy/array_methods.py), which the KB cannot fill in: `.at` has no signature.

    Returns the call facts, () when the call is not such an update, None when it is one that is ruled out."""
    receiver = func.value
    if not (func.attr in JAX_AT_METHODS and isinstance(receiver, ast.Subscript)
            and isinstance(receiver.value, ast.Attribute) and receiver.value.attr == "at"):
        return ()
    if one_per_element(receiver.slice) or (func.attr == "set" and constant_value(node)):
        return None  # each element takes at most one update: nothing accumulates in an order
    facts: tuple = (("at.method", func.attr),)
    if not any(k.arg == "unique_indices" for k in node.keywords) and not any(k.arg is None for k in node.keywords):
        facts += (("unique_indices", False),)
    return facts


MATMUL = "jax.numpy.matmul"


@resolver("jax-matmul-operator", "spelling")
def jax_matmul_operator(ctx: Context, node: ast.BinOp) -> ast.Call | None:
    """`x @ w` where an operand is visibly a JAX array (made by `jax.numpy`, `jax.random`, `jax.nn` or
    `jax.lax` in the function, or a name every assignment of which is; a parameter or `self` field annotated
    `jax.Array` / `jnp.ndarray` / `chex.Array`; a Flax `self.param`, also unpacked from `promote_dtype`;
    kb/scan/jaxarrays.py), any `@` of a module whose only array library is JAX, or any `@` inside a function that
    `jax.jit`, `jax.pmap`, `jax.vmap` or `jax.grad` decorates (its values are traced arrays), is `jax.numpy.matmul`.

    Returns the call it is read as, or None."""
    if not isinstance(node.op, ast.MatMult) or MATMUL not in ctx.wanted:
        return None
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None or not (ctx.is_jax(node.left, scope, 4) or ctx.is_jax(node.right, scope, 4) or _jax_only(ctx)
                             or any(jaxarrays.traced(ctx, fn) for fn in ctx.fn_nodes)):
        return None
    call = ast.copy_location(ast.Call(func=ast.Name(id="operator @", ctx=ast.Load()),
                                      args=[node.left, node.right], keywords=[]), node)
    call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
    return call


_OTHER_ARRAYS = ("numpy", "torch", "tf", "cupy", "scipy", "pandas", "mxnet", "paddle")


def _jax_only(ctx: Context) -> bool:
    """A module whose only array library is JAX (it imports `jax.numpy` and no NumPy, PyTorch, TensorFlow, CuPy,
    SciPy...: dynamax's inference code): an `@` there multiplies JAX arrays whatever names hold them."""
    modules = [v.split(".")[0] for v in ctx.aliases.values()]
    return any(v.startswith("jax.numpy") for v in ctx.aliases.values()) and not any(m in _OTHER_ARRAYS for m in modules)


GETITEM = "jax.numpy.ndarray.__getitem__"
_INT_TYPES = frozenset({"int", "slice", "bool"})


@resolver("jax-gather-indexing", "spelling")
def jax_gather_indexing(ctx: Context, node: ast.Subscript) -> ast.Call | None:
    """`x[idx]` read where `x` is visibly a JAX array (Context.is_jax: made by jax.numpy..., a Flax parameter,
    declared `jax.Array`) and `idx` (or an item of `x[a, idx]`) may be an integer array: visibly a JAX array, or a
    parameter of the function not annotated `int` / `slice` and not rebound before the read
    (`def __getitem__(self, key)`, `x = table[(x,)]`). Its gradient is a scatter-add (jax.getitem-backward).
    Static indexing (`x[:, 0]`, `x[1:3]`, `x[..., None]`, `x[i]` with `i` a loop counter or a constant) and
    indices that never repeat (`jnp.arange`, `jnp.argsort`, `jax.random.permutation` of a count or of such
    indices) are not reported; nor is `x[idx]` where nothing differentiates (the backward records' gates).

    Returns the call it is read as, or None."""
    if not isinstance(node.ctx, ast.Load) or GETITEM not in ctx.wanted or not ctx.fn_nodes:
        return None
    scope = ctx.fn_nodes[-1]
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not any(_array_index(ctx, item, scope, node.lineno) for item in items) or not ctx.is_jax(node.value, scope, 4, traced=False) \
            or any(_unique_jax(ctx, item, scope, 4) for item in items):
        return None
    call = ast.copy_location(ast.Call(func=ast.Name(id="operator []", ctx=ast.Load()),
                                      args=[node.value, node.slice], keywords=[]), node)
    call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
    return call


def _array_index(ctx: Context, item: ast.expr, scope: ast.AST, line: int) -> bool:
    """An index that may be an integer array (jax_gather_indexing): visibly a JAX array, or an unannotated
    (or not int-annotated) parameter of the function that the function does not rebind before `line`
    (`x = table[(x,)]` reads the parameter)."""
    if isinstance(item, (ast.Slice, ast.Constant, ast.UnaryOp, ast.Starred)):
        return False
    if isinstance(item, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = scope.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.arg == item.id:
                annotation = a.annotation
                named = annotation.id if isinstance(annotation, ast.Name) else ctx.dotted(annotation) if annotation else None
                return named not in _INT_TYPES \
                    and all(v.lineno >= line for v in ctx.assigned_in(scope).get(item.id, []))
    return ctx.is_jax(item, scope, 4, traced=False)


_JAX_UNIQUE = frozenset({"jax.numpy.arange", "jax.numpy.argsort"})


def _unique_jax(ctx: Context, item: ast.expr, scope: ast.AST, depth: int) -> bool:
    """Indices that never repeat: `jnp.arange`, `jnp.argsort`, `jax.random.permutation(key, n)` of a count
    or of such indices, or a name every assignment in the function makes so. Their gather's gradient writes
    each row once: jax.getitem-backward's repeated indices cannot occur."""
    if depth <= 0:
        return False
    if isinstance(item, ast.Name):
        values = ctx.assigned_in(scope).get(item.id, [])
        return bool(values) and all(_unique_jax(ctx, v, scope, depth - 1) for v in values)
    if not isinstance(item, ast.Call):
        return False
    name = ctx.dotted(item.func)
    if name in _JAX_UNIQUE:
        return True
    if name == "jax.random.permutation" and len(item.args) == 2:
        permuted = item.args[1]
        return (isinstance(permuted, ast.Constant) and type(permuted.value) is int) \
            or any(isinstance(n, ast.Attribute) and n.attr in ("shape", "size") for n in nodes.iwalk(permuted)) \
            or (isinstance(permuted, ast.Call) and ctx.dotted(permuted.func) in ("jax.numpy.size", "len")) \
            or _unique_jax(ctx, permuted, scope, depth - 1)
    return False


SDPA_KERNEL = "torch.nn.attention.sdpa_kernel"
SDPA_BACKENDS = {"MATH": "math", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient", "CUDNN_ATTENTION": "cudnn"}


@resolver("sdpa-backend", "fact")
def sdpa_backend(ctx: Context, expr: ast.expr) -> str | None | bool:
    """Inside `with sdpa_kernel(SDPBackend.X):` (one backend allowed) `F.scaled_dot_product_attention` runs
    backend X: the `backend` call fact.

    Returns the backend, None for several or an unreadable one, False
    when the context is not sdpa_kernel."""
    if not isinstance(expr, ast.Call) or ctx.dotted(expr.func) != SDPA_KERNEL:
        return False
    given = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "backends"), None)
    if isinstance(given, (ast.List, ast.Tuple)) and len(given.elts) == 1:
        given = given.elts[0]
    name = ctx.dotted(given) if given is not None else None
    if name is not None and name.startswith("torch.nn.attention.SDPBackend."):
        return SDPA_BACKENDS.get(name.rsplit(".", 1)[1])
    return None


@resolver("made-on-host", "fact")
def made_on_host(ctx: Context, data: ast.AST | None) -> bool:
    """An op whose input is made on the host (a torch factory such as `torch.linspace(...)` without
    `device=`, arithmetic on such tensors, a function of the file, or a name bound to such functions,
    that returns one) runs on the CPU: it is answered for the CPU (unless the module calls
    `torch.set_default_device`)."""
    return data is not None and not ctx.default_device and bool(ctx.fn_nodes) \
        and ctx.made_on_host(data, ctx.fn_nodes[-1], 24, set()) == "host"


# What reads a tensor's value only, handing back a tensor cut from the graph or a host value (a number, a list, a
# NumPy array: TF 1's `Tensor.eval()` in a session, eager `.numpy()`): no gradient flows back through it.
_VALUE_READS = ("detach", "item", "tolist", "numpy", "eval")
_VALUE_READ_TEXT = tuple(f".{name}(" for name in _VALUE_READS)


def _read_at_once(ctx: Context, node: ast.Call, op: str | None) -> bool:
    """`op(...).detach()`, `op(...).sum().item()`, `tf.image.resize(images, size).eval()`: the call's result is read
    only as a value, at once or through a chain of method calls on it, and never kept. Its line names such a read
    first (a cheap test); then the enclosing function (or module) is walked for the chain. Not an in-place op
    (`x.index_add_(...)`): what it writes stays in the tensor it writes."""
    if op is not None and op.endswith("_"):
        return False
    line = ctx.lines[(node.end_lineno or node.lineno) - 1] if ctx.lines else ""
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None or not any(text in line for text in _VALUE_READ_TEXT):
        return False
    calls = {id(n.func.value): n for n in nodes.walk(scope) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    detached = any(isinstance(n, ast.Attribute) and n.value is node and n.attr == "detach" for n in nodes.walk(scope)) \
        if ctx.fn_nodes else False  # `op(...).detach` itself: the result is only read detached
    current: ast.expr = node
    while not detached:
        outer = calls.get(id(current))
        if outer is None:
            return False
        if outer.func.attr in _VALUE_READS:  # type: ignore[attr-defined]
            return True
        current = outer
    return True


@resolver("no-input-requires-grad", "fact")
def no_input_requires_grad(ctx: Context, node: ast.Call, op: str | None = None) -> bool:
    """A functional call none of whose arguments requires a gradient (a tensor method: nor its receiver,
    `torch.arange(n).repeat_interleave(k)`), followed through the file: made by
    torch factories (`torch.rand`, `torch.zeros(..., device=...)`), NumPy or Python, and what torch
    functions and tensor methods make of those (`x[idx].to(device)`, `F.interpolate(hr, ...)`), through every
    binding of a name in the function (or the one it holds where the call reads it, kb/scan/follow.py's
    `reaching`: `y = y.detach()` before the call) and in-place writes that write only such values, the arguments every
    call in the file passes to a module-level function, and the inputs every call of a module class's
    instances in the file passes to its `forward` (`model = Net().to(device)` used only as `model(x)` and
    `model.parameters()`). No backward pass runs through the call, so records of the backward pass do not
    apply (the data augmentation of a batch, the bicubic upsampling of the low-resolution input). Not
    applied in a file that names `requires_grad`; a module's output, a parameter, or anything not read here
    may require one. In-place writes inside another function a tensor is handed to are not followed. The
    indices of an op whose record names them (`scan.unique_index`: index_select's `index`) and the arguments
    of integer parameters (`repeats`, `dim`) never require a gradient, and are not read. A call whose result is
    detached at once (`torch.index_select(self.memory, 0, idx).detach()`) passes no gradient back either."""
    if _read_at_once(ctx, node, op):
        return True
    if ctx.grad_marked is None:
        ctx.grad_marked = any("requires_grad" in line for line in ctx.lines)
    if ctx.grad_marked or not ctx.fn_nodes or ctx.tree is None \
            or (op is not None and op.rsplit(".", 2)[-2][:1].isupper() and not op.startswith("torch.Tensor.")):
        return False  # (or another class's method, an optimizer's minimize: its inputs are not read here)
    fn = ctx.fn_nodes[-1]
    receiver = [node.func.value] if op and op.startswith("torch.Tensor.") and isinstance(node.func, ast.Attribute) else []  # its input
    index = ctx.argument(op, node, ctx.index_param[op]) if op and op in ctx.index_param else None
    integers = gradient.integer_arguments(op, node, bool(receiver)) if op else set()
    parts = [p for p in (*receiver, *node.args, *(k.value for k in node.keywords)) if p is not index and id(p) not in integers]
    return bool(node.args or receiver) and not any(isinstance(a, ast.Starred) for a in node.args) \
        and all(k.arg is not None for k in node.keywords) and all(gradient.grad_free_at(ctx, p, fn, node) for p in parts)

