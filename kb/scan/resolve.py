"""From a module's syntax tree to the framework calls it makes and the switches it sets.

Static only: names are resolved through the module's imports (`import torch.nn.functional
as F`, `from jax import numpy as jnp`, `from x import y as z`), flow-insensitively (an
import anywhere in the file counts everywhere in it, as in a notebook run top to bottom).
A method call (`x.index_add_(...)`) matches a class-qualified name of the KB
(`torch.Tensor.index_add_`) when the file imports that framework; it is *certain* only when
the receiver was visibly made by the framework (`x = torch.zeros(3)`), else *possible*.
"""

from __future__ import annotations

import ast
import builtins
import math
import os
import stat
import re
from typing import NamedTuple

# Module paths as imported -> the prefix the KB names ops with (longest first).
CANONICAL = (
    ("horovod.tensorflow.keras", "hvd"), ("horovod.tensorflow", "hvd"), ("horovod.torch", "hvd"),
    ("horovod.keras", "hvd"), ("tensorflow_addons", "tfa"), ("tensorflow", "tf"),
)
# Which framework's import makes a method name worth matching (class-qualified KB names).
METHOD_OWNERS = {"torch": "torch", "tf": "tf", "jax": "jax"}
# Calls whose result is a torch tensor / a Keras model, for "certain" method matches.
_TORCH_NOT_TENSOR = frozenset({"load", "device", "no_grad", "manual_seed", "set_grad_enabled", "is_tensor",
                               "compile", "save", "get_default_dtype", "use_deterministic_algorithms"})
_TENSOR_KEEPING = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "bool",
                             "clone", "detach", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze",
                             "permute", "transpose", "requires_grad_"})
