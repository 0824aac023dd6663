"""The walk over one module: statements (scopes, `if` conditions, `with` contexts, no-grad regions)
and, on the lines worth visiting, the expressions that call a KB-known name, set a switch or the
environment, or assign what a later call reads.

Static only: names are resolved through the module's imports (`import torch.nn.functional
as F`, `from jax import numpy as jnp`), flow-insensitively (an import anywhere in the file counts
everywhere in it, as in a notebook run top to bottom). A method call (`x.index_add_(...)`) matches
a class-qualified KB name (`torch.Tensor.index_add_`) when the file imports that framework; it is
*certain* only when the receiver was visibly made by the framework, else *possible*. What the code
around a call says about it comes from the named rules of kb/scan/resolvers.py.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from kb.scan import environ, gradient, members, pooling, rank, receivers, resolvers, seeds, tfcompat, tfdata, values  # noqa: F401 (pooling: its code rule)
from kb.scan import classparams, cudaguard, graphreset, handedon, hostrandom, lossrank, partials, tfvariables
from kb.scan.context import Context, Later
from kb.scan.nodes import iwalk
from kb.scan.rules import CodeRules
from kb.scan.survey import FIELDS, scope_hit
from kb.scan.syntax import TRY, Call, Function, Setting, Unknown, is_main, least_ndim, literal, parameter_defaults, public_name
from kb.scan.syntax import reshaped_ndim

# Annotations that say an argument is a framework tensor.
_TENSOR_TYPES = {"torch.Tensor": "torch.Tensor", "torch.nn.Parameter": "torch.Tensor", "torch.nn.parameter.Parameter": "torch.Tensor"}
_NO_GRAD = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.inference_mode")
# Builtins whose arguments name a function or class without using it (`isinstance(m, nn.Conv2d)`).
_NOT_A_USE = frozenset({"isinstance", "issubclass", "hasattr", "getattr", "setattr", "type", "id", "print", "repr",
                        "str", "callable", "super", "vars", "dir"})
_FLAGS = ("torch.backends.",)  # attributes that are switches, not functions: reading one uses nothing
_PARTIAL = "functools.partial"
_VALUE_TYPES = frozenset({ast.Attribute, ast.Name, ast.Dict, ast.IfExp, ast.Call})
_TORCHVISION_MODELS = "torchvision.models."  # models whose layers the scan lists (kb/scan/torchvision_models.py)

_SCOPE, _IF, _LOOP, _WITH, _TRY, _MATCH = 1, 2, 3, 4, 5, 6  # statements()'s roles (0: a simple statement)
_STATEMENT_ROLES: dict[type, int] = {ast.FunctionDef: _SCOPE, ast.AsyncFunctionDef: _SCOPE, ast.ClassDef: _SCOPE, ast.If: _IF,
                                     ast.For: _LOOP, ast.AsyncFor: _LOOP, ast.While: _LOOP, ast.With: _WITH, ast.AsyncWith: _WITH,
                                     ast.Match: _MATCH, **dict.fromkeys(TRY, _TRY)}
_HANDLERS: dict[tuple[type, type], Callable[[Visitor, ast.AST], None]] = {}  # (visitor class, node class) -> visit_X


def _constant(value: object) -> ast.expr:
    """A literal as the expression that spells it (a tuple as a tuple of constants)."""
    if isinstance(value, tuple):
        return ast.Tuple(elts=[_constant(v) for v in value], ctx=ast.Load())
    return ast.Constant(value)  # type: ignore[arg-type]  # a plain literal of the generated table


class Visitor(Context, ast.NodeVisitor):
    """Statements are walked by `statements()` (scopes, `if` conditions, `with` contexts);
    only statements on a hit line are visited down to their expressions."""

    def __init__(self, aliases: dict[str, str], wanted: frozenset[str], methods: dict[str, tuple[str, ...]],
                 owners: set[str], watched: frozenset[str], rules: CodeRules) -> None:
        super().__init__(aliases, wanted)
        self.methods, self.owners, self.watched = methods, owners, watched
        self.by_op, self.index_param, self.op_params = rules.by_op, rules.index_param, rules.params
        self.shape_ops = rules.shape_ops
        self.backward_ops = rules.backward_ops
        self.calls: list[Call] = []
        self.settings: list[Setting] = []
        # (line, col, function, parameter, positional index or -1) of a recorded op named as a parameter's default
        self.defaults: list[tuple[int, int, str, str, int]] = []
        self.conditions: list[ast.expr] = []  # enclosing `if` tests (not `if __name__ == "__main__"`)
        self.backends: list[str | None] = []  # enclosing sdpa_kernel contexts: the one backend allowed, or None
        self.no_grad = 0  # enclosing no-grad contexts and decorated functions
        self.decorated: ast.AST | None = None  # the function whose decorators are being read
        self.compiled: frozenset[str] = frozenset()  # functions and classes of the module that torch.compile compiles
        self.bound: dict[str, dict[str, object]] = {}  # function name -> parameter -> the one literal every call passes
        self.functions = 0  # how many enclosing scopes are functions
        self.buffer_params: dict[str, frozenset[str]] = {}  # function -> parameters every call passes a registered buffer
        self.buffers: list[frozenset[str]] = []  # per enclosing function: those parameters
        self.main = False  # inside the module-level `if __name__ == "__main__":` block
        self.hits: tuple[int, ...] | None = None  # lines that may hold something of interest, sorted (None: all)
        self._parameter_text = classparams.ParameterText()  # searched for the classes that make parameters

    # --- statements: walked here, so that expressions without a hit are never visited -----
    def _hit(self, node: ast.expr | ast.stmt) -> bool:
        if self.hits is None:
            return True
        first = node.lineno
        k = bisect_left(self.hits, first)  # the first hit at or after the node's first line
        return k < len(self.hits) and self.hits[k] <= (node.end_lineno or first)

    def statements(self, body: list[ast.stmt]) -> None:
        roles, hits = _STATEMENT_ROLES, self.hits  # a role per class: one lookup per statement, not isinstance tests
        node: Any  # each role reads its class's fields
        for node in body:
            role = roles.get(type(node), 0)
            if role == 0:  # a simple statement (most): self._hit(node) inlined
                if hits is None or ((k := bisect_left(hits, node.lineno)) < len(hits) and hits[k] <= (node.end_lineno or node.lineno)):
                    self.visit(node)
                elif type(node) is ast.Assign:  # a name rebound: to another library's object (np.zeros), or to anything else
                    kind = self.kind_later(node.value) if isinstance(node.value, ast.Call) else None
                    for target in node.targets:
                        self.retype(target, node.value, kind)
            elif role == _SCOPE and scope_hit(hits, node):  # one without a hit has none in its own lines: no case below
                self._scope(node)
            elif role == _IF:
                if self._hit(node.test):
                    self.visit(node.test)
                main = is_main(node.test) and not self.scope
                # a once-per-process guard (graphreset.first_use_guard) holds on the first call: no condition
                kept = not main and not graphreset.first_use_guard(node.test, self.dotted) and not cudaguard.on_gpu(node.test, self.dotted, self.tree, self.lines)
                if kept:
                    self.conditions.append(node.test)
                self.main = self.main or main
                self.statements(node.body)
                self.main = self.main and not main
                if kept:
                    self.conditions.pop()
                if not main:
                    self.conditions.append(node.test)  # the else branch runs only where the guard fails
                self.statements(node.orelse)
                if not main:
                    self.conditions.pop()
            elif role == _WITH:
                self._with(node)
            elif role == _TRY:
                for part in (node.body, *(handler.body for handler in node.handlers), node.orelse, node.finalbody):
                    self.statements(part)
            elif role == _LOOP or role == _MATCH:  # its header on a hit line, then its bodies
                header = node.subject if role == _MATCH else node.test if type(node) is ast.While else node.iter
                if self._hit(header):
                    self.visit(header)
                for part in [case.body for case in node.cases] if role == _MATCH else (node.body, node.orelse):
                    self.statements(part)

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        """A class or function: its decorators, then its body with its own scope pushed."""
        cls = isinstance(node, ast.ClassDef)
        self._decorated(node)
        if not isinstance(node, ast.ClassDef):
            method = bool(self.scope and self.class_nodes and self.scope[-1] == self.class_nodes[-1].name)
            for arg, default, index in parameter_defaults(node.args, method):
                if self._hit(default):
                    before = len(self.calls)
                    self._reference(default)  # `reducer=tf.math.unsorted_segment_sum`, in the enclosing scope
                    called = self.class_nodes[-1].name if method and node.name == "__init__" else node.name  # built: Class(...)
                    self.defaults += [(c.line, c.col, called, arg, index) for c in self.calls[before:]]
        quiet = not cls and any(self._no_grad(d) for d in node.decorator_list)
        self.no_grad += quiet
        if isinstance(node, ast.ClassDef):
            self.typed.append({})
            self.members.append(classparams.members(self, self._parameter_text, node))
            self.class_nodes.append(node)
        else:
            self.params.append(self.bound.get(node.name, {}) if len(self.scope) == 0 else {})
            self.buffers.append(self.buffer_params.get(node.name, frozenset()) if len(self.scope) == 0 else frozenset())
            self.typed.append(self._argument_types(node))
            self.fn_nodes.append(node)
        self.scope.append(node.name)
        self.functions += not cls
        self.statements(node.body)
        self.functions -= not cls
        self.scope.pop()
        if cls:
            self.members.pop()
            self.class_nodes.pop()
        else:
            self.fn_nodes.pop()
            self.params.pop()
            self.buffers.pop()
        self.typed.pop()
        self.no_grad -= quiet

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        pushed = 0
        quiet = any(self._no_grad(item.context_expr) for item in node.items)
        self.no_grad += quiet
        reusing = any(tfvariables.reusing_scope(self, item.context_expr) for item in node.items)
        self.reusing_scopes += reusing
        for item in node.items:
            if self._hit(item.context_expr):
                self.visit(item.context_expr)
                backend = resolvers.sdpa_backend(self, item.context_expr)
                if backend is not False:
                    self.backends.append(backend)
                    pushed += 1
            if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call):
                self._with_target(item.optional_vars.id, item.context_expr)
        self.statements(node.body)
        self.no_grad -= quiet
        self.reusing_scopes -= reusing
        del self.backends[len(self.backends) - pushed:]

    def _with_target(self, name: str, made: ast.Call) -> None:
        """`with ThreadPool(n) as pool:` binds what the context manager's `__enter__` gives: for an instance of
        Python's own or a plain library's class (multiprocessing's pools, concurrent.futures' executors) that
        library's object, whose `.map` is no tf.data map; anything else leaves the name unknown."""
        found = self.kind_of(made)
        if receivers.plain_library(found):
            self.typed[-1][name] = found  # type: ignore[assignment]
        else:
            self.typed[-1].pop(name, None)

    def setting(self, kind: str, name: str, value: object, kwargs: tuple, node: ast.expr | ast.stmt) -> None:
        scope = ".".join(self.scope) if self.functions else ("__main__" if self.main else None)
        self.settings.append(Setting(kind, name, value, kwargs, node.lineno, node.col_offset + 1, self.text(node),
                                     self.text(self.conditions[-1]) if self.conditions else None, scope))

    def _no_grad(self, expr: ast.expr) -> bool:
        """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)` (as a context or decorator)."""
        call = expr if isinstance(expr, ast.Call) else None
        name = self.dotted(call.func if call else expr)
        if name in _NO_GRAD:
            if name.endswith("inference_mode") and call and call.args and literal(call.args[0]) is False:
                return False
            return True
        return bool(name == "torch.set_grad_enabled" and call and call.args and literal(call.args[0]) is False)

    def _argument_types(self, node: Function) -> dict[str, str | Later]:
        """Arguments known to be tensors: annotated `torch.Tensor`, or the inputs of a module's `forward`."""
        out: dict[str, str | Later] = {}
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        for arg in every:
            if arg.annotation is not None:
                name = self.dotted(arg.annotation)
                if name in _TENSOR_TYPES:
                    out[arg.arg] = _TENSOR_TYPES[name]
        if len(self.scope) == 0:
            for arg in every:
                if arg.annotation is None and arg.arg not in out and (kind := hostrandom.python_random(self, node, arg.arg)):
                    out[arg.arg] = kind  # every caller passes random.Random(...) / RandomState(...): not a framework's
        if node.name == "forward" and self.members and every and every[0].arg == "self":
            for arg in every[1:]:
                if arg.annotation is None:
                    out.setdefault(arg.arg, "torch.Tensor")
        return out

    def _decorated(self, node: Function | ast.ClassDef) -> None:
        self.decorated = None if isinstance(node, ast.ClassDef) else node  # what `@jax.jit` compiles, for the rules
        for decorator in node.decorator_list:
            if not self._hit(decorator):
                continue
            # @jax.jit is jax.jit(f): a call of the decorator's name with no other arguments
            name = self.dotted(decorator)
            if name in self.wanted:
                ruled = self._ruled(name, ast.copy_location(ast.Call(func=decorator, args=[], keywords=[]), decorator), None)
                self.calls.append(Call(name, decorator.lineno, decorator.col_offset + 1,
                                       decorator.end_lineno or decorator.lineno, "@" + self.text(decorator, 40),
                                       (), (), False, True, False, ruled_out=ruled))
            else:
                self.visit(decorator)
        self.decorated = None

    # --- expressions ----------------------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        """NodeVisitor.visit with each node class's handler looked up once (not a name built and
        looked up per node: every expression on a hit line of every file comes through here)."""
        key = (type(self), type(node))
        handler = _HANDLERS.get(key)
        if handler is None:
            handler = _HANDLERS[key] = getattr(type(self), "visit_" + type(node).__name__, type(self).generic_visit)
        handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        """NodeVisitor.generic_visit over the fields that can hold a node (kb/scan/survey.py's table:
        no `ctx`, operator or name field, none of which has a handler)."""
        for field in FIELDS[type(node)]:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def _leaf(self, node: ast.AST) -> None:
        """Names and constants hold no call: not walked (NodeVisitor's default would)."""

    visit_Name = visit_Constant = _leaf

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.generic_visit(node)
        call = resolvers.jax_matmul_operator(self, node)
        if call is not None:
            self._record(resolvers.MATMUL, call, certain=True, method=False)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.generic_visit(node)
        call = resolvers.jax_gather_indexing(self, node)
        if call is not None:
            self._record(resolvers.GETITEM, call, certain=True, method=False)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.typed.append({})
        self.generic_visit(node)
        self.typed.pop()

    def visit_Return(self, node: ast.Return) -> None:
        self.generic_visit(node)
        if node.value is not None:
            self._reference(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        before = len(self.calls)
        self.generic_visit(node)
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id in self.aliases):  # an alias whose calls are read as the op's
            self._reference(node.value, handedon.assigned_values(target, node.value))
            lossrank.held(self, self.calls, self.shape_ops, target, node.value, before)
        mine = (self.fn_nodes[-1] if self.fn_nodes else None, self.class_nodes[-1] if self.class_nodes else None)
        for held, made in members.held(node) + members.returned_to_self(node, *mine) if len(self.calls) > before else ():
            self._module_rules(held, made, before)  # and each module a ModuleDict holds, or a method returns to `self.X`
        # a Later is kept for a plain name only: `a, b = f()` gives each name no kind, an attribute none is kept
        kind = self.kind_later(node.value)
        for target in node.targets:
            self._assigned(target, node.value, kind, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        if node.value is not None:
            self._reference(node.value)
            self._assigned(node.target, node.value, self.kind_of(node.value), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        env = environ.environ_key(self, node.target)
        if env is not None:
            environ.set_env(self, env, node.value, node)

    def _module_rules(self, target: ast.AST, value: ast.Call, first: int) -> None:
        """`self.X = <module op>(...)`: the `module` rules the op's records name (kb/scan/resolvers.py)."""
        name = self.dotted(value.func)
        lossrank.used(self, self.calls, self.shape_ops, target, value, first)
        ruled = []
        for rule in self.by_op.get(name or "", ()):
            entry = resolvers.TABLE[rule]
            if entry.kind == "module":
                why = entry.run(self, target, value, name)
                if why:
                    ruled.append((rule, why))
        if not ruled:
            return
        for k in range(first, len(self.calls)):
            call = self.calls[k]
            if call.op == name and (call.line, call.col) == (value.lineno, value.col_offset + 1):
                self.calls[k] = call._replace(ruled_out=call.ruled_out + tuple(ruled))

    def _assigned(self, target: ast.AST, value: ast.AST, kind: str | Later | None, node: ast.stmt) -> None:
        if isinstance(target, (ast.Name, ast.Tuple, ast.List)):
            self.retype(target, value, kind)
            return
        env = environ.environ_key(self, target)
        if env is not None:
            environ.set_env(self, env, value, node)
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

    # --- calls ---------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in values.WHOLE_WRITES and isinstance(func.value, ast.Call):
            self.initialised.add(id(values.converted_from(func.value)))  # torch.empty(n)[.type_as(x)].normal_()
        elif (scope := self.fn_nodes[-1] if self.fn_nodes else self.tree) is not None \
                and values.init_fills_argument(node, scope, self.tree):
            self.initialised.add(id(node.args[0]))  # nn.init.xavier_uniform_(torch.empty(n, m))
        self.generic_visit(node)
        name = self.dotted(func)
        if name == _PARTIAL and node.args and not isinstance(node.args[0], ast.Starred):
            self._partial(node)
        elif not (isinstance(func, ast.Name) and func.id in _NOT_A_USE):
            handed = self._forwarded(node) if isinstance(func, ast.Name) and func.id in self.defs else None
            for value in (*node.args, *(k.value for k in node.keywords)):
                if value is handed:
                    self._handed_call(node, value)
                elif type(value) in _VALUE_TYPES:  # most arguments are constants, calls, or names of no import
                    self._reference(value)
        if name is None and isinstance(func, ast.Call):
            lossrank.made_and_called(self, self.calls, self.shape_ops, node)  # nn.CrossEntropyLoss()(output, target)
            name = self._getattr(func)  # getattr(F, "interpolate")(x, ...)
            if name is not None and name in self.wanted:
                self._record(name, node, certain=True, method=False)
            return
        if name is not None:
            environ.environ_call(self, name, node)
            if name == "torch.nn.functional.pad":
                self._pad(node)  # the ReflectionPad/ReplicationPad kernels it runs, and F.pad's own records
                if name in self.wanted:
                    length = resolvers.pad_length(node)
                    self._record(name, node, certain=True, method=False,
                                 facts=(("pad.len", length),) if length is not None else ())
                return
            layer = resolvers.tf1_layer_function(self, name, node)
            if layer is not None:
                self._record(layer[0], layer[1], certain=True, method=False)
                return
            if name in self.wanted:
                self._record(name, node, certain=True, method=False)
                if name not in self.watched:  # tf.random.set_seed is both: an op of its record and a fix
                    return
            elif name.startswith(_TORCHVISION_MODELS):
                self._torchvision_model(name, node)
                return
            elif name not in self.watched:
                return
            # A call that a fix is made of (torch.use_deterministic_algorithms(True)).
            self.setting("call", name, *seeds.arguments(self, name, node), node)
            return
        if isinstance(func, ast.Attribute):
            self._method(func, node)

    def _torchvision_model(self, name: str, node: ast.Call) -> None:
        """`torchvision.models.resnet18(...)`, a model class, or `get_model("resnet18")`: the torch.nn layers
        the model contains (kb/scan/torchvision_models.py, read from torchvision's code), each a call at
        this line with the parameters that decide its records as the model sets them."""
        from kb.scan import torchvision_models

        if name.rsplit(".", 1)[-1] == "get_model" and node.args and isinstance(literal(node.args[0]), str):
            name = torchvision_models.NAMES.get(str(literal(node.args[0])), name)
        shown = f"{self.text(node.func, 40)}(...)"
        for op, facts in torchvision_models.MODELS.get(name, ()):
            if op not in self.wanted:
                continue
            call = ast.Call(func=node.func, args=[], keywords=[ast.keyword(arg=k, value=_constant(v)) for k, v in facts])
            ast.copy_location(call, node)
            self._record(op, call, certain=True, method=False)
            self.calls[-1] = self.calls[-1]._replace(text=f"{shown}: {op.rsplit('.', 1)[-1]} inside")

    # --- functions as values ---------------------------------------------------------------
    def _reference(self, node: ast.expr, items: list[ast.expr] | None = None) -> None:
        """A recorded function or class named as a value, not called where it is named: passed
        (`dataset.map(tf.image.random_flip_left_right)`, `aggregate_fn=jax.ops.segment_sum`), a
        parameter's default, assigned, returned or put in a table. What calls it later (often another
        module, or a library) runs the op, so the reference is reported as a call whose arguments are
        not known. `items`: the values an assignment hands on (handedon.assigned_values), when not handedon.values(node)."""
        for item in handedon.values(node) if items is None else items:
            if isinstance(item, ast.Name):
                if item.id in self.aliases:
                    self._named_value(item, self.dotted(item))
            elif isinstance(item, ast.Attribute):
                self._named_value(item, self.dotted(item))
            elif isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and item.func.id == "getattr":
                self._named_value(item, self._getattr(item))

    def _named_value(self, item: ast.expr, name: str | None) -> None:
        if name is None or name not in self.wanted or name.startswith(_FLAGS):
            return
        call = ast.Call(func=item, args=[], keywords=[])
        ast.copy_location(call, item)
        self._record(name, call, certain=True, method=False)
        self.calls[-1] = self.calls[-1]._replace(text=self.text(item, 60), star=True)

    def _partial(self, node: ast.Call) -> None:
        """`functools.partial(F.interpolate, mode="nearest")` (also as `@partial(jax.jit, ...)`): a call of
        the op with the arguments given here; those the later call adds are not known."""
        func = node.args[0]
        name = self._getattr(func) if isinstance(func, ast.Call) else self.dotted(func)
        if name is None or name not in self.wanted or name.startswith(_FLAGS):
            return
        call = ast.Call(func=func, args=node.args[1:], keywords=node.keywords)
        ast.copy_location(call, node)
        self._record(name, call, certain=True, method=False)
        self.calls[-1] = self.calls[-1]._replace(text=self.text(node, 60), star=not partials.input_only(self, node))

    def _forwarded(self, node: ast.Call) -> ast.expr | None:
        """The keyword argument that a function of this module only calls with the rest of its keywords:
        `create_op(func=tf.image.resize_images, images=..., method=AREA)` where `def create_op(func, **placeholders)`
        runs `func(**placeholders)` (affinelayer/pix2pix-tensorflow's tools/tfimage.py); None when it is not so."""
        fn = self.defs[node.func.id]  # type: ignore[attr-defined]
        kwarg = fn.args.kwarg.arg if fn.args.kwarg else None
        if kwarg is None or node.args or any(k.arg is None for k in node.keywords):
            return None
        named = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        for inner in iwalk(fn):
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in named \
                    and not inner.args and len(inner.keywords) == 1 and inner.keywords[0].arg is None \
                    and isinstance(inner.keywords[0].value, ast.Name) and inner.keywords[0].value.id == kwarg:
                given = [k for k in node.keywords if k.arg == inner.func.id]
                others = [k for k in node.keywords if k.arg in named]
                return given[0].value if len(given) == 1 and len(others) == 1 else None
        return None

    def _handed_call(self, node: ast.Call, func: ast.expr) -> None:
        """The op handed to a function that calls it with the call's other keywords (_forwarded): a call of the
        op with those keywords, all of its arguments."""
        name = self._getattr(func) if isinstance(func, ast.Call) else self.dotted(func)
        if name is None or name not in self.wanted or name.startswith(_FLAGS):
            self._reference(func)
            return
        call = ast.Call(func=func, args=[], keywords=[k for k in node.keywords if k.value is not func])
        ast.copy_location(call, node)
        self._record(name, call, certain=True, method=False)
        self.calls[-1] = self.calls[-1]._replace(text=self.text(func, 60))

    def _getattr(self, node: ast.Call) -> str | None:
        """The name `getattr(F, "interpolate")` looks up: a literal attribute of an imported name."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2):
            return None
        owner, attr = self.dotted(node.args[0]), literal(node.args[1])
        if owner is None or not isinstance(attr, str) or not attr.isidentifier():
            return None
        name = f"{owner}.{attr}"
        return name if name in self.wanted else public_name(name, self.wanted)

    def _pad(self, node: ast.Call) -> None:
        found = resolvers.pad_mode(self, node)
        if found is None or found[0] not in self.wanted:
            return
        op, certain, why = found
        before = len(self.calls)
        self._record(op, node, certain=certain, method=False)
        if why is not None and len(self.calls) > before:
            self.calls[-1] = self.calls[-1]._replace(why=why)

    def _method(self, func: ast.Attribute, node: ast.Call) -> None:
        facts = resolvers.jax_at_update(self, func, node)
        if facts is None:
            return  # a .set that no two writes can meet
        if facts:
            for op in self.methods.get("at", ()):
                if op.split(".")[0] in self.owners:
                    self._record(op, node, certain=False, method=True, facts=facts)
            return
        ops = [op for op in self.methods.get(func.attr, ()) if op.split(".")[0] in self.owners]
        if not ops or receivers.own_method(self, func):
            return  # no framework method of that name, or the code base's own class's method
        kind = self.kind_of(func.value)
        for op in ops:
            owner = op.rsplit(".", 1)[0]
            stated = tfdata.options_facts(self, op, node)  # deterministic=False that the dataset's Options set
            if kind is None:
                self._record(op, node, certain=False, method=True, facts=stated)
            elif kind == owner or (kind == "torch.Tensor" and owner == "torch.Tensor"):
                self._record(op, node, certain=True, method=True, facts=stated)

    def _argument(self, node: ast.AST) -> object:
        """A call's argument: its literal, or Unknown, marked as a tensor when it visibly is one."""
        value = self.literal(node)
        if isinstance(value, Unknown) and self.kind_of(node) == "torch.Tensor":
            return value._replace(kind="tensor")
        return value

    def _ruled(self, op: str, node: ast.Call, data: ast.AST | None) -> tuple:
        """(rule, why) of each code rule of the op's records that rules this call out."""
        return tuple((rule, why) for rule in self.by_op.get(op, ()) if resolvers.TABLE[rule].kind == "rule"
                     and (why := resolvers.TABLE[rule].run(self, op, node, data)))

    def _record(self, op: str, node: ast.Call, *, certain: bool, method: bool, facts: tuple = ()) -> None:
        """One call of `op`; `facts`: call facts the call's shape states that no argument holds (JAX's `at.method`)."""
        star = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                break
            args.append(self._argument(a))
        kwargs = tuple((k.arg, self._argument(k.value)) for k in node.keywords if k.arg)
        if op.startswith("tf.") and not method and not star:  # TF 1's endpoint of the op: read by TF 1's signature
            args, kwargs = tfcompat.as_tf2(self.written(node.func) or "", node, args, kwargs)
        extra: tuple = facts
        if self.backends and self.backends[-1] and op.endswith(".scaled_dot_product_attention"):
            extra = (("backend", self.backends[-1]),)
        first = node.args[0] if node.args and not method else next((k.value for k in node.keywords if k.arg == "input"), None)
        if op in self.shape_ops and op.rsplit(".", 1)[-1][:1].isupper():
            shown = rank.UNKNOWN  # a module's constructor: its input is seen where it is called (kb/scan/lossrank.py)
        elif op in self.shape_ops:
            shown = rank.of(self, first, op, node)  # followed through names, modules and the classes of the code base
        else:
            shown = rank.Rank(reshaped_ndim(first), least_ndim(first))
        extra += rank.facts(shown)
        extra += rank.mode_facts(self, node)  # a mode the input's rank rejects would raise, not run
        compiled = bool(self.compiled) and any(part in self.compiled for part in self.scope)
        quiet = self.no_grad > 0
        if method and self.buffers and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in self.buffers[-1]:
            quiet = True  # every call of this function passes a registered buffer here: no gradient flows into it
        elif not method and (self.buffers and gradient.reads_a_buffer(self, node, op, self.buffers[-1]) or op in
                             self.backward_ops and gradient.used_only_without_grad(self, node, op, self._no_grad)):
            quiet = True  # torch.gather(v, ...) of a buffer v, as v.gather(...); a module used only under no_grad
        elif op == "tf.gather" and not method and tfvariables.constant_params(self, node):
            quiet = True  # a gather from a visibly constant tensor: no gradient reaches it
        if not quiet and op in self.backward_ops and not op.rsplit(".", 1)[-1][:1].isupper() \
                and resolvers.no_input_requires_grad(self, node, op):
            quiet = True  # no argument (nor a method's receiver) requires a gradient: no backward pass runs through it
        data = node.func.value if method and isinstance(node.func, ast.Attribute) else first
        if resolvers.made_on_host(self, data):
            extra += (("device", ("cpu",)),)  # the input is made on the host: the op runs on the CPU
        extra += values.dtype_facts(self, op, data, node, self.fn_nodes[-1] if self.fn_nodes else self.tree)
        ruled = self._ruled(op, node, data)
        why = None
        if method and not certain:
            why = f"{self.text(node.func.value, 30)} is not visibly a {op.rsplit('.', 1)[0]}" if isinstance(node.func, ast.Attribute) else None
        self.calls.append(Call(op, node.lineno, node.col_offset + 1, node.end_lineno or node.lineno,
                               self.text(node.func, 60) + "(...)", tuple(args), kwargs, star, certain, method, extra,
                               quiet, why, compiled, ruled))
