"""The whole scan: files -> resolved calls (in worker processes when there are many) ->
applied fixes -> versions -> findings -> suppression -> recipe."""

from __future__ import annotations

import ast
import gc
import os
import warnings
from pathlib import Path
from typing import NamedTuple

from kb.query import scan_index as index
from kb.scan import callers, convfree, differentiates, filecache, filedeps, fixcover, ginconfigs, holders, hostcode, keptrees, keras2, kerasbackend, loaded, lookup, pins, placement, prepare, recipe, reexports, resolve, rules, scope, seedorder, sources, switches, unfetched, unreached, versiongate

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
    runs: tuple[RunSwitches, ...] = ()
    notes: tuple[lookup.Finding, ...] = ()  # calls whose record needs a condition the code does not show (scan.data_note, unknown_shape)
    unverified: int = 0  # calls answered only with "no known source, not verified" (lookup.no_known_source)


class RunSwitches(NamedTuple):
    """What one entry point's process sets: the fixes that hold in it, and those it only might."""

    entry: str
    why: str
    applied: dict[str, switches.Applied]


def targets(idx: dict) -> tuple[frozenset[str], dict[str, tuple[str, ...]], dict[str, str]]:
    """(names with records, method name -> class-qualified ops, name -> framework)."""
    names: dict[str, str] = {}
    for framework, table in idx["names"].items():
        for name in table:
            names.setdefault(name, framework)
    for name in idx["names"].get("keras", ()):  # tf.keras.X is TensorFlow's name of Keras 3's keras.X (from 2.16)
        if name.startswith("keras.") and "tensorflow" in idx["names"]:
            names.setdefault("tf." + name, "tensorflow")
    if "keras" in idx["names"]:  # and keras.X is tf.keras.X: a layer with TensorFlow records only (kb/scan/kerasbackend.py)
        for name in idx["names"].get("tensorflow", ()):
            owner = name.rpartition(".")[0].rpartition(".")[2]
            if name.startswith("tf.keras.") and not owner[:1].isupper():  # functions and classes, not methods
                names.setdefault(name[3:], "keras")
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
_CACHE: filecache.FileCache | None = None  # the readings kept from the last scan of these paths (scan's cache=)
# The resolved path of each folder a file was read from (untrusted.check_inside): one scan's, emptied when
# it starts and ends, so that a folder is resolved once per scan rather than once per file in it.
_FOLDERS: dict[str, str] = {}


def _init(shared: tuple, worker: bool = True, cache: filecache.FileCache | None = None) -> None:
    global _SHARED, _CACHE
    _SHARED, _CACHE = shared, cache
    if worker:  # a worker process only parses and walks: no reference cycles to collect (see _serial)
        keptrees.forget()  # its trees would stay in the worker
        gc.disable()
        quiet_parsing()


def quiet_parsing() -> None:
    """Python warns while it compiles a user's code (an invalid escape such as `"\\["`: a SyntaxWarning since
    3.12, a DeprecationWarning before): that is the user's code's matter, not the scan's, and printed it buries
    the report under lines the user did not ask for. Only those compile warnings are silenced."""
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", message=r"invalid (?:octal )?escape sequence", category=DeprecationWarning)


def _serial(files: list[sources.Found]) -> list[tuple]:
    """Every file in this process, with the cyclic garbage collector paused: parsing allocates millions of nodes,
    and each full collection would walk every object the scan keeps (a third of a large repository's CPU time);
    syntax trees hold no cycles and are freed as soon as a file is done. The texts read are kept (_READ) for the
    passes that read files again after it (sources.Texts), and hostcode.settle's Graphs of the files it reads
    again, built from the trees parsed here (workers' texts and Graphs stay in the workers)."""
    was = gc.isenabled()
    gc.disable()
    _READ.clear()
    try:
        with hostcode.keeping():
            return [_one(f, keep=True) for f in files]
    finally:
        if was:
            gc.enable()


