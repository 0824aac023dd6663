"""What the walk knows about the code around a call, and the questions resolvers ask of it.

`Context` holds one module's state during the walk (its aliases, the enclosing scopes, the names
known to be tensors, the module facts of kb/scan/prepare.py) and answers: the KB name of an
expression (`dotted`), what an expression visibly is (`kind_of`: a tensor, a Keras model), a
literal through the function's known parameters (`literal`), and the data-flow questions the named
resolvers of kb/scan/resolvers.py ask: made on the host, a JAX array, a boolean mask, an arange,
a mapped function that draws no random numbers. kb/scan/visitor.py walks; this module reads.
"""

from __future__ import annotations

import ast
import builtins

from kb.scan import jaxarrays, reaching, receivers, unique
from kb.scan.nodes import iwalk
from kb.scan.prepare import local_module, sibling_function
from kb.scan.syntax import (
    NOT_FRAMEWORK, NOT_LITERAL, STORE_LIBRARIES, STRING_ENUMS, Function, Unknown, assigned_pairs, boolean, called, init_values, literal, paired,
    plain_literal, public_name, self_attribute, statements_in, text_of,
)

# Calls whose result is a torch tensor / a Keras model, for "certain" method matches.
_TORCH_NOT_TENSOR = frozenset({"load", "device", "no_grad", "manual_seed", "set_grad_enabled", "is_tensor",
                               "compile", "save", "get_default_dtype", "use_deterministic_algorithms"})
_TENSOR_KEEPING = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "bool",
                             "clone", "detach", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze",
                             "permute", "transpose", "requires_grad_"})
# The methods that turn a tensor into a Python or NumPy value.
_TO_HOST = frozenset({"numpy", "to_numpy", "tolist", "item"})
# Python's own generators: `rng = random.Random(seed)`; rng.shuffle, rng.random are no framework's methods.
PY_RANDOMS = frozenset({"random.Random", "random.SystemRandom"})
_KERAS_MODELS = frozenset({"tf.keras.Model", "tf.keras.Sequential", "tf.keras.models.Model", "tf.keras.models.Sequential"})
_RANDOM_WORDS = frozenset({"shuffle", "dropout", "Dropout", "uniform", "normal", "sample_distorted_bounding_box"})
# a distribution's draw (tfp.distributions / torch.distributions: `dist.sample()`, `rsample()`), named by none of
# the others nor by "random"; a method called, since `sample` is also a common name for one data element
_DRAW_METHODS = frozenset({"sample", "rsample", "sample_n"})
_BUILTINS = frozenset(dir(builtins))
_PARTIALS = frozenset({"functools.partial"})
# tensor methods that cast a boolean mask to 0s and 1s of another dtype
_CASTS = frozenset({"float", "double", "half", "int", "long", "to", "type"})
# torch factories that make a tensor on the default device (the CPU unless torch.set_default_device is called)
_HOST_FACTORIES = frozenset(f"torch.{n}" for n in (
    "linspace", "logspace", "arange", "zeros", "ones", "full", "tensor", "eye", "rand", "randn", "empty", "randint"))
# functions and methods whose result lives where their tensor inputs live
_ELEMENTWISE = frozenset({
    "cos", "sin", "exp", "log", "sqrt", "clip", "clamp", "sigmoid", "tanh", "abs", "pow", "cumprod", "cumsum",
    "float", "double", "neg", "reciprocal", "rsqrt", "log1p", "expm1", "clamp_min", "clamp_max"})


class Later:
    """The kind of a construction `x = Foo(...)` not asked yet (Context.kind_later): whether an imported `Foo` is a
    plain class of the code base needs its module parsed, and most such names are never a receiver kind_of is asked
    about. receivers.kind's answer for a call of an imported name depends only on the file (its imports, its
    classes, the modules they name), not on where the walk is: asked when the name is read, it is the same."""

    __slots__ = ("node",)

    def __init__(self, node: ast.Call) -> None:
        self.node = node