_KERAS_MODELS = frozenset({"tf.keras.Model", "tf.keras.Sequential", "tf.keras.models.Model", "tf.keras.models.Sequential"})
# `with torch.nn.attention.sdpa_kernel(SDPBackend.X):` pins the attention backend of the calls inside.
SDPA_KERNEL = "torch.nn.attention.sdpa_kernel"
SDPA_BACKENDS = {"MATH": "math", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient", "CUDNN_ATTENTION": "cudnn"}
# `x.at[i].add(...)` and the updates that lower to a scatter-add or scatter-multiply (the jax.scatter-add
# record's condition), and `.set` (which of several writes to one index wins: jax.at-set-repeated-indices);
# each call says its method as the `at.method` fact. `.get` is a gather and `.min`/`.max` are exact in
# any order: not findings.
_JAX_AT_METHODS = frozenset({"add", "subtract", "multiply", "mul", "divide", "power", "set"})
# Annotations that say an argument is a framework tensor.
_TENSOR_TYPES = {"torch.Tensor": "torch.Tensor", "torch.nn.Parameter": "torch.Tensor", "torch.nn.parameter.Parameter": "torch.Tensor"}
_PARAMETER_MAKERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_INITIALISERS = frozenset({"reset_parameters", "_reset_parameters", "init_weights", "_init_weights", "initialize_parameters"})
_EMPTY = frozenset({"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.empty_permuted"})
_RESHAPES = frozenset({"view", "reshape"})
_TF_DATA_STAGES = frozenset({"tf.data.Dataset.map", "tf.data.Dataset.interleave"})
_RANDOM_WORDS = frozenset({"shuffle", "dropout", "Dropout", "uniform", "normal", "sample_distorted_bounding_box"})
_BUILTINS = frozenset(dir(builtins))
_PARTIALS = frozenset({"functools.partial"})
# Modules whose record is about calling them: the kernel runs in forward(), not when the weight is read.
_CALLED_MODULES = {"torch.nn.Embedding": ("torch.embedding-backward",)}
# Layer functions of TF 1's tf.layers -> the Keras layer each builds: `dense(inputs, units, activation,
# use_bias, ...)` makes `Dense(units, activation=..., use_bias=...)` and applies it to `inputs`
# (tensorflow/python/keras/legacy_tf_layers/core.py, https://github.com/tensorflow/tensorflow/blob/
# 2ec9b33f2113d1fb5dd18a6d68c93a0cd82b43f7/tensorflow/python/keras/legacy_tf_layers/core.py, read at that commit).
_LAYER_FUNCTIONS = {"tf.compat.v1.layers.dense": "tf.keras.layers.Dense", "tf.layers.dense": "tf.keras.layers.Dense"}
_JAX_ARRAY_MAKERS = ("jax.numpy.", "jax.random.", "jax.nn.", "jax.lax.")
MATMUL = "jax.numpy.matmul"
# torch factories that make a tensor on the default device (the CPU unless torch.set_default_device is called)
_HOST_FACTORIES = frozenset(f"torch.{n}" for n in (
    "linspace", "logspace", "arange", "zeros", "ones", "full", "tensor", "eye", "rand", "randn", "empty", "randint"))
# functions and methods whose result lives where their tensor inputs live
_ELEMENTWISE = frozenset({
    "cos", "sin", "exp", "log", "sqrt", "clip", "clamp", "sigmoid", "tanh", "abs", "pow", "cumprod", "cumsum",
    "float", "double", "neg", "reciprocal", "rsqrt", "log1p", "expm1", "clamp_min", "clamp_max"})
_LOCAL_MODULES: dict[str, dict | None] = {}
_LOCAL_MAX_BYTES = 5_000_000  # as kb.scan.sources.MAX_BYTES: a module the scan itself would read


def local_module(filename: str, dotted: str) -> dict | None:
    """Top-level functions and classes by name of the module `dotted` as a file of the same code base
    (next to `filename`, or under one of its parent folders), or None when no such file is there. Read
    with `ast` only, never imported; memoized per path. The tree is untrusted: only a regular file
    (not a symlink, FIFO or device) of at most 5 MB is opened."""
    if not filename or not dotted or not all(part.isidentifier() for part in dotted.split(".")):
        return None
    folder = os.path.dirname(os.path.abspath(filename))
    for _ in range(4):
        path = os.path.join(folder, *dotted.split(".")) + ".py"
        try:
            info = os.lstat(path)
        except OSError:
            info = None
        if info is not None:
            if not stat.S_ISREG(info.st_mode) or info.st_size > _LOCAL_MAX_BYTES:
                return None  # a link, FIFO or device (untrusted tree: never opened), or too big to be read
            if path not in _LOCAL_MODULES:
                try:
                    with open(path, encoding="utf-8") as handle:
                        tree = ast.parse(handle.read(), filename=path)
                    _LOCAL_MODULES[path] = {n.name: n for n in tree.body
                                            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
                except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
                    _LOCAL_MODULES[path] = None
            return _LOCAL_MODULES[path]
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None
# Enumeration members that are plain strings (TF 2's tf.image.ResizeMethod).
_STRING_ENUMS = {f"tf.image.ResizeMethod.{k}": v for k, v in (
    ("BILINEAR", "bilinear"), ("NEAREST_NEIGHBOR", "nearest"), ("BICUBIC", "bicubic"), ("AREA", "area"),
    ("LANCZOS3", "lanczos3"), ("LANCZOS5", "lanczos5"), ("GAUSSIAN", "gaussian"), ("MITCHELLCUBIC", "mitchellcubic"))}



def _hands_on(node: ast.AST, attr: str, made: ast.AST) -> bool:
    """`self.<attr>` handed on as an object (`f(self.X)`, `[self.X]`, `return self.X`, `y = self.X`, but not
    the assignment `made` that creates it): it may be called there, with anything."""
    if isinstance(node, ast.Call):
        parts = [*node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        parts = list(node.elts)
    elif isinstance(node, (ast.Return, ast.Assign)) and node.value is not None and node.value is not made:
        parts = [node.value]
    else:
        return False
    return any(isinstance(a, ast.Attribute) and a.attr == attr and isinstance(a.value, ast.Name) and a.value.id == "self"
               for a in parts)

class Unknown(NamedTuple):
    """An argument the scanner cannot read as a plain literal, with the source text it has
    (and, for an f-string, the literal text it starts with)."""

    text: str
    prefix: str | None = None


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
    ruled_out: tuple[tuple[str, str], ...] = ()  # (record, why) that the code around the call rules out


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
    """What decides which code a process runs: the module's imports and its calls of plain
    names, at module level, in its `__main__` block and per function (for the switch scope)."""

    main: bool = False  # has an `if __name__ == "__main__":` block
    imports: tuple[tuple[str, int, tuple[str, ...]], ...] = ()  # (module, level, names imported from it)
    bindings: tuple[tuple[str, str, int, str | None], ...] = ()  # (local name, module, level, attribute or None)
    top: tuple[str, ...] = ()  # dotted names called at module level (class bodies included)
    in_main: tuple[str, ...] = ()  # ... in the __main__ block
    functions: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (qualified name, dotted names it calls)
    backward: bool = True  # the text can run a backward pass (.backward(), autograd.grad, jax.grad, fit, a trainer)


class Module(NamedTuple):
    calls: tuple[Call, ...]
    settings: tuple[Setting, ...]
    layout: Layout = Layout()


def canonical(dotted: str) -> str:
    for module, prefix in CANONICAL:
        if dotted == module or dotted.startswith(module + "."):
            return prefix + dotted[len(module):]
    return dotted


_NOT_LITERAL = object()


def literal(node: ast.AST, text: bool = True) -> object:
    """A plain scalar literal's value, or Unknown carrying the expression's text
    (with text=False, the _NOT_LITERAL marker instead: the caller finds the text)."""
    value = _literal(node)
    if value is _NOT_LITERAL and text:
        return Unknown(_text(node))
    return value


def _literal(node: ast.AST) -> object:
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
            return value
        return _NOT_LITERAL
    if not isinstance(node, (ast.UnaryOp, ast.BinOp)):  # a name, call, attribute, tuple...: not a scalar literal
        return _NOT_LITERAL
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    if isinstance(value, float) and not math.isfinite(value):
        return _NOT_LITERAL  # nan and inf have no JSON form
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return _NOT_LITERAL


def _text(node: ast.AST, limit: int = 60) -> str:
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - unparse of a parsed tree
        text = type(node).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Visitor(ast.NodeVisitor):
    """Statements are walked by `statements()` (scopes, `if` conditions, `with` contexts);
    only statements on a hit line are visited down to their expressions."""

    def __init__(self, aliases: dict[str, str], wanted: frozenset[str], methods: dict[str, tuple[str, ...]],
                 owners: set[str], watched: frozenset[str]) -> None:
        self.aliases, self.wanted, self.methods, self.owners = aliases, wanted, methods, owners
        self.watched = watched
        self.lines: list[str] = []  # the module's source lines, for the text of nodes
        self.calls: list[Call] = []
        self.settings: list[Setting] = []
        self.typed: list[dict[str, str]] = [{}]  # per scope: local name -> "torch.Tensor" | "tf.keras.Model"
        self.conditions: list[ast.expr] = []  # enclosing `if` tests (not `if __name__ == "__main__"`)
        self.backends: list[str | None] = []  # enclosing sdpa_kernel contexts: the one backend allowed, or None
        self.scope: list[str] = []  # enclosing classes and functions, outermost first
        self.members: list[set[str]] = []
        self.no_grad = 0  # enclosing no-grad contexts and decorated functions
        self.initialised: set[int] = set()  # ids of `torch.empty(...)` nodes that are visibly written before use
        self.compiled: frozenset[str] = frozenset()  # functions and classes of the module that torch.compile compiles
        self.defs: dict[str, ast.AST] = {}  # functions of the module by name (the last definition wins)
        self.classes: dict[str, ast.ClassDef] = {}  # classes of the module by name
        self.bound: dict[str, dict[str, object]] = {}  # function name -> parameter -> the one literal every call passes
        self.params: list[dict[str, object]] = []  # per enclosing function: its parameters known that way  # per enclosing class: `self.X` that are parameters or buffers
        self.functions = 0  # how many of them are functions
        self.fn_nodes: list[ast.AST] = []  # enclosing functions, innermost last
        self.tf_seeded = ""  # why TF's random ops are seeded in this module (a module-level tf.random.set_seed(N))
        self.class_nodes: list[ast.ClassDef] = []  # enclosing classes, innermost last
        self.assign_memo: dict[int, dict[str, list[ast.expr]]] = {}
        self.host_memo: dict[tuple[int, int], str | None] = {}
        self.default_device = False  # the module calls torch.set_default_device: factories may make GPU tensors
        self.filename = ""  # the module's path, to read the modules of the same code base it imports
        self.tree: ast.Module | None = None
        self.buffer_params: dict[str, frozenset[str]] = {}  # function -> parameters every call passes a registered buffer
        self.buffers: list[frozenset[str]] = []  # per enclosing function: those parameters
        self.main = False  # inside the module-level `if __name__ == "__main__":` block

        self.hits: frozenset[int] | None = None  # lines that may hold something of interest (None: all)

    # --- statements: walked here, so that expressions without a hit are never visited -----
    def _hit(self, node: ast.AST) -> bool:
        if self.hits is None:
            return True
        first = node.lineno
        return any(line in self.hits for line in range(first, (node.end_lineno or first) + 1))

    def statements(self, body: list[ast.stmt]) -> None:
        for node in body:
            kind = type(node)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                self._decorated(node)
                quiet = kind is not ast.ClassDef and any(self._no_grad(d) for d in node.decorator_list)
                self.no_grad += quiet
                if kind is not ast.ClassDef:
                    self.params.append(self.bound.get(node.name, {}) if len(self.scope) == 0 else {})
                    self.buffers.append(self.buffer_params.get(node.name, frozenset()) if len(self.scope) == 0 else frozenset())
                self.typed.append(self._argument_types(node) if kind is not ast.ClassDef else {})
                if kind is ast.ClassDef:
                    self.members.append(self._members(node))
                    self.class_nodes.append(node)
                self.scope.append(node.name)
                function = kind is not ast.ClassDef
                self.functions += function
                if function:
                    self.fn_nodes.append(node)
                self.statements(node.body)
                if function:
                    self.fn_nodes.pop()
                self.functions -= function
                self.scope.pop()
                if kind is ast.ClassDef:
                    self.members.pop()
                    self.class_nodes.pop()
                else:
                    self.params.pop()
                    self.buffers.pop()
                self.typed.pop()
                self.no_grad -= quiet
            elif kind is ast.If:
                if self._hit(node.test):
                    self.visit(node.test)
                main = _is_main(node.test) and not self.scope
                if not main:
                    self.conditions.append(node.test)
                self.main = self.main or main
                self.statements(node.body)
                self.main = self.main and not main
                self.statements(node.orelse)
                if not main:
                    self.conditions.pop()
            elif kind in (ast.For, ast.AsyncFor, ast.While):
                header = node.test if kind is ast.While else node.iter
                if self._hit(header):
                    self.visit(header)
                self.statements(node.body)
                self.statements(node.orelse)
            elif kind in (ast.With, ast.AsyncWith):
                pushed = 0
                quiet = any(self._no_grad(item.context_expr) for item in node.items)
                self.no_grad += quiet
                for item in node.items:
                    if self._hit(item.context_expr):
                        self.visit(item.context_expr)
                        backend = self._sdpa_backend(item.context_expr)
                        if backend is not False:
                            self.backends.append(backend)
                            pushed += 1
                self.statements(node.body)
                self.no_grad -= quiet
                del self.backends[len(self.backends) - pushed:]
            elif kind in _TRY:
                self.statements(node.body)
                for handler in node.handlers:
                    self.statements(handler.body)
                self.statements(node.orelse)
                self.statements(node.finalbody)
            elif kind is ast.Match:
                if self._hit(node.subject):
                    self.visit(node.subject)
                for case in node.cases:
                    self.statements(case.body)
            elif self._hit(node):
                self.visit(node)
            elif kind is ast.Assign:  # a name rebound to something else is no longer a known tensor
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.typed[-1].pop(target.id, None)

    def setting(self, kind: str, name: str, value: object, kwargs: tuple, node: ast.AST) -> None:
        scope = ".".join(self.scope) if self.functions else ("__main__" if self.main else None)
        self.settings.append(Setting(kind, name, value, kwargs, node.lineno, node.col_offset + 1, self.text(node),
                                     self.text(self.conditions[-1]) if self.conditions else None, scope))

    # --- names -----------------------------------------------------------------------
    def dotted(self, node: ast.AST) -> str | None:
        plain = _called(node)
        if plain is None:
            return None
        head, dot, rest = plain.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return None
        name = base + dot + rest
        return name if name in self.wanted else public_name(name, self.wanted)

    def kind_of(self, node: ast.AST) -> str | None:
        """'torch.Tensor' or 'tf.keras.Model' when the expression visibly is one."""
        if isinstance(node, ast.Name):
            for scope in reversed(self.typed):
                if node.id in scope:
                    return scope[node.id]
            return None
        if isinstance(node, ast.Call):
            name = self.dotted(node.func)
            if name is not None:
                if name in _KERAS_MODELS:
                    return "tf.keras.Model"
                parts = name.split(".")
                if parts[0] == "torch" and ((len(parts) == 2 and parts[1][:1].islower() and parts[1] not in _TORCH_NOT_TENSOR)
                                            or name.startswith("torch.nn.functional.")):
                    return "torch.Tensor"
                return None
            if isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_KEEPING:
                return "torch.Tensor" if self.kind_of(node.func.value) == "torch.Tensor" else None
        if isinstance(node, ast.Subscript):  # x[0] of a tensor is a tensor
            return "torch.Tensor" if self.kind_of(node.value) == "torch.Tensor" else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and self.members and node.attr in self.members[-1]:
            return "torch.Tensor"  # a module's parameter or buffer
        return None

    def _no_grad(self, expr: ast.expr) -> bool:
        """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)` (as a context or decorator)."""
        call = expr if isinstance(expr, ast.Call) else None
        name = self.dotted(call.func if call else expr)
        if name in ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode"):
            if name.endswith("inference_mode") and call and call.args and literal(call.args[0]) is False:
                return False
            return True
        return bool(name == "torch.set_grad_enabled" and call and call.args and literal(call.args[0]) is False)

    def _argument_types(self, node: ast.AST) -> dict[str, str]:
        """Arguments known to be tensors: annotated `torch.Tensor`, or the inputs of a module's `forward`."""
        out: dict[str, str] = {}
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        for arg in every:
            if arg.annotation is not None:
                name = self.dotted(arg.annotation)
                if name in _TENSOR_TYPES:
                    out[arg.arg] = _TENSOR_TYPES[name]
        if node.name == "forward" and self.members and every and every[0].arg == "self":
            for arg in every[1:]:
                if arg.annotation is None:
                    out.setdefault(arg.arg, "torch.Tensor")
        return out

    def _members(self, node: ast.ClassDef) -> set[str]:
        """`self.X = nn.Parameter(...)` and `self.register_buffer("X", ...)` anywhere in the class.
        When the class also initialises its parameters (a `reset_parameters` method, or an
        `nn.init.*` call), `nn.Parameter(torch.empty(...))` in it is not uninitialized memory."""
        found: set[str] = set()
        first, last = node.lineno, node.end_lineno or node.lineno
        source = "\n".join(self.lines[first - 1:last]) if self.lines else "Parameter register_buffer"
        if "Parameter" not in source and "register_buffer" not in source:
            return found
        walked = list(ast.walk(node))
        initialises = any(
            (isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name in _INITIALISERS)
            or (isinstance(sub, ast.Call) and (self.dotted(sub.func) or "").startswith("torch.nn.init."))
            for sub in walked)
        for sub in walked:
            if initialises and isinstance(sub, ast.Call) and self.dotted(sub.func) in _PARAMETER_MAKERS and sub.args:
                self.initialised.add(id(sub.args[0]))
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) \
                    and self.dotted(sub.value.func) in _PARAMETER_MAKERS:
                for target in sub.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                        found.add(target.attr)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "register_buffer" \
                    and sub.args and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
                found.add(sub.args[0].value)
        return found

    # --- scopes ------------------------------------------------------------------------
    def _sdpa_backend(self, expr: ast.expr) -> str | None | bool:
        """The one backend `sdpa_kernel(...)` allows (None: several or unreadable); False: not sdpa_kernel."""
        if not isinstance(expr, ast.Call) or self.dotted(expr.func) != SDPA_KERNEL:
            return False
        given = expr.args[0] if expr.args else next((k.value for k in expr.keywords if k.arg == "backends"), None)
        if isinstance(given, (ast.List, ast.Tuple)) and len(given.elts) == 1:
            given = given.elts[0]
        name = self.dotted(given) if given is not None else None
        if name is not None and name.startswith("torch.nn.attention.SDPBackend."):
            return SDPA_BACKENDS.get(name.rsplit(".", 1)[1])
        return None

    def _decorated(self, node: ast.AST) -> None:
        for decorator in node.decorator_list:
            if not self._hit(decorator):
                continue
            # @jax.jit is jax.jit(f): a call of the decorator's name with no other arguments
            name = self.dotted(decorator)
            if name in self.wanted:
                self.calls.append(Call(name, decorator.lineno, decorator.col_offset + 1,
                                       decorator.end_lineno or decorator.lineno, "@" + self.text(decorator, 40),
                                       (), (), False, True, False))
            else:
                self.visit(decorator)

    def text(self, node: ast.AST, limit: int = 60) -> str:
        """The node's source text (sliced from the line: ast.unparse costs more than the parse)."""
        line_no, end_no = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if line_no is not None and line_no == end_no and line_no <= len(self.lines):
            line = self.lines[line_no - 1]
            if line.isascii():
                piece = line[node.col_offset:node.end_col_offset]
            else:  # offsets count UTF-8 bytes
                piece = line.encode()[node.col_offset:node.end_col_offset].decode(errors="replace")
            return piece if len(piece) <= limit else piece[: limit - 3] + "..."
        return _text(node, limit)

    def literal(self, node: ast.AST) -> object:
        value = literal(node, text=False)
        if value is not _NOT_LITERAL:
            return value
        if isinstance(node, ast.Name) and self.params and node.id in self.params[-1]:
            return self.params[-1][node.id]  # a parameter every call in this file passes as the same literal
        if isinstance(node, ast.Attribute):
            name = self.dotted(node)
            if name in _STRING_ENUMS:
                return _STRING_ENUMS[name]  # tf.image.ResizeMethod.BICUBIC is "bicubic"
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts and len(node.elts) <= 8:
            items = tuple(literal(e, text=False) for e in node.elts)
            if all(isinstance(i, (int, float, str, bool)) or i is None for i in items):
                return items  # a tuple of literals: a fact for the scanner's own rules (output_size=(1, 1))
        prefix = None
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            prefix = str(node.values[0].value) or None
        return Unknown(self.text(node), prefix)

    def _leaf(self, node: ast.AST) -> None:
        """Names and constants hold no call: not walked (NodeVisitor's default would)."""

    visit_Name = visit_Constant = _leaf

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult) and MATMUL in self.wanted and self.fn_nodes is not None:
            ctx = self.fn_nodes[-1] if self.fn_nodes else self.tree
            if ctx is not None and (self._is_jax(node.left, ctx, 4) or self._is_jax(node.right, ctx, 4)):
                call = ast.copy_location(ast.Call(func=ast.Name(id="operator @", ctx=ast.Load()),
                                                  args=[node.left, node.right], keywords=[]), node)
                call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
                self._record(MATMUL, call, certain=True, method=False)

    def _is_jax(self, node: ast.AST, ctx: ast.AST, depth: int) -> bool:
        """The expression is visibly a JAX array: made by jax.numpy / jax.random / jax.nn / jax.lax, or a
        name every assignment of which in the function (or module) is."""
        if depth <= 0:
            return False
        if isinstance(node, ast.Call):
            name = self.dotted(node.func)
            return name is not None and name.startswith(_JAX_ARRAY_MAKERS)
        if isinstance(node, ast.Name):
            values = self._assigned_in(ctx).get(node.id, [])
            return bool(values) and all(self._is_jax(v, ctx, depth - 1) for v in values)
        if isinstance(node, ast.BinOp):
            return self._is_jax(node.left, ctx, depth - 1) or self._is_jax(node.right, ctx, depth - 1)
        return False

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.typed.append({})
        self.generic_visit(node)
        self.typed.pop()

    # --- assignments: types, attribute switches, environment ---------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        before = len(self.calls)
        self.generic_visit(node)
        if len(self.calls) > before and isinstance(node.value, ast.Call) and len(node.targets) == 1:
            self._module_never_called(node.targets[0], node.value, before)
        kind = self.kind_of(node.value)
        for target in node.targets:
            self._assigned(target, node.value, kind, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        if node.value is not None:
            self._assigned(node.target, node.value, self.kind_of(node.value), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        env = self._environ_key(node.target)
        if env is not None:
            self._env(env, node.value, node)

    def _assigned(self, target: ast.AST, value: ast.AST, kind: str | None, node: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if kind is not None:
                self.typed[-1][target.id] = kind
            else:
                self.typed[-1].pop(target.id, None)
            return
        env = self._environ_key(target)
        if env is not None:
            self._env(env, value, node)
            return
        if isinstance(target, ast.Attribute):
            name = self.dotted(target)
            if name in self.wanted:  # torch.backends.cudnn.benchmark = True is a KB "op" too
                value_seen = self.literal(value)
                if value_seen not in (False, None, 0):
                    self.calls.append(Call(name, node.lineno, node.col_offset + 1, node.end_lineno or node.lineno,
                                           self.text(node, 60), (), (), False, not isinstance(value_seen, Unknown), False))
            if name in self.watched:
                self.setting("attr", name, self.literal(value), (), node)

    def _environ_key(self, target: ast.AST) -> str | None:
        """'XLA_FLAGS' for os.environ['XLA_FLAGS'] (however os is imported)."""
        if isinstance(target, ast.Subscript) and self.dotted(target.value) == "os.environ":
            key = self.literal(target.slice)
            return key if isinstance(key, str) else None
        return None

    def _env(self, key: str, value: ast.AST, node: ast.AST) -> None:
        self.setting("env", key, _strings(value), (), node)

    # --- calls ---------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and isinstance(func.value, ast.Call):
            self.initialised.add(id(func.value))  # torch.empty(n).normal_(): written before it is read
        self.generic_visit(node)
        name = self.dotted(func)
        if name is not None:
            self._environ_call(name, node)
            if name == "torch.nn.functional.pad":
                self._pad(node)
                return
            spelled = _LAYER_FUNCTIONS.get(name)
            if spelled is not None and spelled in self.wanted:
                # tf.compat.v1.layers.dense(inputs, units, ...) builds Dense(units, ...) and applies it to inputs
                layer = ast.copy_location(ast.Call(func=node.func, args=node.args[1:],
                                                   keywords=[k for k in node.keywords if k.arg != "inputs"]), node)
                layer.end_lineno, layer.end_col_offset = node.end_lineno, node.end_col_offset
                self._record(spelled, layer, certain=True, method=False)
                return
            if name in self.wanted:
                if name in _EMPTY and id(node) in self.initialised:
                    return
                self._record(name, node, certain=True, method=False)
                return
            if name not in self.watched:
                return
            # A call that a fix is made of (torch.use_deterministic_algorithms(True)).
            self.setting("call", name, self.literal(node.args[0]) if node.args else None,
                         tuple((k.arg, self.literal(k.value)) for k in node.keywords if k.arg), node)
            return
        if isinstance(func, ast.Attribute):
            self._method(func, node)

    def _method(self, func: ast.Attribute, node: ast.Call) -> None:
        receiver = func.value
        # jax: x.at[i].add(y) is jax.numpy.ndarray.at
        if (func.attr in _JAX_AT_METHODS and isinstance(receiver, ast.Subscript)
                and isinstance(receiver.value, ast.Attribute) and receiver.value.attr == "at"):
            if func.attr == "set" and (_one_per_element(receiver.slice) or _constant_value(node)):
                return  # no index repeats (ints, slices), or every write is the same value: any order gives the same
            # The method is the `at.method` fact; unique_indices left out is JAX's default, False
            # (jax/_src/numpy/array_methods.py), which the KB cannot fill in: `.at` has no signature.
            facts: tuple = (("at.method", func.attr),)
            if not any(k.arg == "unique_indices" for k in node.keywords) and not any(k.arg is None for k in node.keywords):
                facts += (("unique_indices", False),)
            for op in self.methods.get("at", ()):
                if op.split(".")[0] in self.owners:
                    self._record(op, node, certain=False, method=True, facts=facts)
            return
        ops = [op for op in self.methods.get(func.attr, ()) if op.split(".")[0] in self.owners]
        if not ops:
            return
        kind = self.kind_of(receiver)
        for op in ops:
            owner = op.rsplit(".", 1)[0]
            if kind is None:
                self._record(op, node, certain=False, method=True)
            elif kind == owner or (kind == "torch.Tensor" and owner == "torch.Tensor"):
                self._record(op, node, certain=True, method=True)

    def _may_draw_randomness(self, func: ast.AST, depth: int = 3, defs: dict | None = None) -> bool:
        """False when the function (a lambda, a function or method of this module, a `functools.partial`
        of one, or a function or class of a module of the same code base imported here, and those it
        calls) visibly uses no random op; True when it may (or it cannot be read here)."""
        defs = self.defs if defs is None else defs
        body = self._body_of(func, defs)
        if body is None:
            return True
        if isinstance(body, tuple):  # a definition in another module of the code base, with that module's functions
            body, defs = body
        for sub in ast.walk(body):
            if isinstance(sub, ast.Attribute) and ("random" in sub.attr or sub.attr in _RANDOM_WORDS):
                return True
            if isinstance(sub, ast.Name) and ("random" in sub.id or sub.id in _RANDOM_WORDS):
                return True
            if isinstance(sub, ast.Call) and sub is not body:
                callee = sub.func
                if isinstance(callee, ast.Name) and callee.id in defs and defs[callee.id] is not body:
                    if depth <= 0 or self._may_draw_randomness(callee, depth - 1, defs):
                        return True
                elif isinstance(callee, ast.Name) and callee.id not in _BUILTINS and self.dotted(callee) is None:
                    return True  # a function from elsewhere: cannot tell
        return False

    def _made_on_host(self, node: ast.AST, ctx: ast.AST, depth: int, seen: set) -> str | None:
        """'host' when the expression is visibly a tensor made on the CPU (a torch factory called without
        `device=`, arithmetic on such tensors, a function of this module that returns one); 'scalar' for a
        Python number (a literal, `math.pi`, a parameter of the function); None when it may be anything else."""
        if depth <= 0:
            return None
        memo = (id(node), id(ctx))
        if memo in self.host_memo:
            return self.host_memo[memo]
        found = self._host_kind(node, ctx, depth, seen)
        if found is not None or not seen:
            self.host_memo[memo] = found
        return found

    def _seeded(self, node: ast.Call) -> bool:
        """`seed=x` where x is a parameter of the enclosing function annotated `int` (not Optional) or one
        the function asserts `is not None`: the op has its own seed, so its sequence is fixed."""
        given = next((k.value for k in node.keywords if k.arg == "seed"), None)
        if not isinstance(given, ast.Name) or not self.fn_nodes:
            return False
        fn = self.fn_nodes[-1]
        for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
            if arg.arg == given.id and isinstance(arg.annotation, ast.Name) and arg.annotation.id == "int":
                return True
        return any(isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and isinstance(n.test.left, ast.Name)
                   and n.test.left.id == given.id and len(n.test.ops) == 1 and isinstance(n.test.ops[0], ast.IsNot)
                   and isinstance(n.test.comparators[0], ast.Constant) and n.test.comparators[0].value is None
                   for n in ast.walk(fn))

    def _module_never_called(self, target: ast.AST, value: ast.Call, first: int) -> None:
        """`self.X = nn.Embedding(...)` in a class with its own `forward` that reads `self.X.weight` (or another
        attribute of it) and never calls `self.X(...)` nor hands `self.X` on: the module's own kernel never
        runs, so records of calling it do not apply."""
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return
        name = self.dotted(value.func)
        if name not in _CALLED_MODULES or not self.class_nodes:
            return
        cls = self.class_nodes[-1]
        why = f"self.{target.attr} is never called in its class (its weight is used directly)"
        has_forward = any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward"
                          for item in cls.body)
        reads_weight = any(isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute)
                           and sub.value.attr == target.attr and isinstance(sub.value.value, ast.Name)
                           and sub.value.value.id == "self" and isinstance(sub.ctx, ast.Load) for sub in ast.walk(cls))
        if not has_forward or self._called_with_unique_indices(cls, target.attr, name, value, first):
            return
        if not reads_weight:
            return  # only a whole module (its own forward) that visibly reads self.X.<attr> instead of calling it
        for sub in ast.walk(cls):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == target.attr \
                    and isinstance(sub.func.value, ast.Name) and sub.func.value.id == "self":
                return  # self.X(...) runs it
            if _hands_on(sub, target.attr, value):
                return
        for k in range(first, len(self.calls)):
            call = self.calls[k]
            if call.op == name and call.line == value.lineno:
                self.calls[k] = call._replace(ruled_out=call.ruled_out + tuple(
                    (rid, why) for rid in _CALLED_MODULES[name]))

    def _is_arange(self, node: ast.AST, fn: ast.AST | None) -> bool:
        """`torch.arange(...)`, or a name every assignment in the function makes so: indices that never repeat."""
        if isinstance(node, ast.Call) and self.dotted(node.func) == "torch.arange":
            return True
        if isinstance(node, ast.Name) and fn is not None:
            values = self._assigned_in(fn).get(node.id, [])
            return bool(values) and all(isinstance(v, ast.Call) and self.dotted(v.func) == "torch.arange" for v in values)
        return False

    def _called_with_unique_indices(self, cls: ast.ClassDef, attr: str, name: str, value: ast.Call, first: int) -> bool:
        """`self.X = nn.Embedding(...)` whose every call in its class is `self.X(torch.arange(...))` (a position
        lookup, directly or through a name only ever assigned an arange), and that is never handed on: the
        indices never repeat, so the atomic backward adds each row once and nothing accumulates out of order."""
        found = 0
        for fn in (n for n in ast.walk(cls) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for sub in ast.walk(fn):
                if _hands_on(sub, attr, value):
                    return False
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == attr \
                        and isinstance(sub.func.value, ast.Name) and sub.func.value.id == "self":
                    if len(sub.args) != 1 or sub.keywords or not self._is_arange(sub.args[0], fn):
                        return False
                    found += 1
        if not found:
            return False
        why = f"self.{attr} is only called with torch.arange indices: unique, so nothing accumulates"
        for k in range(first, len(self.calls)):
            call = self.calls[k]
            if call.op == name and call.line == value.lineno:
                self.calls[k] = call._replace(ruled_out=call.ruled_out + tuple(
                    (rid, why) for rid in _CALLED_MODULES[name]))
        return True

    def _assigned_in(self, ctx: ast.AST) -> dict[str, list[ast.expr]]:
        """Name -> the values assigned to it (`name = value`) anywhere in `ctx`; built once per function."""
        found = self.assign_memo.get(id(ctx))
        if found is None:
            found = {}
            for n in ast.walk(ctx):
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    found.setdefault(n.targets[0].id, []).append(n.value)
            self.assign_memo[id(ctx)] = found
        return found

    def _is_mask(self, node: ast.AST, ctx: ast.AST) -> bool:
        """`~mask`, a comparison, or a name every assignment in the function makes so: a boolean tensor,
        whose cumulative sum (even accumulated as float32, below 2**24) is a count, exact in any order."""
        if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert)):
            return True
        if isinstance(node, ast.Name):
            values = self._assigned_in(ctx).get(node.id, [])
            return bool(values) and all(isinstance(v, ast.Compare) or (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Invert))
                                        for v in values)
        return False

    def _host_kind(self, node: ast.AST, ctx: ast.AST, depth: int, seen: set) -> str | None:
        if isinstance(node, ast.Constant):
            return "scalar" if isinstance(node.value, (int, float)) and not isinstance(node.value, bool) else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self.aliases.get(node.value.id) == "math":
            return "scalar"
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            parts = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand]
            kinds = [self._made_on_host(p, ctx, depth - 1, seen) for p in parts]
            return None if None in kinds else ("host" if "host" in kinds else "scalar")
        if isinstance(node, ast.Subscript):
            return self._made_on_host(node.value, ctx, depth - 1, seen)
        if isinstance(node, ast.Name):
            if (id(ctx), node.id) in seen:
                return "scalar"  # x = x / x[0]: what x is comes from its other assignments
            seen = seen | {(id(ctx), node.id)}
            values = self._assigned_in(ctx).get(node.id, [])
            if not values:
                params = [a.arg for a in (*ctx.args.posonlyargs, *ctx.args.args, *ctx.args.kwonlyargs)] \
                    if isinstance(ctx, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
                return "scalar" if node.id in params else None  # a parameter: taken as a Python number
            kinds = [self._made_on_host(v, ctx, depth - 1, seen) for v in values]
            return None if None in kinds else ("host" if "host" in kinds else "scalar")
        if not isinstance(node, ast.Call) or any(k.arg == "device" for k in node.keywords):
            return None
        name = self.dotted(node.func)
        if name in _HOST_FACTORIES:
            return "host"
        if name is not None and name.startswith("torch.") and name.count(".") == 1 and name[6:] in _ELEMENTWISE:
            kinds = [self._made_on_host(a, ctx, depth - 1, seen) for a in node.args]
            return "host" if kinds and None not in kinds and "host" in kinds else None
        if isinstance(node.func, ast.Attribute) and node.func.attr in _ELEMENTWISE:
            return "host" if self._made_on_host(node.func.value, ctx, depth - 1, seen) == "host" else None
        if isinstance(node.func, ast.Name):  # a function of this module, or a name bound to some of them
            names = [node.func.id] if node.func.id in self.defs else [
                v.id for v in self._assigned_in(ctx).get(node.func.id, []) if isinstance(v, ast.Name)]
            if not names or any(n not in self.defs for n in names):
                return None
            for n in names:
                returns = [r.value for r in ast.walk(self.defs[n]) if isinstance(r, ast.Return)]
                if not returns or any(r is None or self._made_on_host(r, self.defs[n], depth - 1, seen) != "host"
                                      for r in returns):
                    return None
            return "host"
        return None

    def _body_of(self, func: ast.AST, defs: dict) -> ast.AST | tuple | None:
        if isinstance(func, ast.Lambda):
            return func
        if isinstance(func, ast.Name) and func.id in defs:
            return defs[func.id]
        if isinstance(func, ast.Name) and self.tree is not None:  # f = functools.partial(g, ...): g
            made = [n.value for n in ast.walk(self.tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name) and n.targets[0].id == func.id]
            if len(made) == 1 and isinstance(made[0], ast.Call) and self.dotted(made[0].func) in _PARTIALS and made[0].args:
                return self._body_of(made[0].args[0], defs)
            return None
        if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id in self.classes:
            return self.classes[func.func.id]  # an instance of a class of this module: its methods
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            for name in reversed(self.scope):  # self.method of the enclosing class
                if name in self.classes:
                    for item in self.classes[name].body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == func.attr:
                            return item
                    return None
            return None
        target = func.func if isinstance(func, ast.Call) else func  # module.f or module.Class(...)
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            found = local_module(self.filename, self.aliases.get(target.value.id, target.value.id))
            if found is not None and target.attr in found:
                return found[target.attr], found
        return None

    def _pad(self, node: ast.Call) -> None:
        """F.pad(x, pad, mode="reflect"|"replicate") runs the ReflectionPad/ReplicationPad kernels: aten's
        _pad_enum (https://github.com/pytorch/pytorch/blob/0298aaa1d1d16aebf4497823c9bff2c9e9efa4a4/aten/src/ATen/
        native/PadNd.cpp) sends a pad of length 2, 4, 6 to reflection_pad1d/2d/3d
        (replication_pad1d/2d/3d), as the nn.ReflectionPad*/ReplicationPad* modules do through F.pad."""
        given = dict((k.arg, k.value) for k in node.keywords if k.arg)
        mode_node = node.args[2] if len(node.args) > 2 else given.get("mode")
        mode = self.literal(mode_node) if mode_node is not None else "constant"
        if mode not in ("reflect", "replicate"):
            return
        pad = node.args[1] if len(node.args) > 1 else given.get("pad")
        size = len(pad.elts) if isinstance(pad, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in pad.elts) else None
        dims = size // 2 if size in (2, 4, 6) else 2
        op = f"torch.nn.{'ReflectionPad' if mode == 'reflect' else 'ReplicationPad'}{dims}d"
        if op not in self.wanted:
            return
        before = len(self.calls)
        self._record(op, node, certain=size is not None, method=False)
        if size is None and len(self.calls) > before:
            call = self.calls[-1]
            self.calls[-1] = call._replace(why=f"the pad {self.text(pad, 30) if pad is not None else '?'} is not a literal "
                                               "of length 2, 4 or 6 (taken as a 2-D pad)")

    def _environ_call(self, name: str, node: ast.Call) -> None:
        """os.environ.setdefault / .update, os.putenv: environment set in code."""
        if name in ("os.environ.setdefault", "os.putenv") and len(node.args) >= 2:
            key = self.literal(node.args[0])
            if isinstance(key, str):
                self._env(key, node.args[1], node)
        elif name == "os.environ.update":
            for k in node.keywords:
                if k.arg:
                    self._env(k.arg, k.value, node)
            if node.args and isinstance(node.args[0], ast.Dict):
                for key_node, value in zip(node.args[0].keys, node.args[0].values):
                    key = self.literal(key_node) if key_node is not None else None
                    if isinstance(key, str):
                        self._env(key, value, node)

    def _record(self, op: str, node: ast.Call, *, certain: bool, method: bool, facts: tuple = ()) -> None:
        """One call of `op`; `facts`: call facts the call's shape states that no argument holds
        (JAX's `at.method`)."""
        star = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                break
            args.append(self.literal(a))
        kwargs = tuple((k.arg, self.literal(k.value)) for k in node.keywords if k.arg)
        extra: tuple = facts
        if self.backends and self.backends[-1] and op.endswith(".scaled_dot_product_attention"):
            extra = (("backend", self.backends[-1]),)
        first = node.args[0] if node.args and not method else next((k.value for k in node.keywords if k.arg == "input"), None)
        ndim = _reshaped_ndim(first)
        if ndim is not None:
            extra += (("input.ndim", ndim),)
        else:
            least = _least_ndim(first)
            if least is not None:
                extra += (("input.min_ndim", (least,)),)  # a tuple: the scanner's own fact, never queried
        compiled = bool(self.compiled) and any(part in self.compiled for part in self.scope)
        ruled: tuple = ()
        if op in _TF_DATA_STAGES:
            mapped = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "map_func"), None)
            if mapped is not None and not self._may_draw_randomness(mapped):
                ruled = (("tf.data-loader-parallelism", "the mapped function draws no random numbers"),)
        quiet = self.no_grad > 0
        if method and self.buffers and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in self.buffers[-1]:
            quiet = True  # every call of this function passes a registered buffer here: no gradient flows into it
        data = node.func.value if method and isinstance(node.func, ast.Attribute) else first
        if data is not None and not self.default_device and self.fn_nodes \
                and self._made_on_host(data, self.fn_nodes[-1], 24, set()) == "host":
            extra += (("device", ("cpu",)),)  # the input is made on the host: the op runs on the CPU
        if op in _TF_SET_SEED and node.args and isinstance(_literal(node.args[0]), int):
            ruled += (("tf.random-seeds", "the call sets the global seed: it is the seeding, not an unseeded op"),)
        if op.startswith("tf.") and (self.tf_seeded or self._seeded(node)):
            ruled += (("tf.random-seeds", self.tf_seeded or "the op's seed is an int the function is given"),)
        if op.endswith(".cumsum") and data is not None and self.fn_nodes and self._is_mask(data, self.fn_nodes[-1]):
            ruled += (("torch.cumsum", "a running count of a boolean mask: integer values, exact in any order"),)
        why = None
        if method and not certain:
            why = f"{self.text(node.func.value, 30)} is not visibly a {op.rsplit('.', 1)[0]}" if isinstance(node.func, ast.Attribute) else None
        self.calls.append(Call(op, node.lineno, node.col_offset + 1, node.end_lineno or node.lineno,
                               self.text(node.func, 60) + "(...)", tuple(args), kwargs, star, certain, method, extra,
                               quiet, why, compiled, ruled))


