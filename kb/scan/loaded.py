"""Keras layers whose drawn initial weights every program overwrites whole (RULES X3-1 of the sixth frozen
corpus: google-research/big_transfer's bit_tf2, which builds ResnetV2 and loads the BiT checkpoint into it).

An unseeded kernel initializer (keras.unseeded-random) draws a layer's first weights; they matter only if
something reads them. Where every program that builds the model holding the layer loads a whole set of
weights into it right after building it (`model.load_weights(path)`, `model.set_weights(values)`,
`tf.train.Checkpoint(model=model).restore(path)`), before any other use of it (a training step, a
prediction, handing it on), the drawn values are never read: the finding is a note saying why.

A function that builds a functional model of its layers and loads weights into it at once (`self.extractor =
Model(image, x)` then `self.extractor.load_weights(path)`) overwrites them in every run. Otherwise followed across
the code base by name: the layer's construction sits in a class (a layer or model class:
its instances hold the layer) or a module-level function (a builder: what it returns holds it); each is
followed to every place that builds it, up to a few levels, until a program binds the result to a name
(`model = ResnetV2(...)`) and the statements after it, in the same block, load it. Claimed only where every
construction is visible and loaded: the class or function is defined once, named nowhere but in calls of it
(and `super(C, self)`), in no installable package (a library's users may build it without loading), and a
class's instance is built (`model.build(shape)`) before the load. Kept where the load is conditional
(`if args.resume:`), partial (`by_name=True`, `skip_mismatch=True`, `.expect_partial()`), may load nothing
(`restore(manager.latest_checkpoint)`, None from scratch), where the layer draws at every call too (a dropout
rate), or where it is made in a `call` (a new layer, new weights, each call).
"""

from __future__ import annotations

import ast

from kb.scan import oldsyntax, sources
from kb.scan.nodes import own, walk

RECORD = "keras.unseeded-random"
_DEPTH = 6  # classes and builder functions followed outwards (big_transfer: conv -> unit -> ResnetV2 -> main)
_WEIGHT_LAYERS = frozenset({
    "Dense", "EinsumDense", "Embedding", "ReversibleEmbedding", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose",
    "Conv2DTranspose", "Conv3DTranspose", "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
    "Convolution1D", "Convolution2D", "Convolution3D"})  # whose only random draws are their initial weights