class Context:
    """One module's state during the walk, and the questions asked of it."""

    def __init__(self, aliases: dict[str, str], wanted: frozenset[str]) -> None:
        self.aliases, self.wanted = aliases, wanted
        self.lines: list[str] = []  # the module's source lines, for the text of nodes
        self.filename = ""  # the module's path, to read the modules of the same code base it imports
        self.tree: ast.Module | None = None
        self.typed: list[dict[str, str | Later]] = [{}]  # per scope: local name -> "torch.Tensor" | "tf.keras.Model"
        self.scope: list[str] = []  # enclosing classes and functions, outermost first
        self.members: list[set[str]] = []  # per enclosing class: `self.X` that are parameters or buffers
        self.fn_nodes: list[Function] = []  # enclosing functions, innermost last
        self.class_nodes: list[ast.ClassDef] = []  # enclosing classes, innermost last
        self.params: list[dict[str, object]] = []  # per enclosing function: parameters every call passes as one literal
        self.defs: dict[str, Function] = {}  # functions of the module by name (the last definition wins)
        self.classes: dict[str, ast.ClassDef] = {}  # classes of the module by name
        self.reusing_scopes = 0  # enclosing `with tf.variable_scope(..., reuse=True):` (kb/scan/tfvariables.py)
        self.initialised: set[int] = set()  # ids of `torch.empty(...)` nodes that are visibly written before use
        self.tf_seeded = ""  # why TF's random ops are seeded in this module (a module-level tf.random.set_seed(N))
        self.default_device = False  # the module calls torch.set_default_device: factories may make GPU tensors
        self.index_param: dict[str, str] = {}  # op -> the parameter holding its indices (rules.CodeRules)
        self.op_params: dict[str, tuple[tuple[str, object], ...]] = {}  # op -> its parameters as a call passes them
        self.assign_memo: dict[int, dict[str, list[ast.expr]]] = {}
        self.host_memo: dict[tuple[int, int], str | None] = {}
        self.attr_memo: dict[tuple[int, str], tuple[tuple, bool] | None] = {}
        self.class_memo: dict[int, dict[str, list[tuple[ast.expr | None, dict]]]] = {}
        self.called_names: set[str] | None = None  # names of module functions called (kb/scan/hostrandom.py)
        self.all_calls: list[ast.Call] = []  # every call of the module (kb/scan/survey.py), for what functions are passed
        self.fill_calls: list | None = None  # the module's torch.distributed collectives that fill a buffer (resolvers.py)
        self.passed_memo: dict[tuple[int, str], list[ast.expr]] = {}
        self.binding_memo: dict[int, dict[str, list[ast.expr | None]]] = {}  # Context.grad_free
        self.writes_memo: dict[int, bool] = {}
        self.reaching_memo: dict[int, reaching.Body] = {}  # kb/scan/reaching.py, per function
        self.alias_memo: dict[int, tuple[set[str | None], list[tuple[set[str], set[str]]]]] = {}  # reaching.untouched
        self.writes_of: dict[int, tuple[dict[str, int], bool]] = {}  # receivers: a class's attribute stores, setattr
        self.name_memo: tuple[dict[str, list[ast.Name]], dict[str, list[ast.Call]], dict[int, ast.AST]] | None = None  # gradient._named
        self.grad_marked: bool | None = None  # the module's text names requires_grad anywhere
        self._class_defs: dict[str, ast.ClassDef] | None = None

    # --- names and text ------------------------------------------------------------------
    def dotted(self, node: ast.AST) -> str | None:
        """The KB's name of a dotted expression through the module's imports (None: not imported)."""
        name = self.written(node)
        if name is None:
            return None
        return name if name in self.wanted else public_name(name, self.wanted)

    def written(self, node: ast.AST) -> str | None:
        """A dotted expression's name as the imports spell it (`tf.compat.v1.gather` under
        `import tensorflow.compat.v1 as tf`), before the KB's name replaces it (None: not imported)."""
        plain = called(node)
        if plain is None:
            return None
        if plain in self.aliases and "." in plain:
            return self.aliases[plain]  # another file's subclass of a KB class, through its module (conv.Conv1d)
        head, dot, rest = plain.partition(".")
        base = self.aliases.get(head)
        return None if base is None else base + dot + rest

    def text(self, node: ast.AST, limit: int = 60) -> str:
        """The node's source text (sliced from the line: ast.unparse costs more than the parse)."""
        line_no, end_no = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if line_no is not None and line_no == end_no and line_no <= len(self.lines):
            line = self.lines[line_no - 1]
            start, end = getattr(node, "col_offset", 0), getattr(node, "end_col_offset", None)  # set with lineno
            if line.isascii():
                piece = line[start:end]
            else:  # offsets count UTF-8 bytes
                piece = line.encode()[start:end].decode(errors="replace")
            return piece if len(piece) <= limit else piece[: limit - 3] + "..."
        return text_of(node, limit)

    def literal(self, node: ast.AST) -> object:
        """A literal argument's value: a plain literal, a parameter every call in the file passes as one
        literal, a string enumeration member, a tuple of literals; else Unknown with the text."""
        value = literal(node, text=False)
        if value is not NOT_LITERAL:
            return value
        if isinstance(node, ast.Name) and self.params and node.id in self.params[-1]:
            return self.params[-1][node.id]  # a parameter every call in this file passes as the same literal
        if self_attribute(node) and self.class_nodes:
            found = self.attribute_values(node.attr)
            if found is not None and found[1] and len(found[0]) == 1:
                return found[0][0]  # self.mode, set to one literal wherever the class sets it
        if isinstance(node, ast.Attribute):
            name = self.dotted(node)
            if name in STRING_ENUMS:
                return STRING_ENUMS[name]  # tf.image.ResizeMethod.BICUBIC is "bicubic"
        if isinstance(node, (ast.Tuple, ast.List)) and node.elts and len(node.elts) <= 8:
            items = tuple(literal(e, text=False) for e in node.elts)
            if all(isinstance(i, (int, float, str, bool)) or i is None for i in items):
                return items  # a tuple of literals: a fact for the scanner's own rules (output_size=(1, 1))
        prefix = None
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            prefix = str(node.values[0].value) or None
        return Unknown(self.text(node), prefix)

    def attribute_values(self, attr: str) -> tuple[tuple, bool] | None:
        """The values `self.<attr>` takes in the enclosing class: (values, certain), from every
        `self.<attr> = <literal>` in it, and `self.<attr> = <parameter>` of a method whose default is a
        literal (a default, not certain: a caller may pass another); None when any assignment is other."""
        cls = self.class_nodes[-1]
        key = (id(cls), attr)
        if key in self.attr_memo:
            return self.attr_memo[key]
        assigned = self.self_assignments(cls).get(attr, ())
        values: list = []
        certain = True
        found: tuple[tuple, bool] | None = None
        for value_node, defaults in assigned:
            value = plain_literal(value_node) if value_node is not None else NOT_LITERAL
            if value is NOT_LITERAL and isinstance(value_node, ast.Name) and value_node.id in defaults:
                value, certain = plain_literal(defaults[value_node.id]), False
            if value is NOT_LITERAL:
                self.attr_memo[key] = None
                return None
            if value not in values:
                values.append(value)
        if values:
            found = (tuple(values), certain)
        self.attr_memo[key] = found
        return found

    def self_assignments(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.expr | None, dict]]]:
        """attr -> (value, the method's parameter defaults) of every `self.<attr> = value` in the class's
        methods; built once per class."""
        found = self.class_memo.get(id(cls))
        if found is None:
            found = {}
            for fn in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
                args = fn.args
                names = [a.arg for a in (*args.posonlyargs, *args.args)]
                defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults))
                defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
                for sub in statements_in(fn):
                    if isinstance(sub, ast.Assign):
                        targets = sub.targets
                    elif isinstance(sub, ast.AnnAssign):
                        targets = [sub.target]
                    else:
                        continue
                    for target in targets:
                        if self_attribute(target):
                            found.setdefault(target.attr, []).append((sub.value, defaults))
            self.class_memo[id(cls)] = found
        return found

    def class_defs(self) -> dict[str, ast.ClassDef]:
        """Top-level classes of the module by name."""
        if self._class_defs is None:
            body = self.tree.body if self.tree is not None else []
            self._class_defs = {n.name: n for n in body if isinstance(n, ast.ClassDef)}
        return self._class_defs

    def passed(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[ast.expr]:
        """What every call of the module-level function `fn` in this file passes for `param` (empty when a
        call passes nothing for it, passes *args or **kwargs, or there is no call)."""
        key = (id(fn), param)
        if key in self.passed_memo:
            return self.passed_memo[key]
        names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        out: list[ast.expr] = []
        calls = [c for c in self.all_calls if isinstance(c.func, ast.Name) and c.func.id == fn.name]
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                out = []
                break
            given = dict(zip(names, call.args))
            given.update({k.arg: k.value for k in call.keywords if k.arg})
            if param not in given:
                out = []
                break
            value = given[param]
            if isinstance(value, ast.Name):  # the caller's `model = Net().to(device)`, then `train(model, ...)`
                caller = next((d for d in self.defs.values() if d.lineno <= call.lineno <= (d.end_lineno or d.lineno)), None)
                made = [v for v in self.assigned_in(caller).get(value.id, []) if v.lineno < call.lineno] if caller else []
                value = max(made, key=lambda v: v.lineno) if made else value
            out.append(value)
        self.passed_memo[key] = out
        return out

    def self_passed(self, cls: ast.ClassDef, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                    param: str) -> list[tuple[ast.expr, Function]]:
        """What every `self.<fn>(...)` call in the class's methods passes for the method's `param`, with the
        method of each call; empty when a call passes nothing for it (or *args) or there is no call."""
        names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        names = names if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list) else names[1:]
        out: list[tuple[ast.expr, Function]] = []
        for method in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for c in (c for c in iwalk(method) if isinstance(c, ast.Call) and self_attribute(c.func, fn.name)):
                given = dict(zip(names, c.args)) if not any(isinstance(a, ast.Starred) for a in c.args) else {}
                given.update({k.arg: k.value for k in c.keywords if k.arg})
                if param not in given:
                    return []
                out.append((given[param], method))
        return out

    def retype(self, target: ast.AST, value: ast.AST, kind: str | Later | None) -> None:
        """`name = value` rebinds the name's kind (`kind`, the value's); `a, b = x, y` gives each name its own
        value's kind (a call's only, where `kind` is None for a value that is not a call)."""
        pairs = paired(target, value)
        for one, made in pairs:
            if isinstance(one, ast.Name):
                found = kind if len(pairs) == 1 and one is target else (
                    self.kind_of(made) if kind is not None or isinstance(made, ast.Call) else None)
                if found is not None:
                    self.typed[-1][one.id] = found
                else:
                    self.typed[-1].pop(one.id, None)

    def kind_of(self, node: ast.AST) -> str | None:
        """'torch.Tensor' or 'tf.keras.Model' when the expression visibly is one."""
        if isinstance(node, ast.Name):
            for scope in reversed(self.typed):
                if node.id in scope:
                    found = scope[node.id]
                    if isinstance(found, Later):  # asked now, once: None is no kind here, as if retype had popped it
                        asked = receivers.kind(self, found.node)
                        if asked is None:
                            del scope[node.id]
                            continue
                        found = scope[node.id] = asked
                    return found
            return receivers.kind(self, node)  # `self` of a class of the code base with no framework base
        return self._kind(node, False)  # type: ignore[return-value]

    def kind_later(self, node: ast.AST) -> str | Later | None:
        """kind_of for the value bound to a plain name: a construction of an imported name is a Later, asked
        only if kind_of reads the name (a large code base's assignments parsed hundreds of imported files)."""
        return self.kind_of(node) if isinstance(node, ast.Name) else self._kind(node, True)

    def _kind(self, node: ast.AST, later: bool) -> str | Later | None:
        if isinstance(node, ast.Call):
            name = self.dotted(node.func)
            if name is not None:
                if name in _KERAS_MODELS:
                    return "tf.keras.Model"
                if name in PY_RANDOMS:
                    return "random"
                if name == "torch.Generator":
                    return "torch.Generator"  # g = torch.Generator(): g.seed() is torch.Generator.seed
                if name.startswith("numpy.random."):
                    return "numpy"  # np.random.default_rng(), RandomState(...): NumPy's generators, not torch's
                parts = name.split(".")
                if parts[0] == "torch" and ((len(parts) == 2 and parts[1][:1].islower() and parts[1] not in _TORCH_NOT_TENSOR)
                                            or name.startswith("torch.nn.functional.")):
                    return "torch.Tensor"
                if parts[0] in NOT_FRAMEWORK and len(parts) == 2 and parts[1][:1].islower():
                    return parts[0]  # np.zeros(...), pd.read_csv(...): another library's object
                if later and not (isinstance(node.func, ast.Name) and node.func.id == "super"):  # super(): where the walk is
                    return Later(node)
                return receivers.kind(self, node)  # multiprocessing.Pool(...), a code-base class's instance
            if isinstance(node.func, ast.Attribute):
                if node.func.attr in _TO_HOST:
                    return "numpy"  # x.numpy(), x.tolist(), x.item(): no longer a framework tensor
                owner = self.kind_of(node.func.value)
                if owner == "numpy":
                    return "numpy"  # rng.randn(...), arr.sum(): a NumPy generator's or array's method gives NumPy values
                if owner in STORE_LIBRARIES:
                    return owner  # env.begin(write=True) of an lmdb environment: a transaction, no tensor
                if node.func.attr in _TENSOR_KEEPING:
                    kind = self.kind_of(node.func.value)
                    return kind if kind in ("torch.Tensor", "numpy") else None
        if isinstance(node, ast.Subscript):  # x[0] of a tensor is a tensor
            kind = self.kind_of(node.value)
            return kind if kind in ("torch.Tensor", "numpy") else None
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.JoinedStr)) \
                or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return "python"  # a list, dict or string: not a framework object
        if self_attribute(node) and self.members and node.attr in self.members[-1]:
            return "torch.Tensor"  # a module's parameter or buffer
        return receivers.kind(self, node) if isinstance(node, ast.Call) or self_attribute(node) else None  # super(), self.rng

    # --- data flow within a function ---------------------------------------------------------
    def assigned_in(self, ctx: ast.AST) -> dict[str, list[ast.expr]]:
        """Name -> the values assigned to it (`name = value`) anywhere in `ctx`; built once per function."""
        found = self.assign_memo.get(id(ctx))
        if found is None:
            found = {}
            for n in (statements_in(ctx) if isinstance(ctx, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      else iwalk(ctx)):
                if type(n) is ast.Assign and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    found.setdefault(n.targets[0].id, []).append(n.value)
                elif type(n) is ast.Assign and len(n.targets) == 1:
                    for name, value in assigned_pairs(n.targets[0], n.value):  # `a, b = x, y`: a = x and b = y
                        found.setdefault(name, []).append(value)
            self.assign_memo[id(ctx)] = found
        return found

    def is_jax(self, node: ast.AST, ctx: ast.AST, depth: int, traced: bool = True) -> bool:
        """The expression is visibly a JAX array (kb/scan/jaxarrays.py `is_jax`)."""
        return jaxarrays.is_jax(self, node, ctx, depth, traced)

    def is_mask(self, node: ast.AST, ctx: ast.AST) -> bool:
        """`~mask`, a comparison (`x.ge(0)` too), a cast of one to numbers (`(x != 0).float()`, `.to(torch.float32)`), or a name
        every assignment in the function makes so: a boolean tensor (as 0s and 1s)."""
        if boolean(node):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CASTS \
                and (node.func.attr in ("float", "double", "half", "int", "long") or node.args or node.keywords):
            return self.is_mask(node.func.value, ctx)
        if isinstance(node, ast.Name):
            values = self.assigned_in(ctx).get(node.id, [])
            return bool(values) and all(boolean(v) for v in values)
        return False

    def is_arange(self, node: ast.AST, fn: ast.AST | None) -> bool:
        """`torch.arange(...)`, or a name every assignment in the function makes so: indices that never repeat."""
        if isinstance(node, ast.Call) and self.dotted(node.func) == "torch.arange":
            return True
        if isinstance(node, ast.Name) and fn is not None:
            values = self.assigned_in(fn).get(node.id, [])
            return bool(values) and all(isinstance(v, ast.Call) and self.dotted(v.func) == "torch.arange" for v in values)
        return False

    def is_unique(self, node: ast.AST, fn: ast.AST | None, depth: int = 4, rows: bool = False) -> bool:
        """Indices that never repeat (kb/scan/unique.py)."""
        return unique.is_unique(self, node, fn, depth, rows)

    def argument(self, op: str, node: ast.Call, name: str) -> ast.AST | None:
        """The expression a call passes for the op's parameter `name` (keyword or position), or None."""
        given = next((k.value for k in node.keywords if k.arg == name), None)
        if given is not None:
            return given
        names = [n for n, _ in self.op_params.get(op, ())]
        position = names.index(name) if name in names else None
        if position is not None and position < len(node.args) \
                and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
            return node.args[position]
        return None

    def made_on_host(self, node: ast.AST, ctx: ast.AST, depth: int, seen: set) -> str | None:
        """'host' when the expression is visibly a tensor made on the CPU (a torch factory called without
        `device=`, arithmetic on such tensors, a function of this module that returns one); 'scalar' for a
        Python number (a literal, `math.pi`, a parameter of the function); None when it may be anything else.
        In a module's `__init__`, `self.x` is what `__init__` assigns or registers as that buffer: the
        constructor runs before the program moves the module to a device (unless it moves itself there)."""
        if depth <= 0:
            return None
        memo = (id(node), id(ctx))
        if memo in self.host_memo:
            return self.host_memo[memo]
        found = self._host_kind(node, ctx, depth, seen)
        if found is not None or not seen:
            self.host_memo[memo] = found
        return found

    def _host_kind(self, node: ast.AST, ctx: ast.AST, depth: int, seen: set) -> str | None:
        if isinstance(node, ast.Constant):
            return "scalar" if isinstance(node.value, (int, float)) and not isinstance(node.value, bool) else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self.aliases.get(node.value.id) == "math":
            return "scalar"
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            parts = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand]
            kinds = [self.made_on_host(p, ctx, depth - 1, seen) for p in parts]
            return None if None in kinds else ("host" if "host" in kinds else "scalar")
        if isinstance(node, ast.Subscript):
            return self.made_on_host(node.value, ctx, depth - 1, seen)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and isinstance(ctx, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.name == "__init__":
            if (id(ctx), "self." + node.attr) in seen:
                return None
            made = init_values(ctx, node.attr)
            kinds = [self.made_on_host(v, ctx, depth - 1, seen | {(id(ctx), "self." + node.attr)}) for v in made]
            return "host" if made and all(k == "host" for k in kinds) else None
        if isinstance(node, ast.Name):
            if (id(ctx), node.id) in seen:
                return "scalar"  # x = x / x[0]: what x is comes from its other assignments
            seen = seen | {(id(ctx), node.id)}
            values = self.assigned_in(ctx).get(node.id, [])
            if not values:
                params = [a.arg for a in (*ctx.args.posonlyargs, *ctx.args.args, *ctx.args.kwonlyargs)] \
                    if isinstance(ctx, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
                return "scalar" if node.id in params else None  # a parameter: taken as a Python number
            kinds = [self.made_on_host(v, ctx, depth - 1, seen) for v in values]
            return None if None in kinds else ("host" if "host" in kinds else "scalar")
        if not isinstance(node, ast.Call) or any(k.arg == "device" for k in node.keywords):
            return None
        name = self.dotted(node.func)
        if name in _HOST_FACTORIES:
            return "host"
        if name is not None and name.startswith("torch.") and name.count(".") == 1 and name[6:] in _ELEMENTWISE:
            kinds = [self.made_on_host(a, ctx, depth - 1, seen) for a in node.args]
            return "host" if kinds and None not in kinds and "host" in kinds else None
        if isinstance(node.func, ast.Attribute) and node.func.attr in _ELEMENTWISE:
            return "host" if self.made_on_host(node.func.value, ctx, depth - 1, seen) == "host" else None
        if isinstance(node.func, ast.Name):  # a function of this module, or a name bound to some of them
            names = [node.func.id] if node.func.id in self.defs else [
                v.id for v in self.assigned_in(ctx).get(node.func.id, []) if isinstance(v, ast.Name)]
            if not names or any(n not in self.defs for n in names):
                return None
            for n in names:
                returns = [r.value for r in iwalk(self.defs[n]) if isinstance(r, ast.Return)]
                if not returns or any(r is None or self.made_on_host(r, self.defs[n], depth - 1, seen) != "host"
                                      for r in returns):
                    return None
            return "host"
        return None

    # --- functions handed to other functions --------------------------------------------------
    def body_of(self, func: ast.AST, defs: dict) -> ast.AST | tuple | None:
        """The definition a function expression runs: a lambda, a function of this module, a
        `functools.partial` of one, a class instance's methods, `self.method`, or a function or class
        of a module of the same code base ((definition, that module's definitions))."""
        if isinstance(func, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            return func  # a lambda, or a definition already found (kb/scan/mapped.py)
        if isinstance(func, ast.Name) and func.id in defs:
            return defs[func.id]
        if isinstance(func, ast.Name) and self.tree is not None:  # f = functools.partial(g, ...): g
            made = [n.value for n in iwalk(self.tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name) and n.targets[0].id == func.id]
            if len(made) == 1 and isinstance(made[0], ast.Call) and self.dotted(made[0].func) in _PARTIALS and made[0].args:
                return self.body_of(made[0].args[0], defs)
            return sibling_function(self.tree, self.filename, func.id) if defs is self.defs else None  # from .m import f
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

    def _own_module(self, name: str) -> bool:
        """The imported name stands for a module of the code base (read with kb/scan/prepare.py's local_module)."""
        return local_module(self.filename, self.aliases[name]) is not None

    def _fixed_layer(self, name: str) -> bool:
        """Every module-level assignment of `name` builds a Keras preprocessing layer that draws nothing
        (`text_vectorization = layers.TextVectorization(...)`): calling it in a mapped function is no draw."""
        if self.tree is None:
            return False
        made = self.assigned_in(self.tree).get(name, [])
        return bool(made) and all(isinstance(v, ast.Call) and (d := self.dotted(v.func)) is not None
                                  and d.split(".")[0] in ("keras", "tf") and d.rpartition(".")[2] in _FIXED_LAYERS
                                  for v in made)

    def may_draw_randomness(self, func: ast.AST, depth: int = 3, defs: dict | None = None) -> bool:
        """False when the function (a lambda, a function or method of this module, a `functools.partial`
        of one, or a function or class of a module of the same code base imported here, and those it
        calls) visibly uses no random op; True when it may (or it cannot be read here)."""
        defs = self.defs if defs is None else defs
        body = self.body_of(func, defs)
        if body is None:
            return not _draws_nothing(self.dotted(func) if isinstance(func, (ast.Name, ast.Attribute)) else None)
        if isinstance(body, tuple):  # a definition in another module of the code base, with that module's functions
            body, defs = body
        inner = {n.name for n in iwalk(body) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not body}
        for sub in iwalk(body):
            if isinstance(sub, ast.Attribute) and ("random" in sub.attr or sub.attr in _RANDOM_WORDS):
                return True
            if isinstance(sub, ast.Name) and ("random" in sub.id or sub.id in _RANDOM_WORDS):
                return True
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _DRAW_METHODS:
                return True
            if isinstance(sub, ast.Call) and sub is not body:
                callee = sub.func
                if isinstance(callee, ast.Name) and callee.id in defs and defs[callee.id] is not body:
                    if depth <= 0 or self.may_draw_randomness(callee, depth - 1, defs):
                        return True
                elif isinstance(callee, ast.Name) and callee.id not in _BUILTINS and callee.id not in inner \
                        and self.dotted(callee) is None and not self._fixed_layer(callee.id) \
                        and (depth <= 0 or self.may_draw_randomness(callee, depth - 1, defs)):
                    return True  # a function from elsewhere (not one defined inside, nor one of its folder's): cannot tell
                elif defs is self.defs and isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) \
                        and (callee.value.id == "self" or callee.value.id in self.aliases and self._own_module(callee.value.id)) \
                        and (depth <= 0 or self.may_draw_randomness(callee, depth - 1, defs)):
                    return True  # `augmentation.flip(x)` of a module of the code base, `self.dataset_parser(x)` (automl)
        return False


# Keras preprocessing layers that map their input without a draw (a vocabulary, a scale, a fixed crop or resize)
_FIXED_LAYERS = frozenset({"TextVectorization", "StringLookup", "IntegerLookup", "Normalization", "Rescaling", "Resizing",
                           "CenterCrop", "Hashing", "CategoryEncoding", "Discretization"})


# libraries whose functions, named in full, are known: a function of theirs handed on as a value
# (`ds.map(tf.io.decode_png)`, `graph.map(tf.stop_gradient, fields)`) draws only what its name says
_KNOWN_LIBRARIES = frozenset({"tf", "tensorflow", "numpy", "math", "jax", "torch"})
_RANDOM_PARTS = ("rand", "shuffle", "dropout", "sample", "noise", "uniform", "normal", "distribution", "bernoulli",
                 "multinomial", "poisson", "gamma", "categorical", "fractional")


def _draws_nothing(name: str | None) -> bool:
    """A function of a known library (`tf.stop_gradient`) no part of whose name names a random draw
    (rand, randn, random, shuffle, dropout, sample, noise, a distribution's name): it draws no random numbers."""
    if name is None or name.split(".")[0] not in _KNOWN_LIBRARIES:
        return False
    return not any(word in part.lower() for part in name.split(".") for word in _RANDOM_PARTS)
