"""A program that differentiates only with respect to its input (for the rule weights-not-differentiated).

Style transfer, DeepDream, adversarial examples and feature visualisation take the gradient of a loss with respect
to an image (`grads = K.gradients(loss, combination_image)`, `tape.gradient(loss, image)` then
`optimizer.apply_gradients([(grad, image)])`) and leave the network's weights as they were loaded. TensorFlow
builds only the gradients on the path to what is asked for (`tf.gradients` and a tape alike), so no
filter-gradient kernel of a convolution runs: the records of weight gradients do not apply, while those of the
gradient passed back to the data (a convolution's backprop-data) do.

Read per file, from what the file itself shows: every differentiation in it names its sources, each a name bound
only to an input the program makes (`K.placeholder`, `tf.Variable(image)`, `Input`, or a parameter that every call
in the file hands such a name), every `apply_gradients` updates only such names, and the file trains nothing
else (no `fit`, `minimize`, `train_on_batch`, `.backward()`, no list of a model's trainable variables). The file
must run its differentiation itself (at module level, or it has a `__main__` block): a module that another file
imports may have its weights trained there.
"""

from __future__ import annotations

import ast
import weakref
from kb.scan.nodes import walk
from kb.scan.syntax import last_name

# What trains weights, or names them as what to differentiate: any of them and the file is not read this way.
_TRAINS = (".fit(", "fit_generator(", "train_on_batch(", ".minimize(", ".backward(", "trainable_variables",
           "trainable_weights", "var_list", "compute_gradients(", "value_and_grad", "jax.grad", "optax", "torch.",
           "Trainer", ".weights", ".variables", "get_weights(")
_GRADIENTS = frozenset({"gradients", "gradient"})
# What makes an input the program differentiates with respect to (a placeholder fed the image, a variable of it).
_INPUTS = frozenset({"placeholder", "Variable", "variable", "Input"})
_MAIN = ('__name__ == "__main__"', "__name__ == '__main__'")

_MEMO: weakref.WeakKeyDictionary[ast.AST, tuple[str, ...] | None] = weakref.WeakKeyDictionary()


def only_inputs(tree: ast.Module | None, lines: list[str]) -> tuple[str, ...] | None:
    """What the file differentiates with respect to (`combination_image`, `self.net_input`) when the whole file
    reads so (see the module's docstring); None otherwise. One reading per file."""
    if tree is None:
        return None
    if tree not in _MEMO:
        text = "\n".join(lines)
        _MEMO[tree] = None if any(word in text for word in _TRAINS) or not any(f"{g}(" in text for g in _GRADIENTS) \
            else _read(tree, any(main in text for main in _MAIN))
    return _MEMO[tree]


def _read(tree: ast.Module, has_main: bool) -> tuple[str, ...] | None:
    top_level = {id(n) for statement in tree.body if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 for n in walk(statement)}
    # the module-level code calls these functions, or reads its command line: a program, not a module to import
    started = {n.func.id for n in walk(tree) if id(n) in top_level and isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    script = has_main or any(isinstance(n, ast.Call) and last_name(n.func) == "parse_args" for n in walk(tree) if id(n) in top_level)
    owner = {id(n): d.name for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in walk(d)}
    nodes = walk(tree)
    bound: dict[str, list[ast.expr]] = {}
    params: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    calls: list[ast.Call] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in walk(target):
                    key = _key(name)
                    if key is not None and isinstance(getattr(name, "ctx", None), ast.Store):
                        bound.setdefault(key, []).append(node.value if name is target else target)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in (*node.args.posonlyargs, *node.args.args):
                params.setdefault(arg.arg, node)
        elif isinstance(node, ast.Call):
            calls.append(node)

    def made_input(value: ast.expr) -> bool:  # a placeholder, a variable of the image, a model's input tensor
        return (isinstance(value, ast.Call) and last_name(value.func) in _INPUTS) \
            or (isinstance(value, ast.Attribute) and value.attr in ("input", "inputs"))

    def is_input(name: ast.expr, depth: int = 2) -> bool:
        key = _key(name)
        if key is None or depth <= 0:
            return False
        values = bound.get(key, [])
        if values:  # `x = preprocess(path)` ... `x = tf.Variable(x)`: the image is made a variable to be changed
            return any(made_input(v) for v in values)
        fn = params.get(key)  # a parameter: every call of its function in the file hands an input
        if fn is None:
            return False
        if fn is None:
            return False
        position = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)].index(key)
        passed = [c.args[position] for c in calls if isinstance(c.func, ast.Name) and c.func.id == fn.name
                  and len(c.args) > position and not any(isinstance(a, ast.Starred) for a in c.args)]
        return bool(passed) and all(is_input(p, depth - 1) for p in passed)

    sources: list[str] = []
    runs_here = script
    for call in calls:
        last = last_name(call.func)
        if last in _GRADIENTS:
            given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg in ("xs", "sources")), None)
            names = given.elts if isinstance(given, (ast.List, ast.Tuple)) else [given] if given is not None else []
            if not names or not all(is_input(n) for n in names):
                return None
            sources.extend(key for n in names if (key := _key(n)) is not None)
            runs_here = runs_here or id(call) in top_level or owner.get(id(call)) in started
        elif last == "apply_gradients":
            pairs = call.args[0] if call.args else None
            if not isinstance(pairs, (ast.List, ast.Tuple)) or not all(
                    isinstance(p, ast.Tuple) and len(p.elts) == 2 and is_input(p.elts[1]) for p in pairs.elts):
                return None
    return tuple(dict.fromkeys(sources)) if sources and runs_here else None


def _key(node: ast.AST) -> str | None:
    """A name, or `self.x`: what an assignment binds and a differentiation names."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None
