"""Whether a value a dataset hands to a call is used there as plain data (a number, a path), not run.

kb/scan/datasets.py takes an attribute that a dataset's `__init__` sets to one of its parameters
(`self.inner = inner`) for an object the caller chose, which may draw random numbers when `__getitem__`
indexes it, calls it, or hands it to a call that does. Settings read from a config (`h.n_fft`, `h.fmax`)
are such parameters too, and are handed on to compute with: `mel_spectrogram(audio, self.n_fft, ...)`.
Handing one on runs none of its code when the call only computes with it:

- a function of a numeric library (torch, NumPy, math, SciPy, librosa) or of `os.path`, by the module's imports, that is
  not one that takes a function to run (`map`, `apply`, `vectorize`, `vmap`, `checkpoint`, ...);
- a builtin that converts or measures (`str`, `int`, `float`, `len`, ...), `range` (a loop bound), or a string's `format`;
- a function of the same module (or a method of the dataset) whose parameter receiving it is, wherever it
  is read, only an operand of arithmetic or a comparison, an index, or handed to such calls in turn.

Anything else (returned, stored, indexed, called, a method of it called, handed to another library) may
run the caller's code: the dataset stays unread.
"""

from __future__ import annotations

import ast

from kb.scan.nodes import iwalk
from kb.scan.syntax import imported_name

_NUMERIC = ("torch.", "numpy.", "math.", "scipy.", "librosa.", "os.path.")
_RUNS_CALLABLES = ("map", "apply", "vectorize", "vmap", "checkpoint", "partial", "call", "func", "compile", "jit",
                   "grad", "iter", "hook", "register", "load", "script", "trace")
_BUILTINS = frozenset({"str", "int", "float", "bool", "len", "round", "abs", "repr", "format", "isinstance", "print", "range"})
_DATA_PARENTS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.FormattedValue, ast.If, ast.IfExp)


def as_data(call: ast.Call, arg: ast.AST, defs: dict, imports: dict[str, str],
            methods: dict[str, ast.AST] | None = None, depth: int = 3) -> bool:
    """Whether `call`, given `arg` (one of its arguments), only computes with it (module docstring)."""
    if arg is call.func or depth <= 0 or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return False
    func = call.func
    if isinstance(func, ast.Name) and func.id in _BUILTINS and func.id not in defs and func.id not in imports:
        return True
    if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant) \
            and isinstance(func.value.value, str):
        return True  # a message: `"{} SR".format(rate)`
    target, skip = _target(func, defs, methods or {})
    if target is not None:
        param = _parameter(target, call, arg, skip)
        return param is not None and _used_as_data(target, param, defs, imports, methods, depth - 1)
    name = imported_name(func, imports)
    return name is not None and name.startswith(_NUMERIC) \
        and not any(word in name.rsplit(".", 1)[-1].lower() for word in _RUNS_CALLABLES)


def _target(func: ast.AST, defs: dict, methods: dict[str, ast.AST]) -> tuple[ast.AST | None, int]:
    """The function of the module (or method of the dataset, whose `self` is skipped) a call calls."""
    if isinstance(func, ast.Name) and isinstance(defs.get(func.id), (ast.FunctionDef, ast.AsyncFunctionDef)):
        return defs[func.id], 0
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and isinstance(methods.get(func.attr), (ast.FunctionDef, ast.AsyncFunctionDef)):
        return methods[func.attr], 1
    return None, 0


def _parameter(fn: ast.AST, call: ast.Call, arg: ast.AST, skip: int) -> str | None:
    """The parameter of `fn` that `arg` binds (None: through `*args` / `**kwargs`, or not found)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][skip:]
    named = set(positional[len(fn.args.posonlyargs):]) | {a.arg for a in fn.args.kwonlyargs}
    for i, given in enumerate(call.args):
        if given is arg:
            return positional[i] if i < len(positional) else None
    for k in call.keywords:
        if k.value is arg:
            return k.arg if k.arg in named else None
    return None


def _used_as_data(fn: ast.AST, name: str, defs: dict, imports: dict[str, str],
                  methods: dict[str, ast.AST] | None, depth: int) -> bool:
    """Every read of the parameter `name` in `fn` computes with it; it is never rebound."""
    parents: dict[int, ast.AST] = {}
    for node in iwalk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            if isinstance(child, ast.Name) and child.id == name and not isinstance(child.ctx, ast.Load):
                return False
        if node is not fn and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) \
                and any(isinstance(n, ast.Name) and n.id == name for n in iwalk(node)):
            return False  # read in a nested function: not followed
    for node in iwalk(fn):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.keyword):
            parent = parents.get(id(parent))
        if isinstance(parent, _DATA_PARENTS) and not (isinstance(parent, ast.IfExp) and parent.test is not node):
            continue
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            continue
        if isinstance(parent, ast.Call) and as_data(parent, node, defs, imports, methods, depth):
            continue
        return False
    return True
