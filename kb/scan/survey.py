"""One cheap pass over a module before the walk: its Layout (imports, the calls that run at import,
in `__main__` and per function: what kb/scan/scope.py needs to tell which process runs which
code), the nodes later steps look at (classes, calls, functions, assignments), the lines worth
visiting at all (found by regular expressions, at C speed) and the `# kb: ignore` comments.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from bisect import bisect_left
from typing import Any, NamedTuple

from kb.query.state import memo
from kb.scan import syspaths
from kb.scan.nodes import BLOCK_FIELDS
from kb.scan.syntax import Function, Layout, called, is_main


# Decorators that wrap a function without registering it anywhere (a compiler, a cache, a gradient mode, a
# descriptor): the function still runs only where something names it. Others may put it in a table.
TRANSPARENT = frozenset({"jit", "pmap", "vmap", "xmap", "pjit", "checkpoint", "remat", "custom_vjp", "custom_jvp",
                         "named_call", "compile", "script", "no_grad", "inference_mode", "enable_grad", "lru_cache",
                         "cache", "wraps", "staticmethod", "classmethod", "property", "cached_property",
                         "abstractmethod", "dataclass"})
TRANSPARENT_DOTTED = frozenset({"tf.function", "tensorflow.function"})


def transparent(node: ast.expr) -> bool:
    """Whether a decorator is one of TRANSPARENT (`@jax.jit`, `@torch.no_grad()`, `@tf.function`, and
    `@functools.partial(jax.jit, ...)` of one)."""
    if isinstance(node, ast.Call):
        name = called(node.func) or ast.unparse(node.func)
        if name.rpartition(".")[2] == "partial" and node.args:
            return transparent(node.args[0])
        node = node.func
    name = called(node) or ast.unparse(node)
    return name.rpartition(".")[2] in TRANSPARENT or name in TRANSPARENT_DOTTED


def _base_as_written(node: ast.expr) -> tuple[str, ...]:
    """The names of a class's base as written (`flax.struct.PyTreeNode`: three); () for any other expression."""
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    return (node.id, *reversed(parts)) if type(node) is ast.Name else ()


class Survey(NamedTuple):
    """One pass over a module: its Layout, and the nodes later steps look at."""

    layout: Layout
    classes: list[ast.ClassDef]
    calls: list[ast.Call]
    functions: list[Function]
    assigns: list[ast.Assign]


# Node types that hold no call below them: never pushed. Child fields per node class, read once,
# less those that never hold a node (names, flags, operators: `ctx`, `op`, `attr`, `id`, ...).
_LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_NOT_NODES = frozenset(("ctx", "op", "ops", "attr", "id", "arg", "conversion", "kind", "is_async", "type_comment",
                        "level", "simple", "name", "asname", "module", "names"))


class _Fields(dict[type[ast.AST], tuple[str, ...]]):
    """Class -> its fields that may hold a node, read on first sight of the class."""

    def __missing__(self, cls: type[ast.AST]) -> tuple[str, ...]:
        names = self[cls] = tuple(f for f in cls._fields if f not in _NOT_NODES)
        return names


class _Walked(dict[type, bool]):
    """Type of a value -> whether it is a node that may hold a call (one lookup, not two isinstance)."""

    def __missing__(self, cls: type) -> bool:
        found = self[cls] = issubclass(cls, ast.AST) and not issubclass(cls, _LEAVES)
        return found


FIELDS = _Fields()
_WALKED = _Walked()


# How survey() treats each statement class (0, the default: a simple statement, whose fields hold only
# expressions). One dictionary lookup per statement instead of a chain of isinstance checks.
_IMPORT, _IMPORT_FROM, _FUNCTION, _CLASS, _IF, _OTHER = 1, 2, 3, 4, 5, 6
_BODY_FIELDS = BLOCK_FIELDS  # a statement's fields that hold statements (kb/scan/nodes.py)
_ROLES: dict[type, int] = {ast.Import: _IMPORT, ast.ImportFrom: _IMPORT_FROM, ast.FunctionDef: _FUNCTION,
                           ast.AsyncFunctionDef: _FUNCTION, ast.ClassDef: _CLASS, ast.If: _IF}
