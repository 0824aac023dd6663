"""Functions a factory returns for a data pipeline (kb/scan/quietfunctions.py's quiet_functions reads them):
`train_fn, eval_fn = get_process_fns(bits)`, then only `ds.map(train_fn)`. What a tf.data `.map()` runs
records no gradient, whether the function is named where it is defined or returned by another first."""

from __future__ import annotations

import ast
from collections.abc import Callable

MAPPED = "it runs only as a data pipeline's .map() function"


class Factories:
    """Functions a factory returns (`return train_fn, eval_fn`) for its callers to hand to a data pipeline:
    `a, b = make_fns(...)`, then only `ds.map(a)`. A returned function runs only as a `.map()` function when
    every call of its factory is such an assignment and every name it is bound to (by name, anywhere in the
    file) is assigned only so, at its position, and read only as a `.map()` argument; otherwise it may run
    anywhere."""

    def __init__(self, stages: frozenset[str], dotted: Callable[[ast.AST], str | None]) -> None:
        self.stages, self.dotted = stages, dotted  # the pipeline's methods; a node's dotted name
        self.returns_of: list[tuple[tuple[int, str], int | None, tuple[int, str]]] = []  # (factory, position, returned)
        self.calls: dict[tuple[int, str], int] = {}  # factory -> its calls
        self.assigned: dict[tuple[int, str], int] = {}  # factory -> its calls whose result is unpacked into names
        self.binds: dict[str, set[tuple[tuple[int, str], int | None]]] = {}  # name -> (factory, position)
        self.stores: dict[str, int] = {}
        self.binding_stores: dict[str, int] = {}
        self.loads: dict[str, int] = {}
        self.maps: dict[str, int] = {}

    def visit(self, node: ast.AST, chain: tuple, owner: tuple[int, str] | None,
              resolve: Callable[[str, tuple], tuple[int, str] | None], handled: set[int]) -> None:
        """Read one node of quiet_functions' walk (`chain`: its enclosing functions; `owner`: the def whose body
        holds it; `resolve`: a name in a chain to its def); names read here are added to `handled`."""
        kind = type(node)
        if kind is ast.Return and owner is not None:
            assert isinstance(node, ast.Return)
            self._returned(node, owner, lambda name: resolve(name, chain), handled)
        elif kind is ast.Assign:
            assert isinstance(node, ast.Assign)
            if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
                self._bound(node, resolve(node.value.func.id, chain))
        elif kind is ast.Call:
            assert isinstance(node, ast.Call)
            func, first = node.func, node.args[0] if node.args else None
            if isinstance(func, ast.Name) and (key := resolve(func.id, chain)) is not None:
                self.calls[key] = self.calls.get(key, 0) + 1
            elif isinstance(func, ast.Attribute) and func.attr in self.stages and isinstance(first, ast.Name) \
                    and resolve(first.id, chain) is None and not (self.dotted(func) or "").startswith("jax."):
                self.maps[first.id] = self.maps.get(first.id, 0) + 1  # `ds.map(train_fn)` of a variable
                handled.add(id(first))

    def _returned(self, node: ast.Return, owner: tuple[int, str], resolve: Callable[[str], tuple[int, str] | None],
                  handled: set[int]) -> None:
        value = node.value
        names: list[tuple[int | None, ast.expr]] = [(None, value)] if isinstance(value, ast.Name) else \
            list(enumerate(value.elts)) if isinstance(value, ast.Tuple) else []
        for position, name in names:
            key = resolve(name.id) if isinstance(name, ast.Name) else None
            if key is not None:
                self.returns_of.append((owner, position, key))
                handled.add(id(name))

    def _bound(self, node: ast.Assign, key: tuple[int, str] | None) -> None:
        if key is None or len(node.targets) != 1:
            return
        target = node.targets[0]
        names: list[tuple[int | None, ast.expr]] = [(None, target)] if isinstance(target, ast.Name) else \
            list(enumerate(target.elts)) if isinstance(target, (ast.Tuple, ast.List)) else []
        if not names or not all(type(n) is ast.Name for _, n in names):
            return
        self.assigned[key] = self.assigned.get(key, 0) + 1
        for position, name in names:
            assert isinstance(name, ast.Name)
            self.binds.setdefault(name.id, set()).add((key, position))
            self.binding_stores[name.id] = self.binding_stores.get(name.id, 0) + 1

    def variable(self, node: ast.Name) -> None:
        table = self.loads if type(node.ctx) is ast.Load else self.stores
        table[node.id] = table.get(node.id, 0) + 1

    def returns(self) -> list[tuple[tuple[int, str], str | None]]:
        """(returned function, why it records no gradient there, None: it may) for each return of one."""
        out: list[tuple[tuple[int, str], str | None]] = []
        for factory, position, key in self.returns_of:
            names = [n for n, binds in self.binds.items() if (factory, position) in binds]
            quiet = bool(names) and self.calls.get(factory, 0) == self.assigned.get(factory, 0) and all(
                self.binds[n] == {(factory, position)} and self.stores.get(n, 0) == self.binding_stores.get(n, 0)
                and self.loads.get(n, 0) == 0 and self.maps.get(n, 0) > 0 for n in names)
            out.append((key, MAPPED if quiet else None))
        return out
