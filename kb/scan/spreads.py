"""Keyword dicts spread into calls: a file that binds a name once to a dict display with string keys, and reads
it only as a call's `**name` (or hands it to a builtin that only reads it), passes exactly those keywords
wherever it writes `f(**name)` (Atomu2014/product-nets' `LR(**lr_params)`, one dict per preset). kb/scan/callers.py
reads calls so written as if the keywords were spelled out."""

from __future__ import annotations

import ast

from kb.scan.nodes import iwalk

_READS_ONLY = frozenset({"print", "len", "str", "repr", "sorted", "list"})


def spreads(tree: ast.Module) -> dict[str, ast.Dict]:
    """Name -> the dict display it holds, where the file binds the name once, to a dict display with string
    keys and no `**`, and reads it only as a call's `**name` or an argument of a builtin that reads it
    (`print(params)`): then `f(**name)` passes those keywords (Atomu2014/product-nets' `LR(**lr_params)`)."""
    stores: dict[str, list[ast.AST]] = {}
    loads: dict[str, int] = {}
    for node in iwalk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads[node.id] = loads.get(node.id, 0) + 1
            else:
                stores.setdefault(node.id, []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for a in iwalk(node.args):
                if isinstance(a, ast.arg):
                    stores.setdefault(a.arg, []).extend((a, a))  # a parameter: another binding
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                stores.setdefault(name, []).extend((node, node))
    found: dict[str, ast.Dict] = {}
    for node in iwalk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Dict) and len(stores.get(node.targets[0].id, ())) == 1 \
                and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.value.keys):
            found[node.targets[0].id] = node.value
    if not found:
        return {}
    uses: dict[str, int] = {}
    for node in iwalk(tree):
        if isinstance(node, ast.Call):
            spelled = [k.value for k in node.keywords if k.arg is None]
            if isinstance(node.func, ast.Name) and node.func.id in _READS_ONLY:
                spelled += node.args
            for v in spelled:
                if isinstance(v, ast.Name) and v.id in found:
                    uses[v.id] = uses.get(v.id, 0) + 1
    return {name: d for name, d in found.items() if uses.get(name, 0) == loads.get(name, 0)}


def spread(call: ast.Call, spread: dict[str, ast.Dict]) -> ast.Call:
    """The call with each `**name` of a known dict written as its keywords (the call itself otherwise)."""
    keywords: list[ast.keyword] = []
    for k in call.keywords:
        if k.arg is None and isinstance(k.value, ast.Name) and k.value.id in spread:
            shown = spread[k.value.id]
            keywords += [ast.keyword(key.value, value) for key, value in zip(shown.keys, shown.values)
                         if isinstance(key, ast.Constant) and isinstance(key.value, str)]
        else:
            keywords.append(k)
    if len(keywords) == len(call.keywords) and all(a is b for a, b in zip(keywords, call.keywords)):
        return call
    return ast.Call(call.func, call.args, keywords, lineno=call.lineno, col_offset=call.col_offset,
                    end_lineno=call.end_lineno, end_col_offset=call.end_col_offset)