_COMPOUND: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # class -> (its body fields, its other fields)
for _cls in ast.stmt.__subclasses__():
    if any(f in _BODY_FIELDS for f in _cls._fields):
        _ROLES.setdefault(_cls, _OTHER)
        _COMPOUND[_cls] = (tuple(f for f in FIELDS[_cls] if f in _BODY_FIELDS),
                           tuple(f for f in FIELDS[_cls] if f not in _BODY_FIELDS))
_CLAUSES = frozenset({ast.ExceptHandler, ast.match_case})


def _app_main(call: ast.Call) -> list[str]:
    """The function absl's `app.run(main)` (`tf.app.run`, `tf.compat.v1.app.run`) calls: the one it is given
    (first argument or `main=`), or, given none, the `__main__` module's `main` (tf.app.run's default): the
    program calls it, so what it sets holds in the program's run."""
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "main"), None)
    if isinstance(given, ast.Name):
        return [given.id]
    if given is None and not call.keywords and called(call.func) not in ("app.run", "absl.app.run"):
        return ["main"]  # TensorFlow's app.run (absl's requires main; a bare `app.run()` may be a web app's)
    return []


def _expression_calls(node: ast.AST | list[ast.AST], sink: list[str], calls: list[ast.Call]) -> None:
    """Calls in an expression (iteratively: expressions can nest deeper than the stack). A loop over
    each class's fields, skipping leaves, is several times faster than ast.iter_child_nodes here, and
    this walk covers every expression of every scanned file."""
    stack: list[ast.AST] = list(node) if isinstance(node, list) else [node]
    pop, push, fields, walked = stack.pop, stack.append, FIELDS, _WALKED
    while stack:
        item = pop()
        cls = type(item)
        if cls is ast.Call:  # no class derives from ast.Call
            calls.append(item)  # type: ignore[arg-type]
            func = item.func  # type: ignore[attr-defined]
            if type(func) is ast.Name:  # most calls: called()'s first case, without the call
                sink.append(func.id)
            else:
                name = called(func)
                if name is not None:
                    sink.append(name)
                    if name.endswith("app.run"):
                        sink.extend(_app_main(item))  # type: ignore[arg-type]
        for field in fields[cls]:
            value: Any = getattr(item, field, None)
            kind = type(value)
            if kind is list:
                for child in value:
                    if walked[type(child)]:
                        push(child)
            elif walked[kind]:
                push(value)


# Words that start or run a backward pass (or hand training to a library that does). Every branch
# starts with a literal, so that re skips ahead at C speed; the word boundaries the words need are
# checked on each match (`\bgrad\(` as a branch would make every search try every position).
BACKWARD = re.compile(r"\.(?:backward\(|fit\(|fit_generator\(|minimize\(|step\()|autograd\.grad|grad\(|value_and_grad|GradientTape"
                      r"|gradients\(|apply_gradients\(|train_on_batch\(|Trainer|training_step|accelerator\.")
_STARTS_WORD = ("grad(", "gradients(", "Trainer")  # need a word boundary before them
# A piece of every branch of BACKWARD: a text with none of them has no match (str's search is several times
# faster than re's here, whose branches start with letters as common as `a`, `g`, `t` and `.`).
_BACKWARD_PIECES = ("backward(", "fit(", "fit_generator(", "minimize(", "step(", "grad", "GradientTape", "train_on_batch(", "Trainer",
                    "training_step", "accelerator.")
_ENDS_WORD = ("autograd.grad", "Trainer")  # ... and after them


def trains(text: str) -> bool:
    """The text can run a backward pass (`.backward(`, `autograd.grad`, `jax.grad(`, `value_and_grad`,
    `GradientTape`, `.fit(` (Keras 2's `.fit_generator(` too), `.minimize(`, `tf.gradients(`, `apply_gradients(`, `train_on_batch(`, a
    `Trainer`, `training_step`, `accelerator.`, `.step(`)."""
    if not any(piece in text for piece in _BACKWARD_PIECES):
        return False
    extensions: set[str] | None = None
    for match in BACKWARD.finditer(text):
        word, start, end = match.group(), match.start(), match.end()
        if word in _STARTS_WORD and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue
        if word in _ENDS_WORD and end < len(text) and (text[end].isalnum() or text[end] == "_"):
            continue
        if word == ".backward(":
            receiver = _RECEIVER.search(text, max(0, start - 120), start)
            name = receiver.group(1) if receiver is not None else ""
            if name.startswith("torch.ops."):
                continue  # a compiled op's backward kernel, called by an autograd.Function's own backward
            if extensions is None:
                extensions = set(_EXTENSION.findall(text))
            if name in extensions:
                continue  # `wkv_cuda.backward(...)` of `wkv_cuda = load(name="wkv", sources=[...])` (BlinkDL/RWKV-LM)
        return True
    return False


