"""The scanner's vocabulary: the shapes a scan produces (Call, Setting, Layout, Module) and what a
syntax tree says on its own, without the module around it: literals, dotted names, the KB's
spelling of an imported name, import aliases, and the shapes a call's arguments show (a `view` to
two sizes is 2-D, `transpose(1, 2)` names dimension 2).

Kept apart from the walk (kb/scan/visitor.py) so that every later step (scope, lookup, reports)
imports these types without the resolver's machinery.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any, NamedTuple, TypeGuard

from kb.query.state import memo
from kb.scan import tfcompat
from kb.scan.nodes import iwalk, statements

# Module paths as imported -> the prefix the KB names ops with (longest first).
CANONICAL = (
    ("horovod.tensorflow.keras", "hvd"), ("horovod.tensorflow", "hvd"), ("horovod.torch", "hvd"),
    ("horovod.keras", "hvd"), ("tensorflow_addons", "tfa"),
    ("tensorflow.compat.v2", "tf"),  # TF 2's own API under its compat name (`import tensorflow.compat.v2 as tf`)
    ("tensorflow", "tf"),
    ("tf_keras", "tf.keras"),  # Keras 2 as a package (TensorFlow 2.16+ with TF_USE_LEGACY_KERAS=1): tf.keras's code
    # Keras 2's layer modules (`from keras.layers.convolutional import Convolution2D`): the classes keras.layers exports
    *((f"keras.layers.{m}", "keras.layers") for m in (
        "convolutional", "core", "pooling", "normalization", "recurrent", "embeddings", "advanced_activations", "noise",
        "wrappers", "merge", "local", "convolutional_recurrent")),
)
# Enumeration members that are plain strings (TF 2's tf.image.ResizeMethod).
STRING_ENUMS = {f"tf.image.ResizeMethod.{k}": v for k, v in (
    ("BILINEAR", "bilinear"), ("NEAREST_NEIGHBOR", "nearest"), ("BICUBIC", "bicubic"), ("AREA", "area"),
    ("LANCZOS3", "lanczos3"), ("LANCZOS5", "lanczos5"), ("GAUSSIAN", "gaussian"), ("MITCHELLCUBIC", "mitchellcubic"))}
# TF 1's tf.compat.v1.image.ResizeMethod (numbers that TF 1's resize maps to the same kernels): the TF 2 method
# its call is read as (kb/scan/tfcompat.py)
STRING_ENUMS.update({f"tf.compat.v1.image.ResizeMethod.{k}": v for k, v in (
    ("BILINEAR", "bilinear"), ("NEAREST_NEIGHBOR", "nearest"), ("BICUBIC", "bicubic"), ("AREA", "area"))})


# The first item of a call fact that lists the values an unknown parameter may still take, as the code
# around the call shows them (`("mode", (ONE_OF, "nearest", "bilinear"))`: kb/scan/rank.py, kb/scan/lookup.py).
ONE_OF = "one of"


class Unknown(NamedTuple):
    """An argument the scanner cannot read as a plain literal, with the source text it has
    (and, for an f-string, the literal text it starts with)."""

    text: str
    prefix: str | None = None
    kind: str | None = None  # "tensor": the argument is visibly a tensor (its dtype kind unknown)


class Call(NamedTuple):
    """One call of a KB-known name. `args`/`kwargs` hold literals or Unknown; `star`: *args or
    **kwargs were passed, so parameters not given here are unknown too."""

    op: str
    line: int
    col: int
    end_line: int
    text: str
    args: tuple
    kwargs: tuple[tuple[str, object], ...]
    star: bool
    certain: bool
    method: bool
    extra: tuple[tuple[str, object], ...] = ()  # facts that are not parameters: ("backend", "math")
    no_grad: bool = False  # under `torch.no_grad()` / `torch.inference_mode()`: no backward runs through it
    why: str | None = None  # for a method that is not certain: what the receiver is not visibly
    compiled: bool = False  # inside a function or module compiled with torch.compile (Inductor's kernels run)
    ruled_out: tuple[tuple[str, str], ...] = ()  # (resolver, why): code rules (kb/scan/resolvers.py) that hold here
    never_runs: str | None = None  # why the code around it never runs (`if False:`): its findings are notes


class Setting(NamedTuple):
    """Something the code sets that a fix is made of: a call, an attribute, an env variable."""

    kind: str  # "call" | "attr" | "env"
    name: str  # torch.use_deterministic_algorithms | torch.backends.cudnn.deterministic | XLA_FLAGS
    value: object  # first literal argument / assigned literal / env text (None if unknown)
    kwargs: tuple[tuple[str, object], ...]
    line: int
    col: int
    text: str
    condition: str | None = None  # the `if` it is set under (None: unconditionally)
    scope: str | None = None  # None: module level; "__main__": the `if __name__ == "__main__":` block;
    # else the qualified name of the function it is set in ("main", "Trainer.__init__")


class Layout(NamedTuple):
    """What decides which code a process runs: imports, and calls at module level, in `__main__` and per function."""

    main: bool = False  # has an `if __name__ == "__main__":` block
    imports: tuple[tuple[str, int, tuple[str, ...]], ...] = ()  # (module, level, names imported from it)
    bindings: tuple[tuple[str, str, int, str | None], ...] = ()  # (local name, module, level, attribute or None)
    top: tuple[str, ...] = ()  # dotted names called at module level (class bodies included)
    in_main: tuple[str, ...] = ()  # ... in the __main__ block
    functions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (qualified name, dotted names it calls)
    backward: bool = True  # the text can run a backward pass (.backward(), autograd.grad, jax.grad, fit, a trainer)
    gpu: bool = True  # the text may place a tensor or model on a GPU (kb/scan/survey.py, may_use_gpu)
    top_trains: bool = False  # its module-level code (outside functions, classes and __main__) can run a backward pass
    # (kind "class" / "function" / "method", name, first line with its decorators, last line, decorated by something
    # that may register it, owner class's name or None, owner's line, owner has bases or keywords): each class and
    # function, outermost first, for the pass that finds code nothing runs (kb/scan/unreached.py)
    spans: tuple[tuple[str, str, int, int, bool, str | None, int, bool], ...] = ()
    # (name, line, has keywords (a metaclass), bases as written: (name,), (module alias, name) or () for any other
    # expression, module level): each class, for whether all its ancestors are the code base's own
    class_bases: tuple[tuple[str, int, bool, tuple[tuple[str, ...], ...], bool], ...] = ()
    # the submodules `from this_package import *` imports (each name of `__all__` the package does not bind itself):
    # a literal `__all__`'s names (() without one); None: every module of the folder (`__all__` computed from a listing)
    star: tuple[str, ...] | None = ()
    sys_paths: tuple[str, ...] = ()  # the folders it adds to sys.path, relative to its own (kb/scan/syspaths.py)
    scripted: bool = False  # its module-level statements (not a def's defaults or a class) call what runs: a script


class Graph(NamedTuple):
    """One file's functions and who calls them (kb/scan/hostcode.py, build), for the code base's fixed point (settle)."""

    # (name, first line, last line, a method, places tensors on a GPU itself): its module-level functions and
    # the methods of its module-level classes
    defs: tuple[tuple[str, int, int, bool, bool], ...] = ()
    # per def: (why the use records no gradient or None, index of the def whose body makes it or -1)
    uses: tuple[tuple[tuple[str | None, int], ...], ...] = ()
    # (name, why or None, index of the calling def or -1): its calls of names it does not define (imported
    # functions, other objects' methods)
    calls: tuple[tuple[str, str | None, int], ...] = ()
    mentions: frozenset[str] = frozenset()  # names it uses in any other way (as a value)
    attributes: frozenset[str] = frozenset()  # attributes it reads in any other way (`x.m` handed on, a flag `cfg.m`)
    qualified: frozenset[str] = frozenset()  # "x.m" of each such read of a name's attribute (`module.fn` handed on)
    owners: tuple[str, ...] = ()  # per def: the name of the class it is a method of ("" for a function)
    # (class, why or None, index of the calling def or -1, holder's attribute or ""): each call of a held instance
    # of a class (kb/scan/heldmodules.py)
    instances: tuple[tuple[str, str | None, int, str], ...] = ()
    loose: frozenset[str] = frozenset()  # names it calls in a construction not so held (or everywhere, unread)


class Module(NamedTuple):
    calls: tuple[Call, ...]
    settings: tuple[Setting, ...]
    layout: Layout = Layout()
    # (name, base as written, KB op it resolves to here or "", its signature is its own): its classes that
    # subclass another class, for another file's subclass or construction of them (kb/scan/run.py)
    classes: tuple[tuple[str, str, str, bool], ...] = ()
    # (name, first line, last line, why) of its module-level functions that every use in the file runs where
    # no gradient is recorded (kb/scan/quietfunctions.py, quiet_functions); kb/scan/run.py checks the other files
    quiet: tuple[tuple[str, int, int, str], ...] = ()
    # (line, col, function, parameter, positional index or -1): a recorded op named as a parameter's default
    # (kb/scan/run.py: not run when every call of the function in the code base passes the parameter)
    defaults: tuple[tuple[int, int, str, str, int], ...] = ()
    # its functions and methods with who calls them (kb/scan/hostcode.py): run.py finds those only data-loading
    # code or no_grad code runs, across files
    host: Graph | None = None
    # (first line, last line, why) of each block a constant test never takes (`if False:`): a name used only there
    # is no use of it (kb/scan/unreached.py)
    never_taken: tuple[tuple[int, int, str], ...] = ()


def canonical(dotted: str) -> str:
    for module, prefix in CANONICAL:
        if dotted == module or dotted.startswith(module + "."):
            return prefix + dotted[len(module):]
    return dotted


# Libraries whose objects are visibly not a framework's: a receiver or value made by them is no tensor
# (the visitor's receiver types and the gradient data flow both read it).
NOT_FRAMEWORK = frozenset({"numpy", "pandas", "scipy", "random", "collections", "itertools", "json", "re", "lmdb", "h5py"})
# Key-value and array stores among them whose objects' methods give more of that library's objects (an lmdb
# environment's `begin()` is a transaction, whose `put`/`get` write and read bytes; an h5py file's
# `create_dataset` a dataset): a name bound from such a method is that library's, never a tensor. Not Python's
# `random` or `collections`, whose methods hand back whatever the code put in (`rng.choice(tensors)`).
STORE_LIBRARIES = frozenset({"lmdb", "h5py"})
NOT_LITERAL = object()


def literal(node: ast.AST, text: bool = True) -> object:
    """A plain scalar literal's value, or Unknown carrying the expression's text
    (with text=False, the NOT_LITERAL marker instead: the caller finds the text)."""
    value = plain_literal(node)
    if value is NOT_LITERAL and text:
        return Unknown(text_of(node))
    return value


def plain_literal(node: ast.AST) -> object:
    """The value of a scalar literal (`3`, `-1e-4`, `"sum"`, `None`), else NOT_LITERAL."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
            return value
        return NOT_LITERAL
    if not isinstance(node, (ast.UnaryOp, ast.BinOp)):  # a name, call, attribute, tuple...: not a scalar literal
        return NOT_LITERAL
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL
    if isinstance(value, float) and not math.isfinite(value):
        return NOT_LITERAL  # nan and inf have no JSON form
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return NOT_LITERAL


