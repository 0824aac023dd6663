"""TensorFlow 1 graph ops whose result the code stores and never reads (R4 of the fifth frozen corpus: tkipf/gae's
`self.grads_vars = optimizer.compute_gradients(cost)`, next to the `minimize` its training loop runs).

In a graph program a call such as `tf.gradients` or an optimizer's `compute_gradients` or `minimize` only adds
ops to the graph; they run when a session fetches them or an op that needs them. A result bound to a name or
attribute that appears nowhere else in the code base (no read, no string, no comment) can be fetched by
nothing, so its ops never run: the finding is a note saying why. Only where exact: in a file no installable
package holds (a user's code may read a package's attribute), in a code base that builds graphs (a session,
a placeholder, eager execution disabled) and never runs eagerly or in a `tf.function` (where a stateful op
runs unfetched), and with no `__dict__`, `vars(`, `locals()` or computed `getattr` that could read the name.
"""

from __future__ import annotations

import ast
import re

from kb.scan import oldsyntax, sources
from kb.scan.nodes import statements

LAZY = frozenset({"tf.gradients", "tf.compat.v1.gradients", "tf.compat.v1.train.Optimizer.compute_gradients",
                  "tf.compat.v1.train.Optimizer.minimize"})
_GRAPH = ("Session(", "placeholder(", "disable_eager_execution", "disable_v2_behavior")
_EAGER = ("enable_eager_execution", "GradientTape", "run_functions_eagerly", "tf.function", "defun")
_COMPUTED = re.compile(r"__dict__|\bvars\(|\blocals\(|\bglobals\(|\bgetattr\(\s*[^,()]+,\s*[^'\"\s]")


def _graph_program(texts: dict[str, str]) -> bool:
    """Whether the code base builds graphs and nothing in it runs eagerly or traces a tf.function."""
    return any(word in text for text in texts.values() for word in _GRAPH) and \
        not any(word in text for text in texts.values() for word in _EAGER) and \
        not any(_COMPUTED.search(text) for text in texts.values())


def never_fetched(modules: dict, texts: sources.Texts, scripts: set[str]) -> dict[tuple[str, int, int], str]:
    """(path, line, col) -> why, for each graph-building call (LAZY) whose result is bound to a name that nothing
    in the code base names again."""
    wanted = {path: {(c.line, c.col): c.op for c in m.calls if c.op in LAZY}
              for path, m in modules.items() if path in scripts and not path.endswith(".ipynb")}
    wanted = {path: sites for path, sites in wanted.items() if sites}
    if not wanted:
        return {}
    read = texts.every(modules)
    if read is None or not _graph_program(read):
        return {}
    trees: dict[str, ast.Module | None] = {}

    def tree_of(path: str) -> ast.Module | None:
        if path not in trees:
            try:
                trees[path] = oldsyntax.parse(read[path]) if not path.endswith(".ipynb") else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                trees[path] = None
        return trees[path]

    def never_read(name: str) -> bool:
        """Whether every use of the word in the code base is a plain assignment's target (`self.x = ...`)."""
        word = re.compile(rf"\b{re.escape(name)}\b")
        for path, text in read.items():
            seen = len(word.findall(text))
            if seen and ((tree := tree_of(path)) is None or seen != _stores(tree, name)):
                return False
        return True

    out: dict[tuple[str, int, int], str] = {}
    for path, sites in wanted.items():
        tree = tree_of(path)
        for node in statements(tree) if tree is not None else ():
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
                continue
            op = sites.get((node.value.lineno, node.value.col_offset + 1))  # the scan counts columns from 1
            target = node.targets[0]
            if op is None:
                continue
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                name, shown = target.attr, f"self.{target.attr}"
            elif isinstance(target, ast.Name):
                name, shown = target.id, target.id
            else:
                continue
            if not never_read(name):
                continue  # read, or named in a string or a comment, somewhere: it may be fetched
            out[(path, node.value.lineno, node.value.col_offset + 1)] = (
                f"the graph ops {op.rpartition('.')[2]} builds here are stored as {shown}, which nothing in this "
                f"code base reads: in a TensorFlow 1 graph program ops run only when a session fetches them or an "
                f"op that needs them, so these never run")
    return out


def _stores(tree: ast.Module, name: str) -> int:
    """How many plain assignments (one target) bind `name` or `self.name`."""
    count = 0
    for node in statements(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == name or isinstance(target, ast.Attribute) \
                    and target.attr == name and isinstance(target.value, ast.Name) and target.value.id == "self":
                count += 1
    return count