_RECURRENT = frozenset({"LSTM", "GRU", "SimpleRNN", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"})
_KERAS = ("keras.", "tf.keras.", "tensorflow.keras.", "tf.layers.", "tf.compat.v1.layers.")  # Keras layers (a torch nn.Embedding is none)
_LOADS = ("load_weights", "set_weights", ".restore(")  # the words of a whole load (below)
_RATES = ("dropout", "recurrent_dropout")
_PER_CALL = frozenset({"call", "__call__", "forward"})  # a layer made here is made anew at each call
_PARTIAL = ("by_name", "skip_mismatch")
_Scope = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _weights_only(op: str, node: ast.Call) -> bool:
    """Whether the layer's only random draws are its initial weights (no dropout mask drawn at each call)."""
    name = op.rpartition(".")[2]
    if name in _RECURRENT:
        return all(k.arg is not None for k in node.keywords) and all(
            isinstance(k.value, ast.Constant) and k.value.value in (0, 0.0) for k in node.keywords if k.arg in _RATES)
    return name in _WEIGHT_LAYERS


class _Base:
    """The parsed code base: each tree, each node's parent, the definitions and the uses of each name."""

    def __init__(self, trees: dict[str, ast.Module]) -> None:
        self.trees = trees
        self.parents: dict[int, ast.AST] = {}
        self.defined: dict[str, list[tuple[str, _Scope]]] = {}
        self.uses: dict[str, list[tuple[str, ast.expr]]] = {}
        for path, tree in trees.items():
            for node in walk(tree):
                for child in ast.iter_child_nodes(node):
                    self.parents[id(child)] = node
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.defined.setdefault(node.name, []).append((path, node))
                elif isinstance(node, ast.Name):
                    self.uses.setdefault(node.id, []).append((path, node))
                elif isinstance(node, ast.Attribute):
                    self.uses.setdefault(node.attr, []).append((path, node))

    def scope(self, node: ast.AST) -> _Scope | None:
        """The class (for a method's code) or function the node is in; None at module level."""
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = self.parents.get(id(parent))
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            owner = self.parents.get(id(parent))
            if isinstance(owner, ast.ClassDef):
                return None if parent.name in _PER_CALL else owner
        return parent

    def statement(self, node: ast.AST) -> tuple[ast.stmt, list[ast.stmt]] | None:
        """The statement holding the node and the block (statement list) it is in."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(child, ast.stmt):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    block = getattr(parent, field, None)
                    if isinstance(block, list) and child in block:
                        return child, block
                return None
            child, parent = parent, self.parents.get(id(parent))
        return None

    def built_by(self, scope: _Scope, scripts: set[str]) -> list[tuple[str, ast.Call]] | None:
        """Every call that builds `scope` (its class or function), or None where one may be out of view."""
        found = self.defined.get(scope.name, [])
        if len(found) != 1 or found[0][0] not in scripts:
            return None
        calls: list[tuple[str, ast.Call]] = []
        for path, use in self.uses.get(scope.name, ()):
            parent = self.parents.get(id(use))
            if isinstance(parent, ast.Call) and parent.func is use:
                calls.append((path, parent))
            elif not (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "super"):
                return None  # handed on, subclassed, compared: any caller may build it
        return calls or None


def _names(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(node))


def _method_of(node: ast.stmt, name: str) -> tuple[str, ast.Call] | None:
    """`name.method(...)` as a whole statement (or assigned): the method and the call."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and isinstance(value.func.value, ast.Name) and value.func.value.id == name:
        return value.func.attr, value
    return None


def _never_none(arg: ast.expr) -> bool:
    """A path that cannot be None (a checkpoint restored from None loads nothing): a string, an f-string, a join."""
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str)
    if isinstance(arg, (ast.JoinedStr, ast.BinOp)):
        return True
    return isinstance(arg, ast.Call) and ast.unparse(arg.func) in ("os.path.join", "str")


def _restores(node: ast.stmt, name: str, holders: set[str]) -> bool:
    """`tf.train.Checkpoint(model=name).restore(path)` (or through a name bound to that checkpoint), whole."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "restore"
            and len(value.args) == 1 and not value.keywords and _never_none(value.args[0])):
        return False
    receiver = value.func.value
    if isinstance(receiver, ast.Name):
        return receiver.id in holders
    return _checkpoint_of(receiver, name)


def _checkpoint_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("train.Checkpoint") and not node.args \
        and any(isinstance(k.value, ast.Name) and k.value.id == name for k in node.keywords)


def _loaded_after(statement: ast.stmt, block: list[ast.stmt], name: str, needs_build: bool) -> bool:
    """Whether the statements after `name = ...` in its block load a whole set of weights into `name` before
    any other use of it (only `build`, `compile` and `summary` may come first)."""
    built, holders = not needs_build, set()
    for node in block[block.index(statement) + 1:]:
        if not _names(node, name):
            continue
        method = _method_of(node, name)
        if method is not None and method[0] in ("build", "compile", "summary"):
            built = built or method[0] == "build"
            continue
        if method is not None and method[0] in ("load_weights", "set_weights"):
            return built and _whole(method[1]) and not isinstance(node, ast.Assign)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and _checkpoint_of(node.value, name):
            holders.add(node.targets[0].id)
            continue
        return built and _restores(node, name, holders)
    return False


def _model_loaded(base: _Base, node: ast.Call) -> bool:
    """The function that makes the layer (keras-yolo2's FullYoloFeature.__init__) builds one Keras functional model,
    at its top level after the layer (`self.extractor = Model(input_image, x)`), and loads a whole set of weights
    into it right after (`self.extractor.load_weights(path)`): every run of the function overwrites the layer."""
    fn = base.parents.get(id(node))
    while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
        fn = base.parents.get(id(fn))
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) or getattr(fn, "name", "") in _PER_CALL:
        return False  # a script's module level too (titu1994/Neural-Style-Transfer's VGG)
    made = [n for n in own(fn) if isinstance(n, ast.Call) and _model_class(n.func)]
    held = [s for s in fn.body if isinstance(s, ast.Assign) and len(s.targets) == 1 and s.value in made
            and isinstance(s.targets[0], (ast.Name, ast.Attribute))]
    if len(made) != 1 or len(held) != 1 or held[0].lineno <= node.lineno:
        return False
    target = ast.unparse(held[0].targets[0])
    for later in fn.body[fn.body.index(held[0]) + 1:]:
        if not any(isinstance(n, (ast.Name, ast.Attribute)) and ast.unparse(n) == target for n in walk(later)):
            continue
        call = later.value if isinstance(later, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and ast.unparse(call.func.value) == target):
            return False
        if call.func.attr in ("compile", "summary"):
            continue
        return call.func.attr in ("load_weights", "set_weights") and _whole(call)
    return False


def _whole(call: ast.Call) -> bool:
    """`load_weights(path)` / `set_weights(values)` of every weight: one argument, no `by_name=True` or
    `skip_mismatch=True` (a partial load), no `**kwargs`."""
    return len(call.args) == 1 and all(k.arg not in (None, *_PARTIAL) or (
        isinstance(k.value, ast.Constant) and k.value.value is False) for k in call.keywords)


def _model_class(func: ast.expr) -> bool:
    """`Model`, `keras.Model`, `keras.models.Model`, `tf.keras.Model`: a functional model of the layers before it."""
    return (isinstance(func, ast.Name) and func.id == "Model") or (isinstance(func, ast.Attribute) and func.attr == "Model")


def _settled(base: _Base, path: str, node: ast.Call, scripts: set[str], depth: int, classes: bool) -> bool:
    """Whether what `node` builds is, in every program that builds it, overwritten whole by a load."""
    if depth > _DEPTH:
        return False
    held = base.statement(node)
    if held is not None and isinstance(held[0], ast.Assign) and len(held[0].targets) == 1 \
            and isinstance(held[0].targets[0], ast.Name) and _loaded_after(held[0], held[1], held[0].targets[0].id, classes):
        return True
    scope = base.scope(node)
    if scope is None:
        return False
    calls = base.built_by(scope, scripts)
    return calls is not None and all(
        _settled(base, p, c, scripts, depth + 1, classes or isinstance(scope, ast.ClassDef)) for p, c in calls)


GIVEN = ("the layer is given its weights (`weights=`): Keras 2 sets them over the drawn initial weights as it "
         "builds the layer, before anything reads them, and Keras 3 layers take no `weights` argument (the "
         "construction raises ValueError): the weights drawn here are never read")


def _given_weights(node: ast.Call) -> bool:
    """`Conv2D(..., weights=[kernel, bias])` (keras-yolo3's Darknet converter): a whole set of weights handed to the
    layer's constructor (not None)."""
    return any(k.arg == "weights" and not (isinstance(k.value, ast.Constant) and k.value.value is None)
               for k in node.keywords)


def given(modules: dict, texts: sources.Texts) -> dict[tuple[str, int, int], str]:
    """(path, line, col) -> why, for each Keras weight layer built with `weights=` (GIVEN): in any file, since
    the construction itself says it. Only files whose text has `weights=` are parsed."""
    sites = {path: {(c.line, c.col): c.op for c in m.calls if c.op.startswith(_KERAS) and c.op.rpartition(".")[2] in _WEIGHT_LAYERS}
             for path, m in modules.items() if path.endswith(".py")}
    sites = {p: w for p, w in sites.items() if w}
    out: dict[tuple[str, int, int], str] = {}
    for path in sites:
        text = texts.get(path)
        if text is None or "weights=" not in text:
            continue
        try:
            tree = oldsyntax.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in walk(tree):
            if isinstance(node, ast.Call) and (node.lineno, node.col_offset + 1) in sites[path] and _given_weights(node):
                out[(path, node.lineno, node.col_offset + 1)] = GIVEN
    return out


def overwritten(modules: dict, texts: sources.Texts, scripts: set[str]) -> dict[tuple[str, int, int], str]:
    """(path, line, col) -> why, for each Keras layer construction whose initial weights every program that
    builds it overwrites whole by loading weights (RECORD's finding there is a note)."""
    wanted = {path: {(c.line, c.col): c.op for c in m.calls if c.op.startswith(_KERAS)
                     and c.op.rpartition(".")[2] in _WEIGHT_LAYERS | _RECURRENT}
              for path, m in modules.items() if path in scripts}
    wanted = {p: w for p, w in wanted.items() if w}
    read = texts.every(modules) if wanted else None
    if not read or not any(word in text for text in read.values() for word in _LOADS):
        return {}  # no Keras layer, or no code that loads weights: nothing is overwritten (and nothing parsed)
    trees: dict[str, ast.Module] = {}
    for path, text in read.items():
        try:
            trees[path] = oldsyntax.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
    base = _Base(trees)
    out: dict[tuple[str, int, int], str] = {}
    for path, sites in wanted.items():
        for node in walk(trees[path]):
            op = sites.get((node.lineno, node.col_offset + 1)) if isinstance(node, ast.Call) else None
            if op is not None and isinstance(node, ast.Call) and _weights_only(op, node) \
                    and (_settled(base, path, node, scripts, 0, False) or _model_loaded(base, node)):
                out[(path, node.lineno, node.col_offset + 1)] = (
                    "every program that builds the model holding this layer loads a whole set of weights into it "
                    "right after building it, before any other use: the initial weights drawn here are overwritten, never read")
    return out