def text_of(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
        text = type(node).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def called(node: ast.AST) -> str | None:
    """`f` for f(...), `a.b.f` for a.b.f(...): a call's name when it is a dotted plain name."""
    if isinstance(node, ast.Name):  # most calls: the name alone, no list to join
        return node.id
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def last_name(node: ast.AST) -> str | None:
    """`f` of `f(...)` and of `a.b.f(...)`, whatever `a` is: the last name a call or a value is spelt with."""
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def imported_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """`a.b.c` as the module's imports spell it (`np.load` -> `numpy.load`; None: not imported)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def dotted_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The canonical dotted name of `a.b.c` through the module's import aliases (None: not imported)."""
    name = imported_name(node, aliases)
    return None if name is None else canonical(name)


_PUBLIC: dict[tuple[str, int], str] = memo()  # keyed by id(wanted): forgotten with kb.query's index
# The submodules that define public names: `torch.nn.modules.conv.Conv2d` is `torch.nn.Conv2d`.
_DEFINED_IN = (
    (re.compile(r"^torch\.nn\.modules(?:\.[a-z_0-9]+)?\."), "torch.nn."),
    (re.compile(r"^torch\.utils\.data\.(?:dataloader|dataset|sampler|distributed)\."), "torch.utils.data."),
    (re.compile(r"^torch\.nn\.parameter\."), "torch.nn."),
    (re.compile(r"^torch\.nn\.parallel\.[a-z_0-9]+\."), "torch.nn.parallel."),  # parallel.distributed.DistributedDataParallel
    (re.compile(r"^torch\.nn\.attention\.[a-z_0-9]+\."), "torch.nn.attention."),
    (re.compile(r"^tf\.keras\.layers\.[a-z_0-9]+\."), "tf.keras.layers."),
)


def public_name(name: str, wanted: frozenset[str]) -> str:
    """The KB's name for a name spelled through the submodule that defines it:
    `torch.utils.data.dataloader.DataLoader` is `torch.utils.data.DataLoader`,
    `torch.nn.modules.conv.Conv2d` is `torch.nn.Conv2d`, and TensorFlow's `tf.compat.v1.gather` is `tf.gather`
    (kb/scan/tfcompat.py)."""
    key = (name, id(wanted))
    found = _PUBLIC.get(key)
    if found is not None:
        return found
    found = name
    for pattern, public in _DEFINED_IN:
        candidate, n = pattern.subn(public, name, count=1)
        if n and candidate in wanted:
            found = candidate
            break
    else:
        found = tfcompat.tf2_name(name, wanted) or name  # `tf.compat.v1.gather` is `tf.gather`
    if len(_PUBLIC) < 65536:
        _PUBLIC[key] = found
    return found


TRY = (ast.Try, ast.TryStar)
Function = ast.FunctionDef | ast.AsyncFunctionDef
"""A function definition (a def or an async def)."""
COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Match, *TRY)
_COMPOUND_TYPES = frozenset(COMPOUND)  # one hash lookup per statement, not a comparison with each class