_RECEIVER = re.compile(r"([A-Za-z_][\w.]*)$")
# a name bound to a compiled C++/CUDA extension: `wkv_cuda = load(name=..., sources=[...])` (torch.utils.cpp_extension)
_EXTENSION = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*(?:torch\.utils\.cpp_extension\.)?load(?:_inline)?\(", re.MULTILINE)


def layout(tree: ast.Module, text: str = "") -> Layout:
    """The module's Layout (imports, the calls that run at import, in __main__, per function)."""
    return survey(tree, text).layout


def survey(tree: ast.Module, text: str = "") -> Survey:
    """The module's Layout and its classes, calls, functions and assignments, in one pass."""
    imports: list[tuple[str, int, tuple[str, ...]]] = []
    bindings: list[tuple[str, str, int, str | None]] = []
    top: list[str] = []
    in_main: list[str] = []
    functions: list[tuple[str, list[str]]] = []
    classes: list[ast.ClassDef] = []
    calls: list[ast.Call] = []
    defs: list[Function] = []
    assigns: list[ast.Assign] = []
    spans: list[tuple[str, str, int, int, bool, str | None, int, bool]] = []
    class_bases: list[tuple[str, int, bool, tuple[tuple[str, ...], ...], bool]] = []
    exported: list[str | None] = []  # the names of module-level `__all__ = [...]` / `+= [...]`; None: a computed value
    has_main = False

    def statement(node: Any, sink: list[str], prefix: str, module_level: bool, owner: Any) -> None:  # Any: each branch reads its class's fields
        nonlocal has_main
        kind = type(node)
        role = _ROLES.get(kind, 0)
        if role == 0:  # a simple statement: its fields are expressions, walked as _expression_calls walks a node's
            _expression_calls(node, sink, calls)
            if kind is ast.Assign:
                assigns.append(node)
                if not prefix and module_level:
                    _exports(node.targets, node.value, exported)
            elif (kind is ast.AugAssign or kind is ast.AnnAssign) and not prefix and module_level:
                _exports([node.target], node.value, exported)
        elif role == _IMPORT:
            for alias in node.names:
                imports.append((alias.name, 0, ()))
                if alias.asname:
                    bindings.append((alias.asname, alias.name, 0, None))
                else:
                    bindings.append((alias.name.split(".")[0], alias.name.split(".")[0], 0, None))
        elif role == _IMPORT_FROM:
            imports.append((node.module or "", node.level, tuple(a.name for a in node.names)))
            for alias in node.names:
                if alias.name != "*":
                    bindings.append((alias.asname or alias.name, node.module or "", node.level, alias.name))
        elif role == _FUNCTION:
            defs.append(node)
            decorators = node.decorator_list
            first = min([node.lineno, *(d.lineno for d in decorators)]) if decorators else node.lineno
            if owner is None:
                spans.append(("function", node.name, first, node.end_lineno or node.lineno,
                              not all(map(transparent, decorators)), None, 0, False))
            else:
                spans.append(("method", node.name, first, node.end_lineno or node.lineno,
                              not all(map(transparent, decorators)), owner.name, owner.lineno,
                              bool(owner.bases or owner.keywords)))
            args = node.args
            for part in (*node.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d)):
                _expression_calls(part, sink, calls)  # decorators and defaults run where the def is
            body: list[str] = []
            name = node.name
            functions.append((prefix + name, body))
            inner = prefix + name + "."
            for child in node.body:
                statement(child, body, inner, False, None)
        elif role == _CLASS:
            classes.append(node)
            decorators = node.decorator_list
            spans.append(("class", node.name,
                          min([node.lineno, *(d.lineno for d in decorators)]) if decorators else node.lineno,
                          node.end_lineno or node.lineno, not all(map(transparent, decorators)), None, 0, False))
            class_bases.append((node.name, node.lineno, bool(node.keywords),
                                tuple(_base_as_written(b) for b in node.bases), node is top_node))
            for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                _expression_calls(part, sink, calls)
            inner = prefix + node.name + "."
            for child in node.body:  # a class body runs where the class statement is
                statement(child, sink, inner, module_level, node)
        elif role == _IF and module_level and not prefix and is_main(node.test):
            has_main = True
            for child in node.body:
                statement(child, in_main, prefix, True, owner)
            for child in node.orelse:
                statement(child, sink, prefix, True, owner)
        else:  # a compound statement: its bodies first, in field order, then its other fields' expressions
            bodies, others = _COMPOUND[kind]
            for field in bodies:
                for piece in getattr(node, field):
                    if type(piece) in _CLAUSES:  # an except clause or a match case: only its body is walked
                        for inner_node in piece.body:
                            statement(inner_node, sink, prefix, module_level, owner)
                    else:
                        statement(piece, sink, prefix, module_level, owner)
            expressions: list[ast.AST] = []
            for field in others:
                value: Any = getattr(node, field, None)
                if type(value) is list:
                    expressions += [piece for piece in value if _WALKED[type(piece)]]
                elif _WALKED[type(value)]:
                    expressions.append(value)
            if expressions:
                _expression_calls(expressions, sink, calls)

    top_node = None  # the module-level statement being read: a class directly in the module's body is module level
    scripted: list[str] = []  # the module-level calls but those of a def's defaults (which run at import, but
    for node in tree.body:  # only make a value: text_classification's HAN_model, `initializer=tf.random_normal_...()`)
        top_node = node
        before = len(top)
        statement(node, top, "", True, None)
        if len(top) > before:
            scripted += (Counter(top[before:]) - Counter(_default_calls(node))).elements()
    statement = None  # type: ignore[assignment]  # the recursive closure refers to itself: break the cycle, so
    # the tree is freed when the scan is done with it, without the cyclic collector (paused while files are read)
    if text and ("import_module" in text or "__import__" in text):
        imports += _imported_by_prefix(calls)
    backward = trains(text)
    top_trains = backward and bool(text) and _top_trains(tree, text)
    found = Layout(has_main, tuple(imports), tuple(bindings), tuple(top), tuple(in_main),
                   tuple((name, tuple(body)) for name, body in functions), backward,
                   may_use_gpu(text, calls, imports), top_trains, tuple(spans), tuple(class_bases),
                   _star(exported, top) if exported else (), syspaths.added(text) if "sys.path" in text else (),
                   bool(scripted) and not declares_only(tuple(scripted)))
    return Survey(found, classes, calls, defs, assigns)


