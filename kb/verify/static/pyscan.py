"""Python-side determinism checks in a wheel's .py files, found with the `ast` module.

A check is a call to a switch reader (`torch.are_deterministic_algorithms_enabled()`,
`config.is_op_determinism_enabled()`) or to an alert helper (`alert_not_deterministic("...")`).
Reading the syntax tree rather than grepping lines gives the enclosing function (which op
the check belongs to), whether the branch raises, and the raised message's literal text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    function: str  # dotted module path and function, e.g. torch.nn.functional.interpolate
    line: int
    effect: str  # "raise" (the guarded branch raises), "alert" (alert helper), "branch" (takes another path)
    message: str
    guard: str = ""  # the enclosing `if` tests, outermost first (which mode or case the check is for)
    cases: str = ""  # for a branch: the tests of the `if`s directly inside it (pad: which modes it handles)


def module_name(member: str) -> str:
    return member.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def scan(member: str, source: str, readers: tuple[str, ...], alerts: tuple[str, ...]) -> list[Check]:
    """Checks in one file; a file that does not parse (a template, Python 2) yields none."""
    if not any(name in source for name in readers + alerts):
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Check] = []
    module = module_name(member)
    for scope, node, guard in _walk(tree, "", ""):
        if isinstance(node, ast.Call) and _callee(node) in alerts:
            arg = _literal(node.args[0]) if node.args else ""
            out.append(Check(_qual(module, scope), node.lineno, "alert", arg, guard))
        elif isinstance(node, ast.If) and _calls(node.test, readers):
            raised = next((n for n in _body_nodes(node.body) if isinstance(n, ast.Raise)), None)
            if raised is not None:
                out.append(Check(_qual(module, scope), node.lineno, "raise", _raised_text(raised), guard))
            else:
                cases = " | ".join(" ".join(ast.unparse(n.test).split())[:120] for n in node.body if isinstance(n, ast.If))
                out.append(Check(_qual(module, scope), node.lineno, "branch", "", guard, cases[:300]))
    return sorted(set(out), key=lambda c: (c.line, c.effect))


def _qual(module: str, scope: str) -> str:
    return f"{module}.{scope}" if scope else module


def _walk(node: ast.AST, scope: str, guard: str):
    """(scope, node, guard) for every node; guard is the chain of enclosing `if` tests in the function
    (outermost first, those reading the switch left out): for interpolate, which mode a branch is for."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _walk(child, f"{scope}.{child.name}" if scope else child.name, "")
        else:
            yield scope, child, guard
            inner = guard
            if isinstance(child, ast.If) and not any(isinstance(n, ast.Call) and "determinis" in _callee(n) for n in ast.walk(child.test)):
                test = " ".join(ast.unparse(child.test).split())[:200]
                inner = f"{guard} / {test}" if guard else test
            yield from _walk(child, scope, inner)


def _body_nodes(body: list[ast.stmt]):
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from ast.walk(stmt)


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _calls(test: ast.AST, names: tuple[str, ...]) -> bool:
    return any(isinstance(n, ast.Call) and _callee(n) in names for n in ast.walk(test))


def _literal(node: ast.AST) -> str:
    """The constant text of a str, an f-string (placeholders as {…}) or an implicit concatenation."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{…}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left) + _literal(node.right)
    return ""


def _raised_text(raised: ast.Raise) -> str:
    exc = raised.exc
    if isinstance(exc, ast.Call) and exc.args:
        return " ".join(_literal(exc.args[0]).split())
    return ""
