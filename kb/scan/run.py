"""The whole scan: files -> resolved calls (in worker processes when there are many) ->
applied fixes -> versions -> findings -> suppression -> recipe."""

from __future__ import annotations

import ast
import os
from typing import NamedTuple

from kb.query import index
from kb.scan import lookup, pins, recipe, resolve, sources, switches

PARALLEL_FROM = 64  # fewer files parse faster than worker processes start


class FileError(NamedTuple):
    path: str
    line: int
    col: int
    message: str


class Report(NamedTuple):
    files: int
    findings: tuple[lookup.Finding, ...]
    suppressed: int
    errors: tuple[FileError, ...]
    pins: dict[str, pins.Pin]
    applied: dict[str, switches.Applied]
    recipes: tuple[recipe.Recipe, ...]
    device: str


def targets(idx: dict) -> tuple[frozenset[str], dict[str, tuple[str, ...]], dict[str, str]]:
    """(names with records, method name -> class-qualified ops, name -> framework)."""
    names: dict[str, str] = {}
    for framework, table in idx["names"].items():
        for name in table:
            names.setdefault(name, framework)
    methods: dict[str, list[str]] = {}
    for name in names:
        parent, _, method = name.rpartition(".")
        owner = parent.rpartition(".")[2]
        if method.startswith("__") or not owner:
            continue
        if owner[:1].isupper() or owner == "ndarray":
            methods.setdefault(method, []).append(name)
    return frozenset(names), {m: tuple(sorted(ops)) for m, ops in methods.items()}, names


_SHARED: tuple = ()


def _init(shared: tuple) -> None:
    global _SHARED
    _SHARED = shared


def _one(found: sources.Found) -> tuple:
    """(path, unit cells, Module | None, [FileError], suppressions) for one file; runs in a worker.

    A notebook cell that does not parse is reported and blanked, and the other cells are
    scanned, as Jupyter runs the cells that work."""
    wanted, methods = _SHARED
    path = found.path
    try:
        unit = sources.read(path, found.root)
    except sources.SourceError as exc:
        return path, (), None, [FileError(path, 1, 1, str(exc))], {}
    errors: list[FileError] = []
    text = unit.text
    for attempt in range(2):
        try:
            module = resolve.analyse(text, path, wanted, methods, switches.WATCHED)
        except SyntaxError as exc:
            if attempt or not unit.cells:
                cell, line = unit.place(exc.lineno or 1)
                where = f"cell {cell}: " if cell is not None else ""
                errors.append(FileError(path, line, exc.offset or 1, f"{where}cannot parse: {exc.msg}"))
                return path, unit.cells, None, errors, {}
            text, errors = _without_bad_cells(text, unit, path)
            continue
        except (RecursionError, MemoryError, ValueError) as exc:
            message = f"cannot parse: too deeply nested or too large ({type(exc).__name__})"
            return path, unit.cells, None, [*errors, FileError(path, 1, 1, message)], {}
        return path, unit.cells, module, errors, resolve.suppressions(text)
    return path, unit.cells, None, errors, {}  # pragma: no cover - the loop always returns


def _without_bad_cells(text: str, unit: sources.Unit, path: str) -> tuple[str, list[FileError]]:
    """The notebook's text with every cell that does not parse on its own blanked, and an
    error for each (one parse per cell, so a notebook of many bad cells stays linear)."""
    lines = text.split("\n")
    bounds = [first for first, _ in unit.cells] + [len(lines) + 1]
    errors = []
    for k, (first, number) in enumerate(unit.cells):
        cell_lines = lines[first - 1: bounds[k + 1] - 1]
        try:
            compile("\n".join(cell_lines), path, "exec", ast.PyCF_ONLY_AST)
        except SyntaxError as exc:
            errors.append(FileError(path, exc.lineno or 1, exc.offset or 1, f"cell {number}: cannot parse: {exc.msg}"))
            lines[first - 1: bounds[k + 1] - 1] = [""] * len(cell_lines)
        except (RecursionError, MemoryError, ValueError) as exc:
            errors.append(FileError(path, 1, 1, f"cell {number}: cannot parse: {type(exc).__name__}"))
            lines[first - 1: bounds[k + 1] - 1] = [""] * len(cell_lines)
    return "\n".join(lines), errors