def _imported_by_prefix(calls: list[ast.Call]) -> list[tuple[str, int, tuple[str, ...]]]:
    """`importlib.import_module("model.general_recommender." + name)` (or `f"model.general_recommender.{name}"`,
    `__import__`): the program may import any module of that package, chosen at run time (a configuration's model
    name), so each of them is imported: (package, 0, ("**",)), which kb/scan/scope.py reads as every module of the
    package's folder."""
    out: list[tuple[str, int, tuple[str, ...]]] = []
    for call in calls:
        name = called(call.func)
        if name is None or name.rpartition(".")[2] not in ("import_module", "__import__") or not call.args:
            continue
        given = call.args[0]
        start = given.left if isinstance(given, ast.BinOp) and isinstance(given.op, ast.Add) else \
            given.values[0] if isinstance(given, ast.JoinedStr) and given.values else None
        if isinstance(start, ast.Constant) and isinstance(start.value, str) and start.value.endswith(".") \
                and start.value.strip("."):
            out.append((start.value.strip("."), 0, ("**",)))
    return out


def _exports(targets: list[ast.expr], value: ast.expr | None, exported: list[str | None]) -> None:
    """The names a module-level assignment adds to `__all__`: a literal list or tuple of strings; None for any
    other value (`[basename(f)[:-3] for f in glob.glob(...)]`)."""
    if value is None or not any(type(t) is ast.Name and t.id == "__all__" for t in targets):
        return
    if type(value) in (ast.List, ast.Tuple) and all(
            type(e) is ast.Constant and isinstance(e.value, str) for e in value.elts):  # type: ignore[attr-defined]
        exported.extend(e.value for e in value.elts)  # type: ignore[attr-defined]
    else:
        exported.append(None)


