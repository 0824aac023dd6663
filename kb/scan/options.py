"""Whether `args.seed` / `FLAGS.seed` is a command-line option of the file whose value is always a number.

An op given `seed=args.seed` has its own seed in every run when the option cannot be None: argparse's
`add_argument("--seed", default=<int>)` (or `type=int, required=True`), absl's `DEFINE_integer("seed", <int>, ...)`.
Read in the scanned file only, and only when nothing in the file assigns the attribute (pix2pix's
`if a.seed is None: a.seed = random.randint(...)` draws a new seed each run).
"""

from __future__ import annotations

import ast

from kb.scan.context import Context
from kb.scan.nodes import iwalk


def int_option(ctx: Context, node: ast.AST | None) -> bool:
    """`X.name` where this file defines the option `name` once, with a number as its default (or required and
    typed int), and assigns `.name` nowhere."""
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name) or ctx.tree is None:
        return False
    name = node.attr
    defined: list[bool] = []
    for sub in iwalk(ctx.tree):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if any(isinstance(t, ast.Attribute) and t.attr == name for t in targets):
                return False
        elif isinstance(sub, ast.Call) and isinstance(sub.func, (ast.Attribute, ast.Name)):
            called = sub.func.attr if isinstance(sub.func, ast.Attribute) else sub.func.id
            if called == "add_argument" and _argparse_name(sub) == name:
                defined.append(_argparse_int(sub))
            elif called == "DEFINE_integer" and _absl_name(sub) == name:
                default = sub.args[1] if len(sub.args) > 1 else _keyword(sub, "default")
                defined.append(_number(default))
    return len(defined) == 1 and defined[0]


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _number(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def _argparse_name(call: ast.Call) -> str | None:
    dest = _keyword(call, "dest")
    if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
        return dest.value
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = [f for f in flags if f.startswith("--")] or flags
    return long[0].lstrip("-").replace("-", "_") if long else None


def _argparse_int(call: ast.Call) -> bool:
    default = _keyword(call, "default")
    if default is not None:
        return _number(default)
    required, kind = _keyword(call, "required"), _keyword(call, "type")
    return isinstance(required, ast.Constant) and required.value is True and isinstance(kind, ast.Name) and kind.id == "int"


def _absl_name(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else _keyword(call, "name")
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
