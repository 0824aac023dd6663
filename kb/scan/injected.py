"""Keras modules a model builder is handed by its caller rather than importing them (for kb/scan/resolve.py).

keras-applications, qubvel's efficientnet and the code bases that copy them never import Keras in their model
files: each builder takes the modules from its keyword arguments, `backend, layers, models, keras_utils =
get_submodules_from_kwargs(kwargs)` (often into module globals its helpers read), and the package's entry points
(`keras.applications`, `efficientnet.keras`, `efficientnet.tfkeras`) pass `keras.layers` or `tf.keras.layers` in. In
TensorFlow 2.16 and later both are Keras 3, so `layers.Conv2D(...)` there is Keras 3's Conv2D (RULES AA6-1, AH6-1
of the frozen corpora). keras-applications' helper returns the four in that order, and its defaults are Keras's.
"""

from __future__ import annotations

import ast

from kb.scan.nodes import walk
from kb.scan.syntax import last_name

HELPER = "get_submodules_from_kwargs"
# What the helper hands back, in order (keras_applications/__init__.py: backend, layers, models, utils).
_MODULES = ("keras.backend", "keras.layers", "keras.models", "keras.utils")


def injected(tree: ast.Module) -> dict[str, str]:
    """Name -> Keras module, for each name a `a, b, c, d = get_submodules_from_kwargs(kwargs)` binds (in any
    function of the file, or at module level)."""
    out: dict[str, str] = {}
    for node in walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and isinstance(node.value, ast.Call)):
            continue
        if last_name(node.value.func) != HELPER:
            continue
        for target, module in zip(node.targets[0].elts, _MODULES):
            if isinstance(target, ast.Name):
                out.setdefault(target.id, module)
    return out
