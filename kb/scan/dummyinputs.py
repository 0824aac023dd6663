"""Random draws made only to build a model (rule draw-builds-only, kb/scan/resolvers.py): TensorSpeech/TensorFlowTTS
(forty-fifth corpus, 10 false alarms of `tf.random-seeds`) builds each Keras model by calling it once on fake input,
`fake_mels = tf.random.uniform(shape=[1, 100, 80]); self(fake_mels)`, or `y_hat = generator(fake_mels);
discriminator(y_hat)` in a training script. The drawn values only flow through calls whose results nothing keeps: they
reach no result the program computes (RULES AA7-1, AB3-1), so whatever values the unseeded draw gives, the run is the
same.

Read in the function (or module) that makes the draw: the draw is the whole value of `name = <draw>`, the name is
bound nowhere else there, and every use of it is an argument of a call that is a statement of its own (its result
dropped) or the whole value of `other = <call>` whose name is used only so in turn, two steps deep; the calls are of a
model held in a name (`self(x)`, `generator(x)`). A framework function (`tf.reduce_sum(x)`), a built-in (`print(x)`) or
a method (which may keep what it computes on its object) reads the value.
"""

from __future__ import annotations

import ast
import builtins

from kb.scan.context import Context
from kb.scan.nodes import iwalk

_DEPTH = 2
_BUILTINS = frozenset(vars(builtins))
_READERS = ("tf.", "np.", "numpy.", "jax.", "torch.", "keras.ops.")  # calls that compute from the value


def builds_only(ctx: Context, node: ast.Call) -> bool:
    """The draw `node` feeds only calls whose results nothing keeps (module docstring)."""
    scope = ctx.fn_nodes[-1] if ctx.fn_nodes else ctx.tree
    if scope is None:
        return False
    parents = {id(child): parent for parent in iwalk(scope) for child in ast.iter_child_nodes(parent)}
    bound = parents.get(id(node))
    if not (isinstance(bound, ast.Assign) and len(bound.targets) == 1 and isinstance(bound.targets[0], ast.Name)):
        return False
    return _dropped(ctx, scope, parents, bound.targets[0].id, _DEPTH)


def _dropped(ctx: Context, scope: ast.AST, parents: dict[int, ast.AST], name: str, depth: int) -> bool:
    """Every use of `name` in `scope` is an argument of a model call whose result is dropped (or held in a name used
    only so), and `name` is bound once there."""
    stores = [n for n in iwalk(scope) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    uses = [n for n in iwalk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    if len(stores) != 1 or not uses or depth < 0:
        return False
    for use in uses:
        call = parents.get(id(use))
        if isinstance(call, ast.keyword):
            call = parents.get(id(call))
        if not isinstance(call, ast.Call) or use is call.func or not _model_call(ctx, call):
            return False
        holder = parents.get(id(call))
        if isinstance(holder, ast.Expr):
            continue
        if not (depth > 0 and isinstance(holder, ast.Assign) and len(holder.targets) == 1
                and isinstance(holder.targets[0], ast.Name) and holder.value is call
                and _dropped(ctx, scope, parents, holder.targets[0].id, depth - 1)):
            return False
    return True


def _model_call(ctx: Context, call: ast.Call) -> bool:
    """A call of a model held in a name (`self(x)`, `generator(x)`), not of a framework function, a built-in or a
    method (a method may keep what it computes on its object)."""
    func = call.func
    return isinstance(func, ast.Name) and (func.id == "self" or (
        func.id not in _BUILTINS and not (ctx.dotted(func) or "").startswith(_READERS)))