def _one_per_element(index: ast.expr) -> bool:
    """An `.at[...]` index made of int literals, slices, `...` and `None` only: it names each element
    at most once, so no two writes meet."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis
               or type(p.value) is int)) or (isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.USub)
               and isinstance(p.operand, ast.Constant) and type(p.operand.value) is int) for p in parts)


def _constant_value(node: ast.Call) -> bool:
    """`.set(v)` with a number literal (or -literal) as the value: every write to an element is equal."""
    value = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "values"), None)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) and type(value.value) in (int, float, bool)


_PUBLIC: dict[tuple[str, int], str] = {}


# The submodules that define public names: `torch.nn.modules.conv.Conv2d` is `torch.nn.Conv2d`.
_DEFINED_IN = (
    (re.compile(r"^torch\.nn\.modules(?:\.[a-z_0-9]+)?\."), "torch.nn."),
    (re.compile(r"^torch\.utils\.data\.(?:dataloader|dataset|sampler|distributed)\."), "torch.utils.data."),
    (re.compile(r"^torch\.nn\.parameter\."), "torch.nn."),
    (re.compile(r"^torch\.nn\.attention\.[a-z_0-9]+\."), "torch.nn.attention."),
    (re.compile(r"^tf\.keras\.layers\.[a-z_0-9]+\."), "tf.keras.layers."),
)


def public_name(name: str, wanted: frozenset[str]) -> str:
    """The KB's name for a name spelled through the submodule that defines it:
    `torch.utils.data.dataloader.DataLoader` is `torch.utils.data.DataLoader`,
    `torch.nn.modules.conv.Conv2d` is `torch.nn.Conv2d`."""
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
    if len(_PUBLIC) < 65536:
        _PUBLIC[key] = found
    return found


def subclasses(classes: list, aliases: dict[str, str], wanted: frozenset[str]) -> dict[str, str]:
    """Classes of the module that subclass a KB-known class (`class MyConv(nn.Conv1d)`): their
    calls are that class's calls (name -> the KB name)."""
    found: dict[str, str] = {}
    for node in classes:
        for base in node.bases:
            parts: list[str] = []
            item = base
            while isinstance(item, ast.Attribute):
                parts.append(item.attr)
                item = item.value
            if not isinstance(item, ast.Name):
                continue
            root = aliases.get(item.id) or found.get(item.id)
            if root is None:
                continue
            name = ".".join([root, *reversed(parts)])
            name = name if name in wanted else public_name(name, wanted)
            if name in wanted:
                found[node.name] = name
                break
    return found