# The calls that list a folder's files: `__all__` computed in a module that calls one is the folder's module names
# (`glob.glob(join(dirname(__file__), "*.py"))`, `os.listdir(dirname(__file__))`, `pkgutil.iter_modules(__path__)`)
_LISTS_FOLDER = frozenset({"glob", "iglob", "listdir", "scandir", "iterdir", "iter_modules", "walk_packages"})


# Calls that declare at import time and do no work: a library module's logger, type variables, dataclass fields
# (also in a class body, which runs at import), flags, partial applications, named tuples, and registrations in a
# table (`@TaskRegistry.register("panoptic_segmentation")`, `register_keras_serializable`, gin's `configurable`):
# a module that only registers its classes runs when something imports it, which is what registers them.
_DECLARING = frozenset({"field", "getLogger", "get_logger", "TypeVar", "NewType", "ParamSpec", "namedtuple", "NamedTuple",
                        "partial", "dataclass", "register_dataclass", "Enum", "configurable", "external_configurable"})


def _default_calls(node: ast.stmt) -> list[str]:
    """The calls of the parameter defaults of a module-level def, or of the methods of a module-level class."""
    defs = [node] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else \
        [d for d in node.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))] if isinstance(node, ast.ClassDef) else []
    out: list[str] = []
    for fn in defs:
        defaults: list[ast.AST] = [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d)]
        if defaults:
            _expression_calls(defaults, out, [])
    return out


def declares_only(top: tuple[str, ...]) -> bool:
    """Every module-level call (Layout.top) only declares (`_DECLARING`, absl's `flags.DEFINE_*`): such a module is a
    library imported from elsewhere, not a script that runs when `python module.py` starts it (kb/scan/scope.py)."""
    return all((last := name.rpartition(".")[2]) in _DECLARING or last.startswith(("DEFINE_", "register"))
               for name in top)


def _star(exported: list[str | None], top: list[str]) -> tuple[str, ...] | None:
    """Layout.star of a module that sets `__all__`: None when a value is computed and the module-level code lists
    a folder (the package's own: Python then imports every module it names, each module of the folder); else the
    literal names (a computed value that lists no folder names objects, not modules: nothing more is imported)."""
    if None in exported and any(name.rpartition(".")[2] in _LISTS_FOLDER for name in top):
        return None
    return tuple(name for name in exported if name is not None)


_NOT_CODE = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _top_trains(tree: ast.Module, text: str) -> bool:
    """Whether the module-level statements outside functions, classes and the `__main__` block can run a
    backward pass (`python train.py` of a script whose training loop is at module level)."""
    lines = text.split("\n")
    for node in tree.body:
        if isinstance(node, _NOT_CODE) or (isinstance(node, ast.If) and is_main(node.test)):
            continue
        if trains("\n".join(lines[node.lineno - 1: node.end_lineno or node.lineno])):
            return True
    return False


# Words that may mean a tensor or model goes to a GPU without a `.to(`/`device=` the walk below reads:
# CUDA named anywhere (`.cuda()`, `torch.cuda.FloatTensor`, "cuda:0", CUDA_VISIBLE_DEVICES), data or
# model parallelism, a default device, a trainer or accelerator that places the model itself.
# Looked for as substrings (str's search, at C speed, beats one regular expression with a case-blind branch,
# which re tries at every position: a fifth of the survey's time): "cuda" in any case, in the lowered text.
_GPU_WORDS = ("DataParallel", "set_device", "set_default_device", "set_default_tensor_type", "Accelerator", "Trainer",
              "Learner", ".gpu(", ".mps(", ".xpu(")
# Libraries that place a model on an accelerator themselves (trainers, launchers, distributed engines).
_GPU_LIBRARIES = frozenset({"lightning", "pytorch_lightning", "accelerate", "deepspeed", "horovod", "fastai",
                            "transformers", "ignite", "catalyst", "mmcv", "mmengine", "detectron2", "fairseq",
                            "torch_xla", "apex", "colossalai", "composer", "megatron", "fairscale", "allennlp",
                            "ray", "sentence_transformers", "diffusers", "lightning_fabric"})
