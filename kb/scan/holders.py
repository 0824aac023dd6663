"""PyTorch modules and Keras layers the code builds but never calls (RULES F4-1 of the fifth frozen corpus,
Y1-1 of the seventh: a Keras layer draws its weights when a call first builds it).

A module constructed into an attribute (`self.encoder = nn.Embedding(...)`, in a class whose `forward`,
`__call__` or `call` is in view: how it runs is known) or a function's local name
(`criterion = nn.CrossEntropyLoss()`) runs its kernels only when something calls it. Where the code only
reads its attributes (`self.encoder.weight`, handed to `F.embedding` by a helper: that functional call is
its own site) and never calls it, passes it on, returns it, stores it elsewhere or puts it in a
container, the construction runs no kernel of the op: its records are a note saying why. A module-level
name is judged only in a program that reads its command line at module level and that no scanned file
imports (awd-lstm-lm's pointer.py): elsewhere another module, or a program the scan does not see, may
import it.

What counts as a use, conservatively: a call of it; the attribute or name anywhere but as the receiver of
an attribute read (`x.weight`), except as an argument of a function of the code base whose parameter is
itself only read that way; the attribute's name as a string (`getattr(self, "encoder")`); for a local
name, a `global`/`nonlocal` declaration of it or a `locals()`/`vars()` call in its function. A code base that walks a module's children
(`children()`, `_modules`, `named_children`) may call any of them: nothing is claimed there, nor for a Keras
layer in a code base that walks a model's layers (`model.layers[...]`, `.submodules`; not a class's own
`self.layers` list).
"""

from __future__ import annotations

import ast
import re

from kb.scan import oldsyntax, scope, sources
from kb.scan.nodes import iwalk, statements, walk

CALLS = frozenset({"forward", "__call__", "_call_impl", "apply_", "register_forward_hook"})
RUNS = frozenset({"forward", "__call__", "call"})  # the methods a module runs by: the class's own run path
WALKS = ("children(", "_modules", "named_children", "named_modules(")
KERAS_WALKS = (".layers[", ".layers)", ".layers:", ".layers,")
_OWN_LAYERS = re.compile(r"\.layers\s*=[^=]")  # `self.layers = []`: the class's own list, not Keras's tracking


def _walks_layers(text: str) -> bool:
    """Whether a file may walk a Keras model's tracked layers (`for layer in model.layers:`, `.submodules`), which
    calls any layer held in an attribute; a file that assigns `.layers` itself walks its own list."""
    return ".submodules" in text or "_flatten_layers" in text \
        or any(walk in text for walk in KERAS_WALKS) and not _OWN_LAYERS.search(text)
_KERAS_LAYERS = ("tf.keras.layers.", "keras.layers.")


def _built(op: str, keras: bool) -> bool:
    """Whether the op is a PyTorch module's or (where the code base walks no model's layers) a Keras layer's
    constructor."""
    return op.rpartition(".")[2][:1].isupper() and (op.startswith("torch.") or keras and op.startswith(_KERAS_LAYERS))


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in walk(tree) for child in ast.iter_child_nodes(node)}


def _read_only(node: ast.expr, parents: dict[int, ast.AST], passed: _Passed | None) -> bool:
    """Whether this use of the module only reads an attribute of it (or hands it to a function of the code
    base that only does that, `passed`)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return parent.attr not in CALLS
    if isinstance(parent, ast.Call) and node in parent.args and passed is not None:
        return passed.read_only(parent, parent.args.index(node))
    if isinstance(parent, ast.keyword) and passed is not None:
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and passed.read_only(call, parent.arg)
    return False


def _enclosing(node: ast.AST, parents: dict[int, ast.AST], kinds: tuple[type, ...]) -> ast.AST | None:
    parent = parents.get(id(node))
    while parent is not None and not isinstance(parent, kinds):
        parent = parents.get(id(parent))
    return parent


def _program(tree: ast.Module) -> bool:
    """Whether the file's module-level code reads its command line (`parser.parse_args()`, `sys.argv`,
    `fire.Fire`, absl's `app.run`): a program, which no other code imports (importing it would parse the
    importer's command line), so its module-level names are its own."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in iwalk(node):
            if isinstance(inner, ast.Attribute) and (inner.attr in ("parse_args", "parse_known_args", "Fire")
                                                      or (inner.attr == "argv" and isinstance(inner.value, ast.Name)
                                                          and inner.value.id == "sys")):
                return True
            if isinstance(inner, ast.Call) and ast.unparse(inner.func) in ("app.run", "absl.app.run"):
                return True
    return False