_TF_SET_SEED = frozenset({"tf.random.set_seed", "tf.compat.v1.set_random_seed", "tf.set_random_seed"})


def _tf_global_seed(tree: ast.Module, aliases: dict[str, str]) -> str:
    """Why TensorFlow's random ops of this module are seeded, when its top level (not under an `if`
    or in a function) calls `tf.random.set_seed(<int>)`: an op without a seed then takes one derived from
    the global seed, so the same sequence every run (tf.random.set_seed's documentation)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.args:
            name = _dotted(stmt.value.func, aliases)
            value = _literal(stmt.value.args[0])
            if name in _TF_SET_SEED and isinstance(value, int) and not isinstance(value, bool):
                return f"the module sets tf.random.set_seed({value}) at line {stmt.lineno}: ops without a seed follow it"
    return ""


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return canonical(".".join([aliases[node.id], *reversed(parts)]))


def _registered_buffers(cls: ast.ClassDef) -> frozenset[str]:
    """Names a class registers with `self.register_buffer("X", ...)` or through a local alias of it
    (`register_buffer = lambda name, val: self.register_buffer(name, ...)`), called with a literal name."""
    out = set()
    for sub in ast.walk(cls):
        if isinstance(sub, ast.Call) and sub.args and isinstance(sub.args[0], ast.Constant) \
                and isinstance(sub.args[0].value, str) \
                and ((isinstance(sub.func, ast.Attribute) and sub.func.attr == "register_buffer")
                     or (isinstance(sub.func, ast.Name) and sub.func.id == "register_buffer")):
            out.add(sub.args[0].value)
    return frozenset(out)


def buffer_parameters(tree: ast.Module, defs: dict[str, ast.AST]) -> dict[str, frozenset[str]]:
    """Module-level function -> its positional parameters that every call of it in this module passes
    a registered buffer of the calling class (`extract(self.alphas_cumprod, t, x.shape)`): buffers do
    not require grad, so no backward runs into them. A call from outside a class, with *args, or
    passing anything else for a parameter rules that parameter out; calls from other modules are not
    seen (a function called nowhere here gets nothing)."""
    if not defs:
        return {}
    seen: dict[str, dict[str, bool]] = {}
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    inside: set[int] = set()
    for cls in classes:
        buffers = _registered_buffers(cls)
        for sub in ast.walk(cls):
            if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in defs):
                continue
            inside.add(id(sub))
            fn = defs[sub.func.id]
            names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
            verdict = seen.setdefault(sub.func.id, {n: True for n in names})
            starred = any(isinstance(a, ast.Starred) for a in sub.args) or any(k.arg is None for k in sub.keywords)
            given = dict(zip(names, sub.args))
            given.update({k.arg: k.value for k in sub.keywords if k.arg})
            for n in names:
                value = given.get(n)
                verdict[n] = verdict[n] and not starred and isinstance(value, ast.Attribute) \
                    and isinstance(value.value, ast.Name) and value.value.id == "self" and value.attr in buffers
    for sub in ast.walk(tree):  # a call from module level or a plain function: nothing known there
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in seen and id(sub) not in inside:
            seen[sub.func.id] = {n: False for n in seen[sub.func.id]}
    return {name: frozenset(n for n, ok in v.items() if ok) for name, v in seen.items() if any(v.values())}


def literal_parameters(all_calls: list, defs: dict[str, ast.AST]) -> dict[str, dict[str, object]]:
    """Module-level function -> parameter -> its value, where every call of the function in this
    module passes that parameter as the same literal (or leaves it at a literal default) and no
    call passes *args or **kwargs. Calls from other modules are not seen."""
    seen: dict[str, list[ast.Call]] = {}
    for node in all_calls:
        if isinstance(node.func, ast.Name) and node.func.id in defs:
            seen.setdefault(node.func.id, []).append(node)
    out: dict[str, dict[str, object]] = {}
    for name, calls in seen.items():
        fn = defs[name]
        args = fn.args
        if args.vararg or args.kwarg or args.posonlyargs:
            continue
        names = [a.arg for a in args.args]
        defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        values: dict[str, set] = {}
        blocked: set[str] = set()
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                blocked.update(names)
                break
            given = dict(zip(names, call.args))
            given.update({k.arg: k.value for k in call.keywords if k.arg})
            for param in [*names, *(a.arg for a in args.kwonlyargs)]:
                node = given.get(param, defaults.get(param))
                value = _literal(node) if node is not None else _NOT_LITERAL
                if value is _NOT_LITERAL:
                    blocked.add(param)
                else:
                    values.setdefault(param, set()).add((type(value).__name__, value))
        known = {p: next(iter(v))[1] for p, v in values.items() if p not in blocked and len(v) == 1}
        if known:
            out[name] = known
    return out


_COMPILE = frozenset({"torch.compile"})


def compiled_scopes(found_in: Survey, aliases: dict[str, str], text: str) -> frozenset[str]:
    """Functions and classes of the module that run compiled: `@torch.compile` (with or without
    arguments), `torch.compile(f)` of a function defined here, `torch.compile(model)` / `model.compile()`
    where `model = Net(...)` and Net is a class defined here."""
    if "compile" not in text:
        return frozenset()

    def name_of(node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in aliases:
            return None
        return ".".join([aliases[node.id], *reversed(parts)])

    defined: set[str] = set()
    classes: set[str] = set()
    made: dict[str, str] = {}  # variable -> class defined here that made it
    found: set[str] = set()
    for node in found_in.functions:
        defined.add(node.name)
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if name_of(target) in _COMPILE:
                found.add(node.name)
    classes.update(node.name for node in found_in.classes)
    for node in found_in.assigns:
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id in classes:
            for t in node.targets:
                key = t.id if isinstance(t, ast.Name) else (t.attr if isinstance(t, ast.Attribute) else None)
                if key:
                    made[key] = node.value.func.id
    for node in found_in.calls:
        subject = None
        if name_of(node.func) in _COMPILE and node.args:
            subject = node.args[0]
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "compile" and not node.args:
            subject = node.func.value  # nn.Module.compile()
        if isinstance(subject, ast.Call) and isinstance(subject.func, ast.Name) and subject.func.id in classes:
            found.add(subject.func.id)  # torch.compile(Net(...))
            continue
        key = subject.id if isinstance(subject, ast.Name) else (subject.attr if isinstance(subject, ast.Attribute) else None)
        if key in defined:
            found.add(key)
        elif key in made:
            found.add(made[key])
    return frozenset(found)


_DIM_MOVES = frozenset({"transpose", "permute", "movedim", "moveaxis", "swapaxes", "swapdims"})


def _least_ndim(node: ast.AST | None) -> int | None:
    """`x.transpose(1, 2)` / `x.permute(0, 2, 1)`: a dimension named by a literal exists, so the
    tensor has at least that many dimensions (the idiom that moves classes to dim 1 for an N-D loss)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DIM_MOVES):
        return None
    dims = [_literal(a) for a in node.args]
    ints = [d for d in dims if isinstance(d, int) and not isinstance(d, bool)]
    if not ints or len(ints) != len(dims):
        return None
    return max(d + 1 if d >= 0 else -d for d in ints)