_READ: dict[str, str] = {}  # path -> text, of the files this process read in this scan (_serial)


def _one(found: sources.Found, imported: dict[str, tuple[str, bool]] | None = None,
         starred: dict[str, str] | None = None, keep: bool = False) -> tuple:
    """(path, unit cells, Module | None, [FileError], suppressions) for one file; runs in a worker.
    `imported`: the other files' subclasses of KB classes it imports; `starred`: the imports a
    `from module import *` of a scanned file brings in (resolve.analyse). A reading kept from the
    last scan (_CACHE) is used when the file's text and every look-up it made into other files are
    the same (kb/scan/filecache.py)."""
    path = found.path
    try:
        unit = sources.read(path, found.root, _FOLDERS)
    except sources.SourceError as exc:
        return path, (), None, [FileError(path, 1, 1, str(exc))], {}
    except (ValueError, RecursionError, MemoryError) as exc:  # one file, never the whole scan (docs/security.md)
        return path, (), None, [FileError(path, 1, 1, f"cannot read: {type(exc).__name__}: {exc}")], {}
    if keep:
        _READ[path] = unit.text
    cache = _CACHE
    if cache is None:
        return _read(path, unit, imported, starred)
    key = cache.key(path, unit.text, imported, starred, unit.cells)
    kept = cache.get(key)
    if kept is not None and kept[0][0] == path and prepare.still_holds(kept[1]):
        cache.used(key)
        return kept[0]
    filedeps.watch()
    try:
        reading = _read(path, unit, imported, starred)
    finally:
        seen = filedeps.unwatch()
    cache.put(key, reading, seen)
    return reading


def _pooled(found: sources.Found) -> tuple[tuple, dict[bytes, bytes]]:
    """A worker's reading of one file, with the cache entries it used or made (the scan's process keeps them)."""
    reading = _one(found)
    return reading, (_CACHE.take() if _CACHE is not None else {})


def _read(path: str, unit: sources.Unit, imported: dict[str, tuple[str, bool]] | None,
          starred: dict[str, str] | None) -> tuple:
    """_one's reading of a file's text. A notebook cell that does not parse is reported and blanked, and the
    other cells are scanned, as Jupyter runs the cells that work."""
    wanted, methods, code_rules = _SHARED
    errors: list[FileError] = []
    text = unit.text
    for attempt in range(2):
        try:
            module = resolve.analyse(text, path, wanted, methods, switches.WATCHED, code_rules, imported, starred)
        except (SyntaxError, UnicodeEncodeError) as exc:
            if attempt or not unit.cells:
                lineno, offset, message = _where(exc)
                cell, line = unit.place(lineno)
                where = f"cell {cell}: " if cell is not None else ""
                errors.append(FileError(path, line, offset, f"{where}cannot parse: {message}"))
                return path, unit.cells, None, errors, {}
            text, errors = _without_bad_cells(text, unit, path)
            continue
        except (RecursionError, MemoryError, ValueError) as exc:
            message = f"cannot parse: too deeply nested or too large ({type(exc).__name__})"
            return path, unit.cells, None, [*errors, FileError(path, 1, 1, message)], {}
        return path, unit.cells, module, errors, resolve.suppressions(text)
    return path, unit.cells, None, errors, {}  # pragma: no cover - the loop always returns


