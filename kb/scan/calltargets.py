"""A module-level function's or class's parameters as its callers see them: shared by the passes that follow
the values callers pass (kb/scan/callers.py for functions and constructors, kb/scan/methodtargets.py for methods),
so that each reads a definition's signature the same way."""

from __future__ import annotations

import ast
from typing import NamedTuple

from kb.scan import oldsyntax

Def = ast.FunctionDef | ast.AsyncFunctionDef
ROUNDS = 8  # how far a parameter passed on is followed: a caller's, its caller's, ... (simclr: six calls deep)


class Target(NamedTuple):
    """A module-level function or class of one file: its parameters (after `self` for a class) and defaults."""

    path: str
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    params: tuple[str, ...]  # positional, in order
    keywords: tuple[str, ...]  # keyword-only
    defaults: dict[str, ast.expr]


def parse(text: str | None) -> ast.Module | None:
    try:
        return oldsyntax.parse(text) if text is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def signature(fn: Def, skip: int) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, ast.expr]]:
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][skip:]
    defaults = dict(zip([a.arg for a in (*args.posonlyargs, *args.args)][-len(args.defaults):], args.defaults)) \
        if args.defaults else {}
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return tuple(positional), tuple(a.arg for a in args.kwonlyargs), defaults