def _reshaped_ndim(node: ast.AST | None) -> int | None:
    """`x.view(-1, n)` / `x.reshape(a, b)`: the number of sizes given is the result's ndim."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RESHAPES):
        return None
    if node.keywords or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if len(node.args) == 1:
        only = node.args[0]
        if isinstance(only, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in only.elts):
            return len(only.elts)
        return None if not isinstance(only, ast.Constant) else 1
    return len(node.args)


def _strings(node: ast.AST) -> str | None:
    """The text an env value is built from: a literal, or the literal parts of an f-string or
    a concatenation ('--xla_gpu_deterministic_ops=true' in os.environ.get(...) + ' --xla...')."""
    value = literal(node)
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    parts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return " ".join(parts) if parts else None


def _is_main(test: ast.expr) -> bool:
    """`if __name__ == "__main__":` is how a script runs, not a condition on its switches."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    names = [n.id for n in sides if isinstance(n, ast.Name)]
    constants = [n.value for n in sides if isinstance(n, ast.Constant)]
    return names == ["__name__"] and constants == ["__main__"]


_METHOD_NAMES: dict[tuple[int, frozenset[str]], tuple[str, ...]] = {}


def _method_names(methods: dict[str, tuple[str, ...]], owners: frozenset[str]) -> tuple[str, ...]:
    key = (id(methods), owners)
    found = _METHOD_NAMES.get(key)
    if found is None:
        found = _METHOD_NAMES[key] = tuple(m for m, ops in methods.items() if any(op.split(".")[0] in owners for op in ops))
    return found