def aliases_of(tree: ast.Module) -> dict[str, str]:
    """Local name -> canonical dotted name, from every import statement in the module
    (statements only: an import is never inside an expression). A name imported twice takes its
    later import, as Python binds it (`from keras.layers.core import Dense` then `from keras.layers
    import Dense`: the second); except that an import in a `try` body wins over its `except`
    fallback, and an `if` body over its `else`, the branch the code is written for."""
    found: dict[str, str] = {}
    pending: list[ast.stmt] = list(reversed(tree.body))  # a stack: popped in source order
    pop, compound = pending.pop, _COMPOUND_TYPES
    while pending:
        node: Any = pop()  # Any: each branch reads its class's fields
        kind = type(node)  # no class derives from a statement class: `is` answers as isinstance would
        if kind is ast.Import:
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = canonical(alias.name)
                else:  # `import tensorflow.compat.v1` binds `tensorflow`; canonical() maps it to tf
                    top = alias.name.split(".")[0]
                    found[top] = canonical(top)
        elif kind is ast.ImportFrom:
            if node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        found[alias.asname or alias.name] = canonical(f"{node.module}.{alias.name}")
        elif kind in compound:
            # the order in which the parts are read: a later part's import wins
            parts: list[ast.stmt] = [h for handler in getattr(node, "handlers", ()) for h in handler.body]
            if isinstance(node, ast.If):
                parts = [*node.orelse, *node.body]
            else:
                parts += [*getattr(node, "body", ()), *getattr(node, "orelse", ()), *getattr(node, "finalbody", ())]
            for case in getattr(node, "cases", ()):
                parts.extend(case.body)
            pending.extend(reversed(parts))
    return found