def _where(exc: SyntaxError | UnicodeEncodeError) -> tuple[int, int, str]:
    """(line, column, message) of a parse failure. A UnicodeEncodeError is a lone surrogate that
    a notebook's JSON escape (`"\\ud800"`) put in the text: Python cannot compile it either."""
    if isinstance(exc, SyntaxError):
        return exc.lineno or 1, exc.offset or 1, exc.msg
    line = exc.object.count("\n", 0, exc.start) + 1
    column = exc.start - (exc.object.rfind("\n", 0, exc.start) + 1) + 1
    return line, column, f"the lone surrogate {ascii(exc.object[exc.start])} is not text Python can compile"


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
        except (SyntaxError, UnicodeEncodeError) as exc:
            line, column, message = _where(exc)
            errors.append(FileError(path, line, column, f"cell {number}: cannot parse: {message}"))
            lines[first - 1: bounds[k + 1] - 1] = [""] * len(cell_lines)
        except (RecursionError, MemoryError, ValueError) as exc:
            errors.append(FileError(path, 1, 1, f"cell {number}: cannot parse: {type(exc).__name__}"))
            lines[first - 1: bounds[k + 1] - 1] = [""] * len(cell_lines)
    return "\n".join(lines), errors


def analyse_all(files: list[sources.Found], wanted: frozenset[str], methods: dict, jobs: int,
                code_rules: rules.CodeRules | None = None, cache: filecache.FileCache | None = None) -> list[tuple]:
    shared = (wanted, methods, resolve.default_rules() if code_rules is None else code_rules)
    jobs = min(jobs, os.cpu_count() or 1, len(files))  # --jobs 1000000 would fork until the machine stops
    if jobs <= 1 or len(files) < PARALLEL_FROM:
        _init(shared, worker=False, cache=cache)
        return _serial(files)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init,
                                 initargs=(shared, True, cache)) as pool:
            out = []
            for reading, entries in pool.map(_pooled, files, chunksize=max(1, len(files) // (jobs * 4))):
                out.append(reading)
                if cache is not None:
                    cache.now.update(entries)
            return out
    except (BrokenProcessPool, OSError):  # a worker died (out of memory) or none could start: go on in this process
        _init(shared, worker=False, cache=cache)
        return _serial(files)


def _class_of(graph: scope.Graph, path: str, written: str,
              known: dict[tuple[str, str], tuple[str, bool]]) -> tuple[str, bool] | None:
    """The KB class (and whether the signature is the code base's own) of a class named `written`
    (`X`, `mod.X`) in `path`: one of its own classes, or one it imports from a scanned file."""
    head, _, name = written.rpartition(".")
    if not head:
        if (path, name) in known:
            return known[(path, name)]
        for local, module, level, attr in graph.modules[path].layout.bindings:
            if local == name and attr is not None:
                where = graph.resolve(path, module, level)
                if where is not None and (where := reexports.defined_in(graph, where, attr), attr) in known:
                    return known[(where, attr)]
        return None
    for local, module, level, attr in graph.modules[path].layout.bindings:
        if head == local or head.startswith(local + "."):
            base = (f"{module}.{attr}" if module else attr) if attr is not None else module
            where = graph.resolve(path, base + head[len(local):], level)
            if where is not None and (where, name) in known:
                return known[(where, name)]
    return None


def _subclasses_across_files(results: list[tuple], files: list[sources.Found]) -> tuple[list[tuple], scope.Graph | None]:
    """A class of the code base whose base is, directly or through other such classes in any of its
    files, a KB class (`class ScaledEmbedding(nn.Embedding)` in layers.py): the files that import it are
    read again with its name standing for the KB class, so constructing it is constructing the KB
    class (its arguments unknown where a class of the chain defines `__init__`); a file that star-imports a
    scanned module is read again with that module's imports (kb/scan/reexports.py), and so is a file that
    imports a framework name from a scanned module that imports it (`from prep import DataLoader`). Also the import graph
    it built (None if it built none), which scope.runs reuses: a file read again keeps its Layout."""
    modules = {path: module for path, _, module, _, _ in results if module is not None}
    known = {(path, name): (op, own) for path, m in modules.items() for name, _, op, own in m.classes if op}
    stars = any("*" in names for m in modules.values() for _, _, names in m.layout.imports)
    if not known and not stars and not reexports.may_reexport(modules):
        return results, None
    graph = scope.Graph(modules)
    # framework names each file imports through a module of the code base (none where no file may re-export one)
    passed_on = {path: reexports.reexported(graph, path, _SHARED[0]) for path in modules} \
        if reexports.may_reexport(modules) else {}
    grown = bool(known) or any(passed_on.values())
    while grown:
        grown = False
        for path, module in modules.items():
            for name, base, _, own in module.classes:
                if (path, name) not in known:
                    hit = _class_of(graph, path, base, known) or reexports.framework_class(passed_on.get(path), base, _SHARED[0])
                    if hit is not None:
                        known[(path, name)] = (hit[0], own or hit[1])
                        grown = True
    by_path, class_names = {f.path: f for f in files}, {name for _, name in known}
    by_file: dict[str, list[tuple[str, tuple[str, bool]]]] = {}
    for (where, name), value in known.items():
        by_file.setdefault(where, []).append((name, value))
    out = list(results)
    for k, (path, _, module, _, _) in enumerate(results):
        if module is None:
            continue
        imported = {}
        for local, source, level, attr in module.layout.bindings:
            if attr is not None:
                where = graph.resolve(path, source, level)  # (through a package's re-exports: defined_in)
                if where is not None and where != path and attr in class_names and \
                        (where := reexports.defined_in(graph, where, attr), attr) in known:
                    imported[local] = known[(where, attr)]
            # a module of the code base bound to a name (`from pkg import conv`, `import pkg.conv as conv`): its
            # subclasses are spelt `conv.Conv1d` here
            named = f"{source}.{attr}" if source and attr else (attr or source)
            where = graph.resolve(path, named, level) if named else None
            if where is not None and where != path:
                for name, value in by_file.get(where, ()):
                    imported[f"{local}.{name}"] = value
                for name, op in reexports.passed_through(graph, where, _SHARED[0]).items() if stars else ():
                    imported.setdefault(f"{local}.{name}", (op, False))  # `dist.all_reduce` of a re-exporting module
        for module_name, level, names in module.layout.imports if stars else ():  # `from .layers import *`: binds
            where = graph.resolve(path, module_name, level) if "*" in names else None  # its public subclasses too
            for name, value in by_file.get(where, ()) if where is not None and where != path else ():
                if not name.startswith("_"):
                    imported.setdefault(name, value)
        for local, name in passed_on.get(path, {}).items():
            imported.setdefault(local, (name, False))  # `from prep import DataLoader`, prep's own import of torch's
        starred = reexports.starred(graph, path, {path}, _SHARED[0]) if stars else {}
        if imported or starred:
            out[k] = _one(by_path[path], imported, starred)
    return out, graph


def _silenced(table: dict, call: resolve.Call, record: str) -> bool:
    for line in range(call.line, call.end_line + 1):
        ids = table.get(line, frozenset())
        if ids is None or record in ids:
            return True
    return False


def scan(paths: list[str], *, given: dict[str, pins.Pin] | None = None, lockfile: str | None = None,
         device: str = "gpu", exclude: tuple[str, ...] = (), jobs: int | None = None,
         cache: str | os.PathLike | None = None) -> Report:
    """Scan files and folders. Raises FileNotFoundError for a missing path and pins.PinError
    for a bad lockfile; a file that cannot be parsed is a FileError in the report. `cache`: a folder
    where each file's reading is kept for the next scan of the same paths (kb/scan/filecache.py;
    None: every file is read afresh and nothing is written).

    The cyclic garbage collector is paused for the whole scan, as _serial pauses it while files are
    parsed: the subclass pass parses files again and the later passes allocate millions of small
    objects, and each collection that triggers walks every object the scan keeps (hundreds of
    collections, 0.6 s of a large repository's scan); what the scan makes without cycles is freed as
    it goes, and the rest when the collector runs again after it."""
    was = gc.isenabled()
    gc.disable()
    prepare.forget_local_files()
    try:
        with warnings.catch_warnings():  # the caller's own warning filters come back as they were
            quiet_parsing()
            store = filecache.FileCache(Path(cache), paths) if cache is not None else None
            report = _scan(paths, given=given, lockfile=lockfile, device=device, exclude=exclude, jobs=jobs,
                           store=store)
            if store is not None:
                store.save()
            return report
    finally:
        _init(_SHARED, worker=False)  # the store is the scan's
        _READ.clear()  # the texts are the scan's, not the caller's memory
        prepare.forget_local_files()  # and so are the trees of the files it read as imported modules
        hostcode.forget()  # and the Graphs the first pass built for settle
        keptrees.forget()  # and the trees it kept for the callers pass
        if was:
            gc.enable()


def _scan(paths: list[str], *, given: dict[str, pins.Pin] | None, lockfile: str | None, device: str,
          exclude: tuple[str, ...], jobs: int | None, store: filecache.FileCache | None) -> Report:
    idx = index()
    files = sources.discover(paths, exclude)
    _FOLDERS.clear()
    _READ.clear()
    wanted, methods, framework_of = targets(idx)
    lock = pins.from_lockfile(lockfile) if lockfile else None
    code_rules = rules.code_rules(idx)
    # the script files (their paths tell): the callers pass reads the trees of those with calls again
    keptrees.expect(unreached.script_files([os.path.normpath(p) for p in paths if os.path.isdir(p)],
                                           dict.fromkeys(f.path for f in files)))
    results = analyse_all(files, wanted, methods, jobs or min(2, os.cpu_count() or 1), code_rules, store)
    _init((wanted, methods, code_rules), worker=False, cache=store)
    results, graph = _subclasses_across_files(results, files)
    _FOLDERS.clear()

    errors: list[FileError] = []
    used: set[str] = set()
    modules: dict[str, resolve.Module] = {}
    for path, _, module, problems, _ in results:
        errors.extend(problems)
        if module is None:
            continue
        modules[path] = module
        used.update(framework_of[c.op] for c in module.calls)
    backend = kerasbackend.choice(modules)
    tf_names = idx["names"].get("tensorflow", {})
    if backend.tensorflow and "tensorflow" not in used and "keras" in used \
            and any(framework_of[c.op] == "keras" and "tf." + c.op in tf_names for m in modules.values() for c in m.calls):
        used.add("tensorflow")  # Keras 3 runs on TensorFlow: its pin answers the layers' TensorFlow records
    solutions = idx["solutions"]
    named = {os.path.normpath(p) for p in paths if os.path.isfile(p)}
    roots = [os.path.normpath(p) for p in paths if os.path.isdir(p)]
    if (configured := ginconfigs.with_imports(modules, roots)) is not None:
        modules, graph = configured, None  # what the gin files import: a new import graph
    if graph is None or graph.files != frozenset(modules):
        graph = scope.Graph(modules)  # one import graph for the scope, unreached code and modules never called
    runs, reach = scope.runs(modules, named, roots, graph)
    per_run = [switches.applied([*r.holds, *((p, fixcover.conditional(s)) for p, s in r.unreached)], used) for r in runs]
    coverage_of: dict[tuple[int, ...], fixcover.Coverage] = {}
    applied = fixcover.combined(runs, per_run, used)
    chosen = pins.choose(used, given or {}, lock, idx["registries"])
    legacy = keras2.detect(paths, modules, idx, (chosen.get("keras") or (lock or {}).get("keras") or (None,) * 2)[1])
    conditions = {rid: tuple(src.get("conditions") or ()) for rid, src in idx["sources"].items()}
    frameworks = {rid: src.get("framework") for rid, src in idx["sources"].items()}
    passes = {rid: src.get("pass") for rid, src in idx["sources"].items()}
    at_ops = compiled_op_records(idx["sources"])
    scan_rules = rules.of(idx)
    # A program runs backward unless it is a whole program (a __main__ block or a console script) whose files never start
    # one (an inference or conversion script): its own calls lose the backward records; the files it imports get a note
    # (kb/scan/differentiates.py). A module of a package (its folder has __init__.py) is a library even with a __main__.
    # a library's users may call its functions without the argument (deepmind/jraph's models): the files no
    # installable package holds only (a script repository's, or a package's tools/ and script folders)
    scripts = unreached.script_files(roots, modules)
    cpu_why = placement.on_cpu(runs, reach, modules, scripts)
    hidden_why = placement.gpu_hidden(runs, reach, modules)
    texts = sources.Texts(files, _FOLDERS, _READ)  # read once for the three passes below
    unused_defaults = placement.defaults_passed(modules, texts, scripts) if scripts else {}
    off_gpu = placement.off_gpu(runs, reach, texts, used, modules)  # TensorFlow on a TPU or the CPU; JAX off the GPU; Intel XPU code
    parsed = keptrees.take(texts.get)  # the callers pass's trees: parsed once for both of its answers (or kept)
    targets_of: dict = {}  # and what it reads of each of them first
    reading = unreached.caller_files(roots, modules, scripts)  # and a package's that exports nothing
    by_callers = callers.passed(modules, texts, reading, graph, None, parsed, targets_of) if reading else callers.NONE  # what every caller passes
    dead = unreached.unreached(roots, modules, runs, reach, texts, graph, by_callers.dead)
    if dead and reading and (again := callers.passed(modules, texts, reading, graph, dead, parsed, targets_of)) != by_callers:
        by_callers, dead = again, unreached.unreached(roots, modules, runs, reach, texts, graph, again.dead)  # calls in dead code pass nothing
    torch_pin = chosen.get("pytorch")
    gated = versiongate.never(modules, texts, scripts, graph, torch_pin.version if torch_pin else None, parsed)
    idle = holders.idle(modules, texts, graph)  # modules built and never called: their construction runs no kernel
    if scripts and all(module is not None for _, _, module, _, _ in results):  # a file not parsed may read any name
        idle.update(unfetched.never_fetched(modules, texts, scripts))  # graph ops nothing fetches
    overwritten = loaded.overwritten(modules, texts, scripts)  # layers whose drawn weights every program loads over
    overwritten.update(loaded.given(modules, texts))  # layers built with their weights (`weights=`)
    benchmarked = {p for p, m in modules.items() if any(c.op == "torch.backends.cudnn.benchmark" for c in m.calls)}
    nothing_to_bench = convfree.settings_without_conv(benchmarked, runs, reach, texts) if benchmarked else frozenset()
    layouts = {p: m.layout for p, m in modules.items()}  # no program of a file differentiates, or no code at all
    undifferentiated = {**differentiates.never_in_programs(layouts, scripts, roots, runs, reach, texts),
                        **differentiates.never(layouts, scripts, texts, roots, dead, runs)}
    quiet = _quiet_elsewhere(modules)
    for path, spans in hostcode.settle(modules, texts.get).items():  # data-loading and no_grad code, followed across files
        quiet.setdefault(path, []).extend(spans)
    # an entry an installable package holds is its users' library too (a folder with __init__.py alone is not)
    seeded_late = seedorder.unseeded(runs, graph, texts.get)  # draws made before a seed set in a function
    trains = [not modules[r.entry].layout.main or r.why.startswith("console script")
              or (r.entry not in scripts if scripts else placement.in_package(r.entry))
              or any(modules[p].layout.backward for p in r.files) for r in runs]

    found: dict[tuple, lookup.Finding] = {}
    suppressed = 0
    unverified: set[tuple] = set()
    for path, cells, module, _, silenced in results:
        if module is None:
            continue
        unit = sources.Unit(path, "", cells)
        ids = reach.get(path, ())
        cover = coverage_of.get(ids)
        if cover is None:
            cover = coverage_of[ids] = fixcover.coverage(runs, ids, per_run, solutions)
        codes, where, maybe = cover.codes, cover.where, cover.maybe
        backward = not ids or any(trains[k] or runs[k].entry != path for k in ids)
        calls = [one for c in module.calls for one in by_callers.narrow(path, c)]  # once per value callers pass
        for call, framework, on_tf in _answered_as(calls, framework_of, idx["names"], backend):
            pin = chosen.get(framework)
            if pin is None:
                continue
            held = codes - {"SEED"} if seeded_late and "SEED" in codes \
                and seedorder.before_seed(seeded_late, ids, path, call.line) else codes
            dead_why = call.never_runs or (unreached.why(dead, path, call.line) if dead else None) \
                or by_callers.never_runs(path, call.line) or (versiongate.why(gated, path, call.line) if gated else None)
            if not call.no_grad and path in quiet and any(first <= call.line <= last for first, last in quiet[path]):
                call = call._replace(no_grad=True)  # its function runs only where no gradient is recorded
            if lookup.no_known_source(call.op, framework, pin.version, device):
                unverified.add((path, unit.place(call.line), call.col))
            keras_2 = legacy if keras2.applies(legacy, call.op, pin.version) else None
            version = keras_2.version if keras_2 is not None else pin.version
            for finding in lookup.findings(call, path, unit.place(call.line), framework, version, device, held,
                                           where, conditions, maybe, passes, backward, scan_rules):
                if keras_2 is not None and version != pin.version:  # tf.keras is Keras 2 in this code base
                    finding = finding._replace(answer=f"{finding.answer} (tf.keras is Keras 2 here: {keras_2.why}; answered "
                                                      f"as in TensorFlow {version}, the newest release whose tf.keras is Keras 2)")
                if on_tf:
                    if frameworks.get(finding.record) == "keras":
                        continue  # answered at the Keras pin by the call's own lookup
                    finding = _on_tensorflow(finding, call.op, backend)
                if dead_why and not finding.note:
                    finding = finding._replace(note=dead_why)
                if path in undifferentiated and not finding.note and passes.get(finding.record) == "backward":
                    finding = finding._replace(note=undifferentiated[path])
                if path in cpu_why and not finding.note and framework in placement.DEFAULT_CPU \
                        and idx["sources"].get(finding.record, {}).get("device") == "gpu":
                    finding = finding._replace(note=cpu_why[path])
                never_called = idle.get((path, call.line, call.col))
                if never_called is not None and not finding.note:
                    finding = finding._replace(note=never_called)
                if finding.record == loaded.RECORD and not finding.note and (why := overwritten.get((path, call.line, call.col))):
                    finding = finding._replace(note=why)
                if finding.record == convfree.RECORD and not finding.note and path in nothing_to_bench:
                    finding = finding._replace(note=convfree.WHY)
                default = unused_defaults.get((path, call.line, call.col))
                if default is not None and not finding.note:
                    finding = finding._replace(note=default)
                if path in hidden_why and not finding.note and idx["sources"].get(finding.record, {}).get("device") == "gpu":
                    finding = finding._replace(note=hidden_why[path])
                if path in off_gpu and not finding.note and idx["sources"].get(finding.record, {}).get("device") == "gpu" \
                        and (why := placement.off_gpu_why(off_gpu, path, call.line, frameworks.get(finding.record))):
                    finding = finding._replace(note=why)
                if call.op == "torch.compile" and finding.record in at_ops:
                    continue  # reported at the compiled calls of the record's ops, not at torch.compile
                if _silenced(silenced, call, finding.record):
                    suppressed += 1
                    continue
                key = (path, finding.cell, finding.line, finding.col, finding.record)
                old = found.get(key)
                if old is None or lookup.LEVELS[finding.level] > lookup.LEVELS[old.level]:
                    found[key] = finding
    every = sorted(found.values(), key=lambda f: (f.path, f.cell or 0, f.line, f.col, f.record))
    ordered = tuple(f for f in every if not f.note)
    summaries = tuple(RunSwitches(r.entry, r.why, a) for r, a in zip(runs, per_run))
    return Report(len(files), ordered, suppressed, tuple(errors), chosen, applied,
                  tuple(recipe.recipes(list(ordered), idx["solutions"], idx["order"])), device, summaries,
                  tuple(f for f in every if f.note), len(unverified))


def _answered_as(calls: list[resolve.Call], framework_of: dict[str, str], names: dict,
                 backend: kerasbackend.Backend) -> list[tuple[resolve.Call, str, bool]]:
    """(call, framework, on TensorFlow) for each lookup the calls need: most calls once, as resolved; a standalone
    Keras call `keras.X` whose `tf.keras.X` has TensorFlow records also as `tf.keras.X` when Keras may run on
    TensorFlow (kb/scan/kerasbackend.py), and as `keras.X` only if Keras has records of its own for it."""
    out = []
    for call in calls:
        framework = framework_of[call.op]
        if framework != "keras" or "tf." + call.op not in names.get("tensorflow", ()):
            out.append((call, framework, False))
            continue
        if call.op in names.get("keras", ()):
            out.append((call, framework, False))
        if backend.tensorflow:
            out.append((call._replace(op="tf." + call.op), "tensorflow", True))
    return out


def _on_tensorflow(finding: lookup.Finding, op: str, backend: kerasbackend.Backend) -> lookup.Finding:
    """A TensorFlow record's finding on a standalone Keras call, named as the call is written."""
    keras_op = op[3:]
    if backend.certain:
        said = f"Keras 3 runs {keras_op} on TensorFlow, its default backend" + (f" ({backend.why})" if backend.why else "")
        return finding._replace(op=keras_op, answer=f"{finding.answer} ({said}: it is {op})")
    depends = f"Keras runs on TensorFlow ({backend.why})"
    return finding._replace(op=keras_op, certain=False, depends_on=tuple(sorted({*finding.depends_on, depends})),
                            answer=f"{finding.answer} (if {depends}: {keras_op} is then {op})")


def compiled_op_records(records: dict) -> frozenset[str]:
    """Records that list `torch.compile` among their ops but whose every `calls:` entry names other ops
    compiled by Inductor (`torch.inductor-scan`: cumsum under torch.compile). A `torch.compile(...)` call
    is not where such a kernel runs: the scan reports the compiled calls of those ops, which it marks
    compiled; the compile call alone says nothing about which ops the model uses."""
    out = set()
    for rid, src in records.items():
        entries = src.get("calls") or ()
        if "torch.compile" not in (src.get("ops") or ()) or not entries:
            continue
        if all(e[0] and "torch.compile" not in e[0] and "compiled" in dict(e[1]) for e in entries):
            out.add(rid)
    return frozenset(out)


def _quiet_elsewhere(modules: dict[str, resolve.Module]) -> dict[str, list[tuple[int, int]]]:
    """Path -> (first, last line) of its functions that every use in its file runs where no gradient is
    recorded (resolve.Module.quiet) and that no other file imports or calls by name."""
    wanted = {name for m in modules.values() for name, _, _, _ in m.quiet}
    if not wanted:
        return {}
    used: dict[str, set[str]] = {}
    for path, module in modules.items():
        layout = module.layout
        names = {b[3] for b in layout.bindings if b[3] is not None and b[3] in wanted}
        for called in (*layout.top, *layout.in_main, *(n for _, ns in layout.functions for n in ns)):
            tail = called.rpartition(".")[2]
            if tail in wanted:
                names.add(tail)
        for name in names:
            used.setdefault(name, set()).add(path)
    out: dict[str, list[tuple[int, int]]] = {}
    for path, module in modules.items():
        for name, first, last, _ in module.quiet:
            if not used.get(name, set()) - {path}:
                out.setdefault(path, []).append((first, last))
    return out