def aliases_of(tree: ast.Module) -> dict[str, str]:
    """Local name -> canonical dotted name, from every import statement in the module
    (statements only: an import is never inside an expression)."""
    found: dict[str, str] = {}
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        kind = type(node)
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
        elif kind in _COMPOUND:
            for field in ("body", "orelse", "finalbody"):
                stack.extend(getattr(node, field, ()))
            for handler in getattr(node, "handlers", ()):
                stack.extend(handler.body)
            for case in getattr(node, "cases", ()):
                stack.extend(case.body)
    return found


_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Match, *_TRY)
# Words in a file that can make a line interesting besides its import aliases and method names.
_ENV_WORDS = ("environ", "putenv")
# Substrings without which a file cannot call a framework or set its switches: not parsed.
_MARKERS = ("torch", "tensorflow", "jax", "horovod", "environ", "putenv")


def hit_lines(text: str, aliases: dict[str, str], methods: tuple[str, ...]) -> frozenset[int]:
    """Lines that mention an imported name, a matched method (`.index_add_`, `.at`) or the
    environment: the only places a finding or a switch can start (found at C speed by re)."""
    words = [re.escape(a) for a in aliases] + list(_ENV_WORDS)
    parts = []
    if words:
        parts.append(r"\b(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")\b")
    if methods:
        parts.append(r"\.\s*(?:" + "|".join(re.escape(m) for m in sorted(methods, key=len, reverse=True)) + r")\b")
    if any(v.startswith("jax") for v in aliases.values()):
        parts.append(r"[\w)\]][ \t]*@[ \t]*[\w(]")  # x @ w: the matmul operator on JAX arrays
    if not parts:
        return frozenset()
    pattern = re.compile("|".join(parts))
    lines: set[int] = set()
    line, last = 1, 0
    for match in pattern.finditer(text):
        start = match.start()
        line += text.count("\n", last, start)
        last = start
        lines.add(line)
    return frozenset(lines)


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