class _Passed:
    """The module-level functions of the code base, by name, and whether a parameter of one is only read."""

    def __init__(self, trees: dict[str, ast.Module]) -> None:
        self.functions: dict[str, list[ast.FunctionDef]] = {}
        self.methods: set[str] = set()
        for tree in trees.values():
            for node in statements(tree):
                if isinstance(node, ast.ClassDef):
                    self.methods |= {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    self.functions.setdefault(node.name, []).append(node)

    def read_only(self, call: ast.Call, where: int | str | None) -> bool:
        name = call.func.id if isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call.func, ast.Attribute) else None
        if name is None or where is None or name in self.methods or name not in self.functions:
            return False
        for function in self.functions[name]:
            params = [*function.args.posonlyargs, *function.args.args]
            if isinstance(where, int):
                if where >= len(params):
                    return False
                param = params[where].arg
            elif where in {p.arg for p in (*params, *function.args.kwonlyargs)}:
                param = where
            else:
                return False
            parents = _parents(function)
            uses = [n for n in iwalk(function) if isinstance(n, ast.Name) and n.id == param]
            if not all(isinstance(n.ctx, ast.Load) and _read_only(n, parents, None) for n in uses):
                return False
        return True


def idle(modules: dict, texts: sources.Texts, graph: scope.Graph) -> dict[tuple[str, int, int], str]:
    """(path, line, col) -> why, for each construction of a PyTorch module (a call the scan resolved to a
    `torch.` class), or of a Keras layer, that the code base never calls. A notebook's cells are one
    module: what it builds is judged too (its PyTorch modules aside, as before)."""
    wanted = {path: {(c.line, c.col): c.op for c in m.calls if _built(c.op, True)
                     and not (path.endswith(".ipynb") and c.op.startswith("torch."))}
              for path, m in modules.items()}
    wanted = {p: w for p, w in wanted.items() if w}
    if not wanted:
        return {}
    read = texts.every(modules)
    if read is None:
        return {}
    if any(walk in text for text in read.values() for walk in WALKS):
        return {}
    if any(map(_walks_layers, read.values())):
        wanted = {p: {k: op for k, op in w.items() if _built(op, False)} for p, w in wanted.items()}
    trees: dict[str, ast.Module] = {}
    for path, text in read.items():
        if path.endswith(".ipynb") and path not in wanted:
            continue
        try:
            trees[path] = oldsyntax.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            if path in wanted:
                wanted.pop(path)
    passed = _Passed(trees)
    imported = {target for p in modules for target in graph.imports(p)}
    parents: dict[str, dict[int, ast.AST]] = {}

    def parents_in(path: str) -> dict[int, ast.AST]:
        if path not in parents:
            parents[path] = _parents(trees[path])
        return parents[path]

    attribute_loads: dict[str, list[tuple[str, ast.Attribute]]] = {}  # `.name` read anywhere, and string literals:
    strings_used: set[object] = set()  # one walk of every tree for all the self.x sites, not two per site

    def index() -> None:
        if attribute_loads or strings_used:
            return
        for p, t in trees.items():
            for n in walk(t):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
                    attribute_loads.setdefault(n.attr, []).append((p, n))
                elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                    strings_used.add(n.value)

    out: dict[tuple[str, int, int], str] = {}
    for path, sites in wanted.items():
        tree = trees.get(path)
        if tree is None:
            continue
        for node in statements(tree):  # an assignment is a statement
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
                continue
            if isinstance(node.value.func, ast.Call):
                continue  # `loss = nn.CrossEntropyLoss()(x, y)`: the module is called where it is made; the name holds its value
            op = sites.get((node.value.lineno, node.value.col_offset + 1))  # the scan counts columns from 1
            callee = node.value.func
            written = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
            if written[:1].islower():
                continue  # `y = F.pad(x, p, mode="reflect")`: a function that runs the module's kernel now, no module made
            target = node.targets[0]
            function = _enclosing(node, parents_in(path), (ast.FunctionDef, ast.AsyncFunctionDef))
            if op is None or (function is None and (path in imported or not _program(tree))):
                continue  # a module-level name may be imported, or used by a program the scan cannot see
            owner = parents_in(path).get(id(function))
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                if not (isinstance(owner, ast.ClassDef) and any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                               and n.name in RUNS for n in owner.body)):
                    continue  # no forward to read: how the class runs is not in view
                name, shown = target.attr, f"self.{target.attr}"
                index()
                uses: list[tuple[str, ast.expr]] = [(p, n) for p, n in attribute_loads.get(name, ()) if n is not target
                                                    and (p == path or not path.endswith(".ipynb"))]  # nothing imports a notebook
                strings = name in strings_used
            elif isinstance(target, ast.Name):
                name, shown = target.id, target.id
                inside = walk(function if function is not None else tree)
                uses = [(path, n) for n in inside if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
                strings = any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in inside) or any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("locals", "vars")
                    for n in inside)
            else:
                continue
            if strings or not all(_read_only(n, parents_in(p), passed) for p, n in uses):
                continue
            built = f"the {op.rpartition('.')[2]} built here as {shown}"
            out[(path, node.value.lineno, node.value.col_offset + 1)] = (
                f"{built} is never called: the code base only reads its attributes (its weight, which a functional "
                f"call reads at a site of its own), so its construction runs no kernel of the op" if uses else
                f"{built} is never used: its construction runs no kernel of the op"
                + ("" if op.startswith("torch.") else " (a Keras layer draws its weights when a call first builds it)"))
    return out
