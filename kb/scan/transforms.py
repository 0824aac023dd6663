"""Whether a transform a dataset is given draws no random numbers (for kb/scan/datasets.py).

A torchvision dataset runs its `transform` in the DataLoader's workers: deterministic torchvision
transforms (`ToTensor`, `Normalize`, `Resize`, `CenterCrop`, a `Compose` of such) draw nothing there, nor
does a step that is a plain function handed in whole (`np.float32`, a function of the code base such as
`fixed_image_standardization` whose body draws nothing, `transforms.Lambda` of one). The
transform is often made by a function of the code base (`transform=utils.get_transform()`, in another
module) and may hold a step of the code base's own (`class RescaleChannels` with a `__call__`, defined in
that function or its module). Such a transform is read where the code shows it all: every return of the
function, each step a deterministic torchvision transform (in another module, named through that module's
imports) or an instance of a class of the code base whose `__call__` draws nothing (kb/scan/datasets.py
reads it as a dataset's `__getitem__`). Anything else (a `Random*` transform, a transform of another
library, a parameter without callers) may draw.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kb.scan import follow
from kb.scan.syntax import imported_name

_STEPS = ("ToTensor", "PILToTensor", "ToPILImage", "Normalize", "Resize", "CenterCrop", "Grayscale", "Pad")
DETERMINISTIC = frozenset(f"torchvision.transforms.{n}" for n in (*_STEPS, "Scale", "ConvertImageDtype", "Compose")) \
    | frozenset(f"torchvision.transforms.v2.{n}" for n in (*_STEPS, "ToImage", "ToDtype", "Compose"))
NAMES = frozenset(n.rsplit(".", 1)[-1] for n in DETERMINISTIC)

# (a call's function, where it is) -> the class or function of the code base it calls, its module's
# definitions, and whether that module is another file (kb/scan/datasets.py's lookup)
Definition = Callable[[ast.AST, follow.Where], "tuple[ast.AST, dict, bool] | None"]
# (a class, its module's definitions, whether another file, its construction) -> its `__call__` draws nothing
QuietCall = Callable[[ast.ClassDef, dict, bool, ast.Call], bool]
# (a module's definitions, whether another file) -> that module's imports, local name -> dotted name
Imports = Callable[[dict, bool], dict[str, str]]
# (a function handed on as a value, where it is) -> its body draws nothing (kb/scan/datasets.py's reading)
QuietFunction = Callable[[ast.expr, follow.Where], bool]

# Conversions a Compose may hold as plain steps: a dtype or array constructor called on the image.
CONVERSIONS = frozenset({*(f"numpy.{n}" for n in ("float16", "float32", "float64", "uint8", "int32", "int64",
                                                   "asarray", "array", "ascontiguousarray")),
                         "torch.from_numpy", "torch.as_tensor", "torch.tensor"})


def made_quiet(node: ast.Call, where: follow.Where, imports: Imports, definition: Definition,
               quiet_call: QuietCall, depth: int, quiet_function: QuietFunction | None = None) -> bool:
    """A transform made by a call of the code base (a torchvision transform named through the imports of the
    module `where` is in): a deterministic torchvision transform or a Compose of such
    steps, an instance of a class of the code base whose `__call__` draws nothing, or what a function of the
    code base returns, every return one of these."""
    if depth <= 0 or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return False
    name = imported_name(node.func, imports(where.defs, where.foreign))
    if name in _LAMBDAS:  # transforms.Lambda(fn): fn is the step
        return len(node.args) == 1 and not node.keywords and plain_step(node.args[0], where, imports, quiet_function)
    if name in DETERMINISTIC:
        if not name.endswith(".Compose"):
            return True
        steps = node.args[0] if node.args else None
        return isinstance(steps, (ast.List, ast.Tuple)) and all(
            made_quiet(s, where, imports, definition, quiet_call, depth - 1, quiet_function) if isinstance(s, ast.Call)
            else plain_step(s, where, imports, quiet_function) for s in steps.elts)
    local = _local_class(where.scope, node.func)
    found = (local, where.defs, where.foreign) if local is not None else definition(node.func, where)
    if found is None:
        return False
    made, defs, foreign = found
    if isinstance(made, ast.ClassDef):
        return quiet_call(made, defs, foreign, node)
    returns = follow.returns(made)
    inner = follow.Where(made, defs, foreign)
    return bool(returns) and all(isinstance(r, ast.Call) and made_quiet(r, inner, imports, definition, quiet_call, depth - 1,
                                                                        quiet_function) for r in returns)


_LAMBDAS = frozenset({"torchvision.transforms.Lambda", "torchvision.transforms.v2.Lambda"})


def plain_step(step: ast.expr, where: follow.Where, imports: Imports, quiet_function: QuietFunction | None) -> bool:
    """A step handed in as a function, not made by a call: a numpy or torch conversion, or a function (a lambda,
    one of the code base) whose body draws nothing."""
    if imported_name(step, imports(where.defs, where.foreign)) in CONVERSIONS:
        return True
    return isinstance(step, (ast.Name, ast.Attribute, ast.Lambda)) and quiet_function is not None \
        and quiet_function(step, where)


def _local_class(scope: ast.AST | None, func: ast.AST) -> ast.ClassDef | None:
    """A class the function `scope` defines itself (`class RescaleChannels(object)` inside a factory)."""
    if scope is None or isinstance(scope, ast.Module) or not isinstance(func, ast.Name):
        return None
    return next((s for s in follow.own_statements(scope) if isinstance(s, ast.ClassDef) and s.name == func.id), None)