def analyse(text: str, filename: str, wanted: frozenset[str], methods: dict[str, tuple[str, ...]],
            watched: frozenset[str]) -> Module:
    """The module's calls of `wanted` names (and `methods`), and its calls of / assignments to
    `watched` names and its environment settings; raises SyntaxError for unparseable text."""
    tree = ast.parse(text, filename=filename)
    found = survey(tree, text)
    if not any(marker in text for marker in _MARKERS):
        return Module((), (), found.layout)
    aliases = aliases_of(tree)
    for name, base in subclasses(found.classes, aliases, wanted).items():
        aliases.setdefault(name, base)
    owners = frozenset(v.split(".")[0] for v in aliases.values()) & frozenset(METHOD_OWNERS)
    visitor = _Visitor(aliases, wanted, methods, set(owners), watched)
    visitor.lines = text.split("\n")
    visitor.filename, visitor.tree = filename, tree
    visitor.default_device = "set_default_device" in text
    if "set_seed" in text:
        visitor.tf_seeded = _tf_global_seed(tree, aliases)
    visitor.compiled = compiled_scopes(found, aliases, text)
    visitor.defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    visitor.bound = literal_parameters(found.calls, visitor.defs)
    if "register_buffer" in text:
        visitor.buffer_params = buffer_parameters(tree, visitor.defs)
    if ".map(" in text or ".interleave(" in text:  # nested functions too, for the mapped functions of tf.data
        for node in found.functions:
            visitor.defs.setdefault(node.name, node)
        visitor.classes = {node.name: node for node in found.classes}
    visitor.hits = hit_lines(text, aliases, _method_names(methods, owners))
    visitor.statements(tree.body)
    return Module(tuple(visitor.calls), tuple(visitor.settings), found.layout)


