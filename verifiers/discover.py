"""Find registered verifiers by reading verifiers/ with `ast`, importing nothing.

Lint (KB014) and the planner of `kb verify` need the names, frameworks and devices of the
verifiers without importing torch, jax or tensorflow (the GPU machine has no TensorFlow,
CI has no CUDA), so the `@verifier(...)` decorator takes literal arguments only and this
module reads them from the source.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kb.case import WHOLE, Case, as_cases

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Found:
    """One `@verifier(...)` as its decorator writes it: what lint (KB014), the planner and the
    coverage table know of a verifier without importing it."""

    name: str
    framework: str | None
    device: str  # gpu | cpu | any
    handles: tuple[str, ...]  # the solution codes the verifier's switch can apply
    solutions: tuple[str, ...]  # the codes it runs when no record names any
    cases: tuple[Case, ...]  # one call each (kb/case.py; kb/verify/cases.py decides what a record says of it)
    module: str  # dotted name, imported by the child that runs it
    path: Path
    line: int
    gpus: int = 1  # how many GPUs the verifier needs (kb/verify/multigpu.py skips it on fewer)
    problems: tuple[str, ...] = ()  # why its `cases=` could not be read (lint KB024 reports them)

    def to_dict(self) -> dict[str, Any]:
        """Every field but `path` (a cache stores the path relative to its folder)."""
        out = asdict(self)
        del out["path"]
        out["cases"] = [c.to_dict() for c in self.cases]
        out["problems"] = list(self.problems)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: Path) -> Found:
        """to_dict's output (a cache entry) back, at `path`."""
        kw: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        kw.update(cases=tuple(Case.from_dict(c) for c in data["cases"]), path=path)
        return cls(**kw)


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    return ".".join(rel.parts)


class _Inline(ast.NodeTransformer):
    """Replace names of earlier module constants by their literal values."""

    def __init__(self, known: dict[str, Any]) -> None:
        self.known = known

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.known:
            return ast.copy_location(ast.Constant(self.known[node.id]) if not isinstance(
                self.known[node.id], (tuple, list, dict)) else ast.parse(repr(self.known[node.id]), mode="eval").body, node)
        return node


def _constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level `NAME = <literal>` assignments (which may name earlier such constants): a
    case list is written once as a constant and named in the decorator."""
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(_Inline(out).visit(node.value))
            except (ValueError, SyntaxError):
                pass
    return out


def python_files(root: Path) -> list[Path]:
    """The .py files under `root`, sorted, walked with an explicit stack (Path.rglob recurses
    once per folder level: a committed chain of 1,000 folders was a RecursionError)."""
    from kb.untrusted import files_under

    return [p for p in files_under(root) if p.suffix == ".py"]


def scan(root: Path = HERE) -> dict[str, Found]:
    """Every `@verifier("name", ...)` under `root` (the verifiers package)."""
    found: dict[str, Found] = {}
    for path in python_files(root):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, SyntaxError):
            continue
        constants = _constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for deco in node.decorator_list:
                if not (isinstance(deco, ast.Call) and getattr(deco.func, "id", getattr(deco.func, "attr", "")) == "verifier"):
                    continue
                if not deco.args or not isinstance(deco.args[0], ast.Constant) or not isinstance(deco.args[0].value, str):
                    continue
                kw: dict[str | None, Any] = {}
                problems: list[str] = []
                for keyword in deco.keywords:
                    if isinstance(keyword.value, ast.Name) and keyword.value.id in constants:
                        kw[keyword.arg] = constants[keyword.value.id]
                        continue
                    try:
                        kw[keyword.arg] = ast.literal_eval(keyword.value)
                    except ValueError:
                        kw[keyword.arg] = None
                        if keyword.arg == "cases":  # not one default case in silence: lint KB024 says so
                            problems.append(f"line {keyword.value.lineno}: cases= is not a literal (or a module "
                                            "constant of literals), so it cannot be read without running the module")
                name = deco.args[0].value
                try:
                    cases = as_cases(kw.get("cases"), f"verifier {name!r}")
                except ValueError as exc:
                    cases, problems = (WHOLE,), [*problems, str(exc)]
                gpus = kw.get("gpus")
                found[name] = Found(
                    name=name, framework=kw.get("framework"), device=kw.get("device", "gpu"),
                    handles=tuple(kw.get("handles") or ()), solutions=tuple(kw.get("solutions") or ()),
                    cases=cases, module=_module_name(path, root), path=path, line=deco.lineno,
                    gpus=gpus if isinstance(gpus, int) else 1, problems=tuple(problems),
                )
    return found


def code_hash(root: Path = HERE) -> str:
    """sha256 of every .py file of the verifiers package and the harness (kb/verify/)."""
    digest = hashlib.sha256()
    paths = python_files(root) + sorted((root.parent / "kb" / "verify").glob("*.py"))
    for path in paths:
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(root.parent).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