_DEVICE_KEYWORDS = frozenset({"device", "map_location", "device_map", "device_ids", "output_device"})
_DTYPES = frozenset({"float", "float16", "float32", "float64", "double", "half", "bfloat16", "int", "int8", "int16",
                     "int32", "int64", "long", "short", "bool", "uint8", "complex64", "complex128", "cfloat", "cdouble",
                     "dtype"})


def _cpu(node: ast.AST) -> bool:
    """A device expression that is the CPU: "cpu", "cpu:0", torch.device("cpu")."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.lower().lstrip("/").startswith("cpu")
    if isinstance(node, ast.Call) and (called(node.func) or "").rsplit(".", 1)[-1] == "device" and len(node.args) == 1 \
            and not node.keywords:
        return _cpu(node.args[0])
    return False


def may_use_gpu(text: str, calls: list[ast.Call], imports: list[tuple[str, int, tuple[str, ...]]]) -> bool:
    """Whether a module may place a tensor or model on a GPU: CUDA named anywhere, a library that places
    models itself, parallel wrappers, `.to(x)` / `device=x` / `torch.device(x)` with anything but the CPU or a
    dtype (a variable device may be the GPU). False only when none of that is in the text: PyTorch then
    keeps everything this module makes on the CPU."""
    if "cuda" in text.lower() or any(word in text for word in _GPU_WORDS):
        return True
    if any(module.split(".")[0] in _GPU_LIBRARIES for module, level, _ in imports if not level):
        return True
    if "device" not in text and "map_location" not in text and ".to(" not in text:
        return False
    for call in calls:
        func = call.func
        for keyword in call.keywords:
            if keyword.arg in _DEVICE_KEYWORDS and not _cpu(keyword.value):
                return True
        if isinstance(func, ast.Attribute) and func.attr in ("to", "device") and call.args:
            first = call.args[0]
            if _cpu(first):
                continue
            if func.attr == "to" and isinstance(first, ast.Attribute) and first.attr in _DTYPES:
                continue  # x.to(torch.float32), x.to(y.dtype)
            return True
        if isinstance(func, ast.Name) and func.id == "device" and call.args and not _cpu(call.args[0]):
            return True
    return False


# Words in a file that can make a line interesting besides its import aliases and method names.
_ENV_WORDS = ("environ", "putenv")
# Substrings without which a file cannot call a framework or set its switches: not parsed.
MARKERS = ("torch", "tensorflow", "jax", "horovod", "keras", "environ", "putenv")
_METHOD_NAMES: dict[tuple[int, frozenset[str]], tuple[str, ...]] = memo()  # keyed by id(methods)


def method_names(methods: dict[str, tuple[str, ...]], owners: frozenset[str]) -> tuple[str, ...]:
    """The method names worth matching when the module imports these frameworks (memoized)."""
    key = (id(methods), owners)
    found = _METHOD_NAMES.get(key)
    if found is None:
        found = _METHOD_NAMES[key] = tuple(m for m, ops in methods.items() if any(op.split(".")[0] in owners for op in ops))
    return found


def scope_hit(hits: tuple[int, ...] | None, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """Whether a function or class has a hit line (hit_lines) from its first decorator to its last line.
    The walk (kb/scan/visitor.py) skips one without: every visit below it needs a hit, and what its walk
    changes besides (its own names' types, parameters and members) is pushed and popped with it."""
    if hits is None:
        return True
    k = bisect_left(hits, min([node.lineno, *(d.lineno for d in node.decorator_list)]))
    return k < len(hits) and hits[k] <= (node.end_lineno or node.lineno)


_MATMUL = re.compile(r"[\w)\]][ \t]*@[ \t]*[\w(]")
_GATHER = re.compile(r"\w\[[ \t]*\(?[A-Za-z_]")  # x[idx], x[(idx,)]: a gather on JAX arrays (resolvers.jax_gather_indexing)
_WORD_PATTERNS: dict[str, re.Pattern] = {}  # an alias -> its pattern (the same few words in most files)


def hit_lines(text: str, aliases: dict[str, str], methods: tuple[str, ...],
              roots: frozenset[str] | None = None) -> tuple[int, ...]:
    """Lines that mention an imported name, a matched method (`.index_add_`, `.at`) or the
    environment: the only places a finding or a switch can start (found at C speed by re: one small
    pattern per alias the text holds, and every `.name` checked against the method names). With
    `roots`, only aliases of names under those roots count (`torch`, `tf`, `os`: `np` cannot start one).
    Sorted and without repeats, so that the walk asks "any hit in lines a..b" by bisection. One pattern per
    word, not one alternation of them: re skips to a literal prefix at C speed, but tries an alternation at
    every position (twice the time), and each file's set of words compiled a pattern of its own."""
    names = [a for a, full in aliases.items() if roots is None or full.split(".", 1)[0] in roots]
    starts: list[int] = []
    for word in (*names, *_ENV_WORDS):
        if word not in text:
            continue  # no match: no search
        pattern = _WORD_PATTERNS.get(word)
        if pattern is None:
            if len(_WORD_PATTERNS) > 4096:
                _WORD_PATTERNS.clear()
            pattern = _WORD_PATTERNS[word] = re.compile(re.escape(word) + r"\b")
        starts += _word_starts(pattern, text)  # the same lines as the alternation's matches (words hold no newline)
    if methods:
        starts += [m.start() for m in _method_pattern(methods).finditer(text)]
    if any(v.startswith("jax") for v in aliases.values()):
        starts += [m.start() for m in _MATMUL.finditer(text)]  # x @ w: the matmul operator on JAX arrays
        starts += [m.start() for m in _GATHER.finditer(text)]  # x[idx]: the gather of integer-array indexing
    lines: list[int] = []
    line, last = 1, 0
    for start in sorted(starts):
        line += text.count("\n", last, start)
        last = start
        if not lines or lines[-1] != line:
            lines.append(line)
    return tuple(lines)


def _word_starts(pattern: re.Pattern, text: str) -> list[int]:
    """Where `pattern` (words, each ending in \\b) matches at the start of a word: what a leading
    \\b would find. Without it re skips ahead to the words' first letters at C speed (a leading \\b
    makes it try every position: most of the cost of a large file); a match inside a word is
    rare, and the search goes on one character after it, as the \\b pattern's would."""
    starts: list[int] = []
    search, pos = pattern.search, 0
    while True:
        match = search(text, pos)
        if match is None:
            return starts
        start = match.start()
        before = text[start - 1] if start else " "
        if before.isalnum() or before == "_":  # re's \w: a word character (Unicode alphanumeric or _)
            pos = start + 1
            continue
        starts.append(start)
        pos = match.end()


_METHOD_PATTERNS: dict[int, tuple[tuple[str, ...], re.Pattern]] = {}
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _method_pattern(methods: tuple[str, ...]) -> re.Pattern:
    r"""`.name` (spaces allowed after the dot) for the method names, each a whole word: where
    `\.\s*([A-Za-z_]\w*)` (a dot and the identifier after it) finds one of them, and nowhere else (a
    name that is no such identifier could never be one). One pattern of the names skips at C speed
    the attributes that are no method of interest, which that pattern found one by one for a set to
    reject (most of a file's attributes)."""
    found = _METHOD_PATTERNS.get(id(methods))
    if found is None or found[0] is not methods:
        names = sorted({m for m in methods if _IDENTIFIER.fullmatch(m)}, key=lambda w: (-len(w), w))
        body = "|".join(map(re.escape, names)) if names else "(?!)"
        found = _METHOD_PATTERNS[id(methods)] = (methods, re.compile(r"\.\s*(?:" + body + r")(?!\w)"))
    return found[1]


_SUPPRESS = re.compile(r"#\s*kb:\s*ignore(?:\[([^\]]*)\])?")


def suppressions(text: str) -> dict[int, frozenset[str] | None]:
    """Line -> record ids silenced there by `# kb: ignore[id, id]` (None: every finding)."""
    out: dict[int, frozenset[str] | None] = {}
    if "kb:" not in text:
        return out
    for number, line in enumerate(text.split("\n"), start=1):
        if "kb:" not in line:
            continue
        match = _SUPPRESS.search(line)
        if match:
            ids = match.group(1)
            out[number] = None if ids is None else frozenset(i.strip() for i in ids.split(",") if i.strip())
    return out