def _called(node: ast.AST) -> str | None:
    """`f` for f(...), `a.b.f` for a.b.f(...): a call's name when it is a dotted plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


class Survey(NamedTuple):
    """One pass over a module: its Layout, and the nodes later steps look at."""

    layout: Layout
    classes: list
    calls: list
    functions: list
    assigns: list


def _expression_calls(node: ast.AST, sink: list[str], calls: list) -> None:
    """Calls in an expression (iteratively: expressions can nest deeper than the stack)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is ast.Call:
            calls.append(item)
            name = _called(item.func)
            if name is not None:
                sink.append(name)
        stack.extend(ast.iter_child_nodes(item))


# Words that start or run a backward pass (or hand training to a library that does).
_BACKWARD = re.compile(r"\.backward\(|autograd\.grad\b|\bgrad\(|value_and_grad|GradientTape|\.fit\(|\.minimize\("
                       r"|\bTrainer\b|training_step|accelerator\.|\.step\(")


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
    classes: list = []
    calls: list = []
    defs: list = []
    assigns: list = []
    has_main = False

    def statement(node: ast.stmt, sink: list[str], prefix: str, module_level: bool) -> None:
        nonlocal has_main
        kind = type(node)
        if kind is ast.Import:
            for alias in node.names:
                imports.append((alias.name, 0, ()))
                if alias.asname:
                    bindings.append((alias.asname, alias.name, 0, None))
                else:
                    bindings.append((alias.name.split(".")[0], alias.name.split(".")[0], 0, None))
        elif kind is ast.ImportFrom:
            imports.append((node.module or "", node.level, tuple(a.name for a in node.names)))
            for alias in node.names:
                if alias.name != "*":
                    bindings.append((alias.asname or alias.name, node.module or "", node.level, alias.name))
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
            defs.append(node)
            for part in (*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)):
                _expression_calls(part, sink, calls)  # decorators and defaults run where the def is
            body: list[str] = []
            functions.append((prefix + node.name, body))
            for child in node.body:
                statement(child, body, prefix + node.name + ".", False)
        elif kind is ast.ClassDef:
            classes.append(node)
            for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                _expression_calls(part, sink, calls)
            for child in node.body:  # a class body runs where the class statement is
                statement(child, sink, prefix + node.name + ".", module_level)
        elif kind is ast.If and module_level and not prefix and _is_main(node.test):
            has_main = True
            for child in node.body:
                statement(child, in_main, prefix, True)
            for child in node.orelse:
                statement(child, sink, prefix, True)
        else:
            if kind is ast.Assign:
                assigns.append(node)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    statement(child, sink, prefix, module_level)
                elif isinstance(child, ast.excepthandler):
                    for inner in child.body:
                        statement(inner, sink, prefix, module_level)
                elif isinstance(child, ast.match_case):
                    for inner in child.body:
                        statement(inner, sink, prefix, module_level)
                else:
                    _expression_calls(child, sink, calls)

    for node in tree.body:
        statement(node, top, "", True)
    found = Layout(has_main, tuple(imports), tuple(bindings), tuple(top), tuple(in_main),
                   tuple((name, tuple(body)) for name, body in functions), bool(_BACKWARD.search(text)))
    return Survey(found, classes, calls, defs, assigns)