def analyse_all(files: list[sources.Found], wanted: frozenset[str], methods: dict, jobs: int) -> list[tuple]:
    shared = (wanted, methods)
    jobs = min(jobs, os.cpu_count() or 1, len(files))  # --jobs 1000000 would fork until the machine stops
    if jobs <= 1 or len(files) < PARALLEL_FROM:
        _init(shared)
        return [_one(f) for f in files]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init, initargs=(shared,)) as pool:
            return list(pool.map(_one, files, chunksize=max(1, len(files) // (jobs * 4))))
    except (BrokenProcessPool, OSError):  # a worker died (out of memory) or none could start: go on in this process
        _init(shared)
        return [_one(f) for f in files]


def _silenced(table: dict, call: resolve.Call, record: str) -> bool:
    for line in range(call.line, call.end_line + 1):
        ids = table.get(line, frozenset())
        if ids is None or record in ids:
            return True
    return False


def scan(paths: list[str], *, given: dict[str, pins.Pin] | None = None, lockfile: str | None = None,
         device: str = "gpu", exclude: tuple[str, ...] = (), jobs: int | None = None) -> Report:
    """Scan files and folders. Raises FileNotFoundError for a missing path and pins.PinError
    for a bad lockfile; a file that cannot be parsed is a FileError in the report."""
    idx = index()
    files = sources.discover(paths, exclude)
    wanted, methods, framework_of = targets(idx)
    lock = pins.from_lockfile(lockfile) if lockfile else None
    results = analyse_all(files, wanted, methods, jobs or min(2, os.cpu_count() or 1))

    errors: list[FileError] = []
    settings: list[tuple[str, resolve.Setting]] = []
    used: set[str] = set()
    for path, _, module, problems, _ in results:
        errors.extend(problems)
        if module is None:
            continue
        settings.extend((path, s) for s in module.settings)
        used.update(framework_of[c.op] for c in module.calls)
    applied = switches.applied(settings, used)
    solutions = idx["solutions"]
    codes = switches.closure({c for c, a in applied.items() if a.condition is None}, solutions)
    maybe = switches.closure({c for c, a in applied.items() if a.condition is not None}, solutions) - codes
    where = {}
    for code, a in applied.items():
        where[code] = (f"{a.path}:{a.line}" if a.path else "default") + (f", only if {a.condition}" if a.condition else "")
    for code in (codes | maybe) - set(where):  # implied codes: name where their implier was set
        where[code] = next(w for c, w in where.items() if code in switches.closure({c}, solutions))
    chosen = pins.choose(used, given or {}, lock, idx["registries"])
    conditions = {rid: tuple(src.get("conditions") or ()) for rid, src in idx["sources"].items()}

    found: dict[tuple, lookup.Finding] = {}
    suppressed = 0
    for path, cells, module, _, silenced in results:
        if module is None:
            continue
        unit = sources.Unit(path, "", cells)
        for call in module.calls:
            framework = framework_of[call.op]
            pin = chosen.get(framework)
            if pin is None:
                continue
            for finding in lookup.findings(call, path, unit.place(call.line), framework, pin.version, device, codes,
                                           where, conditions, maybe):
                if _silenced(silenced, call, finding.record):
                    suppressed += 1
                    continue
                key = (path, finding.cell, finding.line, finding.col, finding.record)
                old = found.get(key)
                if old is None or lookup.LEVELS[finding.level] > lookup.LEVELS[old.level]:
                    found[key] = finding
    ordered = tuple(sorted(found.values(), key=lambda f: (f.path, f.cell or 0, f.line, f.col, f.record)))
    return Report(len(files), ordered, suppressed, tuple(errors), chosen, applied,
                  tuple(recipe.recipes(list(ordered), idx["solutions"], idx["order"])), device)