def star_aliases(tree: ast.Module, wanted: frozenset[str]) -> dict[str, str]:
    """Bare name -> op, for the ops a module-level `from M import *` brings in: `from keras.layers
    import *` then `Conv2D(...)` is `keras.layers.Conv2D` (whole model files are written so). Only
    names the knowledge base asks about, and only direct members of M; an explicit import or
    another binding of the same name wins (the caller adds these with setdefault)."""
    modules = [canonical(node.module) for node in tree.body
               if isinstance(node, ast.ImportFrom) and node.module and not node.level
               and any(alias.name == "*" for alias in node.names)]
    found: dict[str, str] = {}
    for module in modules:
        prefix = module + "."
        for op in wanted:
            if op.startswith(prefix) and "." not in op[len(prefix):]:
                found.setdefault(op[len(prefix):], op)
    return found


def statements_in(node: ast.AST) -> list[ast.stmt]:
    """Every statement under `node` (nested functions and classes included), without walking their
    expressions: what `ast.walk` finds of assignments, for a tenth of the nodes."""
    out: list[ast.stmt] = []
    stack = list(getattr(node, "body", ()))
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(inner_statements(item))
    return out


def inner_statements(item: ast.AST) -> list[ast.stmt]:
    """The statements directly in a compound statement's bodies: `body`, `orelse`, `finalbody`, and the bodies
    of its `except` clauses and `match` cases (one place for every walk of statements without expressions)."""
    out: list[ast.stmt] = []
    for field in ("body", "orelse", "finalbody"):
        children = getattr(item, field, None)
        if children and type(children) is list:
            out.extend(children)
    for handler in getattr(item, "handlers", ()):
        out.extend(handler.body)
    for case in getattr(item, "cases", ()):
        out.extend(case.body)
    return out


