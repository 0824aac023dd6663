"""The parameters and buffers a class makes (`self.X = nn.Parameter(...)`, `self.register_buffer("X", ...)`),
for the walk's `self.X` reads (kb/scan/visitor.py pushes them per enclosing class), and the
`nn.Parameter(torch.empty(...))` calls that the class visibly initialises (a `reset_parameters` method, an
`nn.init.*` call): those are no uninitialized memory.

Kept apart from the walk: a class is searched in the module's text first (`ParameterText`), so that the
many classes that make no parameter are never walked for them.
"""

from __future__ import annotations

import ast
import re
from itertools import accumulate

from kb.scan import nodes
from kb.scan.context import Context

_PARAMETER_MAKERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_INITIALISERS = frozenset({"reset_parameters", "_reset_parameters", "init_weights", "_init_weights", "initialize_parameters"})


class ParameterText:
    """The module's text, searched for the calls that make parameters (built at the first class searched)."""

    def __init__(self) -> None:
        self.makers: re.Pattern[str] | None = None  # what a class's text must hold to make parameters
        self.source = ""  # the module's text, and its lines' running lengths
        self.starts: list[int] = []

    def makes_parameters(self, ctx: Context, first: int, last: int) -> bool:
        """Lines first..last call nn.Parameter under any of the module's names, or register_buffer.
        Searched in place in the module's text (a class's lines joined anew, for every class and
        nested class, cost more than the search), for the names without a leading \\b, each match
        checked to start a word (a leading \\b makes re try every position)."""
        if self.makers is None:
            names = {"Parameter", *(a for a, full in ctx.aliases.items() if full in _PARAMETER_MAKERS)}
            self.makers = re.compile(r"(?:" + "|".join(map(re.escape, sorted(names))) + r")\s*\(")
            self.source = "\n".join(ctx.lines)
            self.starts = [0, *accumulate(map(len, ctx.lines))]  # + k: the offset of line k + 1
        text, start, end = self.source, self.starts[first - 1] + first - 1, self.starts[last] + last - 1
        if text.find("register_buffer", start, end) >= 0:
            return True
        while (match := self.makers.search(text, start, end)) is not None:
            before = text[match.start() - 1] if match.start() else " "
            if not (before.isalnum() or before == "_"):  # re's \w: a word character
                return True
            start = match.start() + 1
        return False


def members(ctx: Context, text: ParameterText, node: ast.ClassDef) -> set[str]:
    """`self.X = nn.Parameter(...)` and `self.register_buffer("X", ...)` anywhere in the class.
    When the class also initialises its parameters (a `reset_parameters` method, or an
    `nn.init.*` call), `nn.Parameter(torch.empty(...))` in it is not uninitialized memory."""
    found: set[str] = set()
    first, last = node.lineno, node.end_lineno or node.lineno
    if ctx.lines and not text.makes_parameters(ctx, first, last):
        return found  # ("Parameters:" in a docstring is no call: the class is not walked for it)
    walked = nodes.walk(node)
    initialises = any(
        (isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name in _INITIALISERS)
        or (isinstance(sub, ast.Call) and (ctx.dotted(sub.func) or "").startswith("torch.nn.init."))
        for sub in walked)
    for sub in walked:
        if initialises and isinstance(sub, ast.Call) and ctx.dotted(sub.func) in _PARAMETER_MAKERS and sub.args:
            ctx.initialised.add(id(sub.args[0]))
        if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) \
                and ctx.dotted(sub.value.func) in _PARAMETER_MAKERS:
            for target in sub.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    found.add(target.attr)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "register_buffer" \
                and sub.args and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
            found.add(sub.args[0].value)
    return found