def is_main(test: ast.expr) -> bool:
    """`if __name__ == "__main__":` is how a script runs, not a condition on its switches."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    names = [n.id for n in sides if isinstance(n, ast.Name)]
    constants = [n.value for n in sides if isinstance(n, ast.Constant)]
    return names == ["__name__"] and constants == ["__main__"]


def strings(node: ast.AST) -> str | None:
    """The text an env value is built from: a literal, or the literal parts of an f-string or
    a concatenation ('--xla_gpu_deterministic_ops=true' in os.environ.get(...) + ' --xla...')."""
    value = literal(node)
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    parts = [n.value for n in iwalk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return " ".join(parts) if parts else None


_DIM_MOVES = frozenset({"transpose", "permute", "movedim", "moveaxis", "swapaxes", "swapdims"})
_RESHAPES = frozenset({"view", "reshape"})


def least_ndim(node: ast.AST | None) -> int | None:
    """`x.transpose(1, 2)` / `x.permute(0, 2, 1)`: a dimension named by a literal exists, so the
    tensor has at least that many dimensions (the idiom that moves classes to dim 1 for an N-D loss)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DIM_MOVES):
        return None
    dims = [plain_literal(a) for a in node.args]
    ints = [d for d in dims if isinstance(d, int) and not isinstance(d, bool)]
    if not ints or len(ints) != len(dims):
        return None
    return max(d + 1 if d >= 0 else -d for d in ints)


def reshaped_ndim(node: ast.AST | None) -> int | None:
    """`x.view(-1, n)` / `x.reshape(a, b)`: the number of sizes given is the result's ndim."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RESHAPES):
        return None
    if node.keywords or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if len(node.args) == 1:
        only = node.args[0]
        if isinstance(only, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in only.elts):
            return len(only.elts)
        return 1 if isinstance(only, ast.Constant) or (isinstance(only, ast.UnaryOp) and isinstance(only.operand, ast.Constant)) else None
    return len(node.args)


def one_per_element(index: ast.expr) -> bool:
    """An `.at[...]` index made of int literals, slices, `...` and `None` only: it names each element
    at most once, so no two writes meet."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis
               or type(p.value) is int)) or (isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.USub)
               and isinstance(p.operand, ast.Constant) and type(p.operand.value) is int) for p in parts)


def constant_value(node: ast.Call) -> bool:
    """`.set(v)` with a number literal (or -literal) as the value: every write to an element is equal."""
    value = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "values"), None)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) and type(value.value) in (int, float, bool)


def paired(target: ast.AST, value: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """`a, b = x, y`: each name with its own value; `a, b = f()`: each name with a `None` stand-in (what each
    takes is not visible); any other assignment: the target with the whole value."""
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(target.elts) == len(value.elts):
            return list(zip(target.elts, value.elts))
        return [(one, ast.Constant(None)) for one in target.elts if isinstance(one, ast.Name)]
    return [(target, value)]


def self_attribute(node: ast.AST | None, attr: str | None = None) -> TypeGuard[ast.Attribute]:
    """`self.<attr>` (any attribute when `attr` is None)."""
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
            and (attr is None or node.attr == attr))


def hands_on(node: ast.AST, attr: str, made: ast.AST) -> bool:
    """`self.<attr>` handed on as an object (`f(self.X)`, `[self.X]`, `return self.X`, `y = self.X`, but not
    the assignment `made` that creates it): it may be called there, with anything."""
    return any(self_attribute(a, attr) for a in handed_parts(node, made))


def handed_parts(node: ast.AST, made: ast.AST) -> list[ast.expr]:
    """What a node hands on as objects: a call's arguments, a display's items, what a `return` or an assignment
    (other than `made`, the one that creates the object) gives; [] for any other node."""
    if isinstance(node, ast.Call):
        return [*node.args, *(k.value for k in node.keywords)]
    if isinstance(node, ast.Set) or isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load):
        return list(node.elts)  # (an assignment's target tuple, `self.a, self.b = ...`, hands nothing on)
    if isinstance(node, (ast.Return, ast.Assign)) and node.value is not None and node.value is not made:
        return [node.value]
    return []


def parameter_defaults(args: ast.arguments, method: bool) -> list[tuple[str, ast.expr, int]]:
    """(parameter, its default, its position in a call or -1 for keyword-only) for each parameter with a
    default; a method's first parameter (`self`, `cls`) is not counted, since its callers do not pass it."""
    positional = [*args.posonlyargs, *args.args]
    shift = 1 if method and positional and positional[0].arg in ("self", "cls") else 0
    out = [(a.arg, d, positional.index(a) - shift)
           for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)]
    return out + [(a.arg, d, -1) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


# `if False:`, `while 0:`, `if True:` ... `else:`: a text without such a test needs no walk of its tree. One pattern
# per keyword, each starting with it: re skips ahead to a literal prefix at C speed, but tries a leading `\b` (or
# an alternation) at every position of the text (20 times slower over a large code base); the boundary before the
# keyword is checked on each match (_constant_test).
_CONSTANT_TESTS = tuple(re.compile(word + r"[ (]+(?:False|True|None|\d+)[ )]*:") for word in ("if", "while"))


def _constant_test(text: str) -> bool:
    """Whether the text holds `if`/`while` (as a word) with a constant test: what `\b` before them would match."""
    for pattern in _CONSTANT_TESTS:
        for match in pattern.finditer(text):  # what a match spans holds no other `if` or `while`
            start = match.start()
            if not start or not (text[start - 1].isalnum() or text[start - 1] == "_"):
                return True
    return False


def never_taken(tree: ast.Module, text: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, why) of each block a constant test never takes: the body of `if False:` (or `if 0:`,
    `while None:`), the `else:` of `if True:` (or `if 1:`). CPython does not even compile such a block, so no call
    in it runs: its findings are notes that say so (google-research/vdm's `if False:` around an augmentation)."""
    if not _constant_test(text):
        return ()
    out = []
    for node in statements(tree):  # ast.walk's order, without the expressions
        if not isinstance(node, (ast.If, ast.While)) or not isinstance(node.test, ast.Constant) \
                or node.test.value is Ellipsis:
            continue
        head = f"{'if' if isinstance(node, ast.If) else 'while'} {node.test.value!r}:"
        if not node.test.value:
            out.append((node.body[0].lineno, node.body[-1].end_lineno or node.lineno,
                        f"it is inside `{head}`, whose body never runs"))
        elif node.orelse and isinstance(node, ast.If):
            out.append((node.orelse[0].lineno, node.orelse[-1].end_lineno or node.lineno,
                        f"it is inside the `else:` of `{head}`, which never runs"))
    return tuple(out)


class Element(ast.expr):
    """The `index`-th value of the tuple `value` gives, as `a, b = value` binds it (`_, out = model(x)`)."""

    _fields = ("value",)
    value: ast.expr
    index: int = 0


def unpacked(fn: ast.AST, name: str) -> list[ast.expr]:
    """The values `a, b = f(x)` binds to `name` in the function or module (each an Element of the call),
    which `a, b = x, y` pairs (Context.assigned_in) leave out."""
    out: list[ast.expr] = []
    for n in statements_in(fn) if isinstance(fn, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else ():
        if type(n) is ast.Assign and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) and \
                isinstance(n.value, ast.Call) and not any(isinstance(t, ast.Starred) for t in n.targets[0].elts):
            for k, t in enumerate(n.targets[0].elts):
                if isinstance(t, ast.Name) and t.id == name:
                    element = Element(lineno=n.value.lineno, col_offset=n.value.col_offset)
                    element.value, element.index = n.value, k
                    out.append(element)
    return out


def handed_back(node: ast.AST) -> ast.AST:
    """`model, opt = accelerator.prepare(model, opt)` (amp.initialize, deepspeed.initialize): the name a call is
    handed at the position of the value bound (the same model, prepared); else the node itself."""
    if isinstance(node, Element) and isinstance(node.value, ast.Call) and node.index < len(node.value.args) \
            and isinstance(node.value.args[node.index], ast.Name):
        return node.value.args[node.index]
    return node


_MOVES = frozenset({"to", "cuda", "to_empty"})


def init_values(init: ast.FunctionDef | ast.AsyncFunctionDef, attr: str) -> list[ast.expr]:
    """What a module's `__init__` puts in `self.<attr>`: `self.<attr> = v` and `self.register_buffer("<attr>", v)`;
    nothing when `__init__` moves the module itself (`self.to(device)`, `self.cuda()`), so its buffers may not
    stay on the host."""
    made: list[ast.expr] = []
    for sub in iwalk(init):
        if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                                               and t.value.id == "self" for t in sub.targets):
            made.append(sub.value)
        if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)):
            continue
        owner = sub.func.value
        if sub.func.attr in _MOVES and ((isinstance(owner, ast.Name) and owner.id == "self") or (
                isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super")):
            return []
        if sub.func.attr == "register_buffer" and isinstance(owner, ast.Name) and owner.id == "self" and len(sub.args) >= 2 \
                and isinstance(sub.args[0], ast.Constant) and sub.args[0].value == attr:
            made.append(sub.args[1])
    return made


def assigned_pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """(name, value) of `a, b = x, y`: a tuple of names given a tuple (or list) of as many values, none
    starred; [] for any other assignment."""
    if not (isinstance(target, ast.Tuple) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in value.elts)):
        return []
    return [(t.id, v) for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Name)]


# Tensor methods whose result is boolean: comparisons and tests (`dists.ge(0)`, `x.isnan()`).
_BOOLEAN_METHODS = frozenset({"ge", "gt", "le", "lt", "eq", "ne", "greater", "greater_equal", "less", "less_equal",
                              "not_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf",
                              "isfinite", "bool"})


def boolean(node: ast.AST) -> bool:
    """A comparison, `~x`, or a call of a comparison method (`x.ge(0)`, `x.isnan()`, `x.bool()`): a boolean value."""
    return isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _BOOLEAN_METHODS)
