"""Whether a call runs at all, and where: files only CPU programs run (a PyTorch program that places nothing
on a GPU, a program that hides the GPU before any framework loads), and random defaults no caller takes.
Split from kb/scan/run.py, which applies the answers to findings."""

from __future__ import annotations

import ast
import os
import re
import sys

from kb.scan import oldsyntax, resolve, scope, sources
from kb.scan.syntax import is_main
from kb.scan.nodes import walk


# Frameworks that keep a tensor on the CPU unless the program places it on a GPU.
DEFAULT_CPU = frozenset({"pytorch", "torchvision"})


def on_cpu(runs: list[scope.Run], reach: dict[str, tuple[int, ...]],
            modules: dict[str, resolve.Module], scripts: set[str] | None = None) -> dict[str, str]:
    """Path -> why it runs on the CPU, for each file that only whole programs run (a notebook, or outside a
    package's folder a `__main__` block or a script whose module level trains) none of whose files may place
    anything on a GPU (kb/scan/survey.py, may_use_gpu): PyTorch then runs every op of it on the CPU, and a
    record of the GPU alone is a note there. A file no such program runs (a library module, a package
    module's `__main__` smoke test, a file named alone with no entry point) keeps the GPU's answer. `scripts`:
    the files no installable package holds (kb/scan/unreached.py); where there are some, a folder with
    `__init__.py` alone makes no package of them (face.evoLVe's `applications/align/face_align.py` is its program)."""
    on_cpu = []
    for r in runs:
        layout = modules[r.entry].layout
        packaged = r.entry not in scripts if scripts else in_package(r.entry)
        whole = r.entry.endswith(".ipynb") or (not packaged and (
            layout.main or (r.why in (scope.SCRIPT, "named on the command line") and layout.top_trains)))
        on_cpu.append(whole and not any(modules[p].layout.gpu for p in r.files))
    return _only_in(runs, reach, on_cpu, "never places anything on a GPU (no .cuda(), .to(device), device=, "
                    "DataParallel or trainer in it or the files it imports): PyTorch runs it on the CPU")


def _only_in(runs: list[scope.Run], reach: dict[str, tuple[int, ...]], flagged: list[bool], what: str) -> dict[str, str]:
    """Path -> why, for each file that only flagged programs run: `what` says what those programs do."""
    out = {}
    for path, ids in reach.items():
        if ids and all(flagged[k] for k in ids):
            more = f" (and {len(ids) - 1} more programs)" if len(ids) > 1 else ""
            out[path] = f"a record of the GPU, but the program that runs this file ({runs[ids[0]].entry}{more}) {what}"
    return out


def defaults_passed(modules: dict[str, resolve.Module], texts: sources.Texts,
                    only: set[str]) -> dict[tuple[str, int, int], str]:
    """(path, line, col) -> why, for each recorded op named as a parameter's default (`noise_fn=tf.random_normal`)
    that never runs: every call of the function (or method) by its name anywhere in the code base passes the
    parameter, by keyword or position, and the name is used nowhere else (passed as a value, by *args or
    **kwargs, in a notebook), so the default is never taken (RULES C2.7)."""
    wanted = {(path, d) for path, module in modules.items() if path in only for d in module.defaults}
    if not wanted:
        return {}
    names = {d[2] for _, d in wanted}
    uses: dict[str, list[ast.AST | None]] = {name: [] for name in names}  # None: a use that may take the default
    for path in modules:
        text = texts.get(path) or ""
        present = [name for name in names if name in text]
        if not present:
            continue
        try:
            tree = oldsyntax.parse(text) if not path.endswith(".ipynb") else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is None:
            for name in present:
                uses[name].append(None)
            continue
        funcs = set()
        for node in walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if callee is not None and callee in uses:
                    uses[callee].append(node)
                    funcs.add(id(func))
            elif isinstance(node, ast.Name) and node.id in uses and id(node) not in funcs:
                uses[node.id].append(None)
            elif isinstance(node, ast.Attribute) and node.attr in uses and id(node) not in funcs:
                uses[node.attr].append(None)
    out = {}
    for path, (line, col, name, param, position) in wanted:
        calls = uses[name]
        if calls and all(isinstance(c, ast.Call) and _passes(c, param, position) for c in calls):
            out[(path, line, col)] = (f"the default of {name}'s parameter {param}, never taken: each of the "
                                      f"{len(calls)} calls of {name} in the code base passes {param}")
    return out


def _passes(call: ast.Call, param: str, index: int) -> bool:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    return any(k.arg == param for k in call.keywords) or 0 <= index < len(call.args)


_HIDDEN = frozenset({"", "-1"})  # CUDA_VISIBLE_DEVICES values that leave the process no GPU
_IMPORT = re.compile(r"(?:import|from)[ \t]+([A-Za-z_][A-Za-z0-9_]*)|from[ \t]+\.")


def _hides_gpu(entry: str, module: resolve.Module) -> bool:
    """The entry sets CUDA_VISIBLE_DEVICES to "" (or "-1") unconditionally at module level before it imports
    anything but the standard library (so before any framework is loaded): its process sees no GPU."""
    sets = [s.line for s in module.settings if s.kind == "env" and s.name == "CUDA_VISIBLE_DEVICES"
            and s.value in _HIDDEN and s.condition is None and s.scope is None and s.col == 1]
    if not sets:
        return False
    try:
        with open(entry, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")[:sets[0] - 1]
    except OSError:
        return False
    for line in lines:
        found = _IMPORT.match(line)
        if found is not None and (found.group(1) is None or found.group(1) not in sys.stdlib_module_names):
            return False  # a framework, or a module of the code base, may be loaded before the GPU is hidden
    return True


def gpu_hidden(runs: list[scope.Run], reach: dict[str, tuple[int, ...]],
                modules: dict[str, resolve.Module]) -> dict[str, str]:
    """Path -> why it runs on the CPU, for each file that only programs hiding the GPU run (gae/train.py:
    `os.environ["CUDA_VISIBLE_DEVICES"] = ""` above `import tensorflow`): any framework then runs every op of
    it on the CPU, and a record of the GPU alone is a note there."""
    hidden = [_hides_gpu(r.entry, modules[r.entry]) for r in runs]
    return _only_in(runs, reach, hidden, "hides the GPU (CUDA_VISIBLE_DEVICES set empty before the framework is "
                    "imported): it runs on the CPU")


def in_package(path: str) -> bool:
    return os.path.isfile(os.path.join(os.path.dirname(path) or ".", "__init__.py"))


# Frameworks whose ops a TPU placement or TensorFlow's own device list moves off the GPU.
TENSORFLOW = frozenset({"tensorflow", "keras"})
_TPU_PLACED = re.compile(r"TPUStrategy\s*\(|use_tpu\s*=\s*True")
_GPU_PATH = re.compile(r"gpu|cuda", re.IGNORECASE)


def tf_off_gpu(runs: list[scope.Run], reach: dict[str, tuple[int, ...]], texts: sources.Texts) -> dict[str, str]:
    """Path -> why TensorFlow runs it off the GPU, for each file that only such programs run: a program one of
    whose files places the model on TPU cores explicitly (a `TPUClusterResolver` with a `TPUStrategy(...)` or a
    `TPUEstimator(use_tpu=True)`) and none of whose files names a GPU at all (no GPU path to take), or one whose
    entry hides every GPU from TensorFlow (`tf.config.set_visible_devices([], "GPU")`, unconditionally in its
    module or in one of its functions: TensorFlow raises if the GPUs were already in use, so a program that
    goes on runs its TensorFlow ops on the CPU). Records of the GPU alone do not apply to its TensorFlow ops."""
    tpu: dict[str, bool] = {}
    named_gpu: dict[str, bool] = {}
    on_tpu, hidden = [], []
    for r in runs:
        for path in r.files:
            if path not in tpu:
                text = texts.get(path)
                tpu[path] = text is not None and "TPUClusterResolver" in text and _TPU_PLACED.search(text) is not None
                named_gpu[path] = text is None or _GPU_PATH.search(text) is not None
        on_tpu.append(any(tpu[p] for p in r.files) and not any(named_gpu[p] for p in r.files))
        hidden.append(_hides_gpu_from_tf(texts.get(r.entry)))
    out = _only_in(runs, reach, hidden, "hides every GPU from TensorFlow (tf.config.set_visible_devices([], \"GPU\")): "
                   "TensorFlow runs it on the CPU")
    for path, why in _only_in(runs, reach, on_tpu, "places its model on TPU cores (a TPUClusterResolver with a "
                              "TPUStrategy or TPUEstimator(use_tpu=True)) and names no GPU: TensorFlow runs it on "
                              "the TPU").items():
        out.setdefault(path, why)
    return out


JAX = frozenset({"jax"})
_JAX_PLATFORM = re.compile(r"setup_tpu|jax_platform_name|jax_platforms|JAX_PLATFORMS")
_JAX_KEYS = frozenset({"jax_platform_name", "jax_platforms", "JAX_PLATFORMS"})


def off_gpu(runs: list[scope.Run], reach: dict[str, tuple[int, ...]], texts: sources.Texts,
            used: set[str], modules: dict | None = None) -> dict[str, tuple[frozenset[str], int, str]]:
    """Path -> (frameworks, first line, why): the files whose calls of those frameworks, from that line on, run off
    the GPU: TensorFlow's as tf_off_gpu says (every line), JAX's after a module-level statement of the file (a
    notebook's cell included) that moves JAX to a TPU or the CPU (jax_platform)."""
    out = {path: (TENSORFLOW, 0, why) for path, why in (tf_off_gpu(runs, reach, texts) if used & TENSORFLOW else {}).items()}
    for path in (p for p in reach if p not in out) if "jax" in used else ():
        found = jax_platform(texts.get(path))
        if found is not None:
            out[path] = (JAX, found[0], found[1])
    ipex = {path for path, module in (modules or {}).items()
            if any(name.split(".")[0] == "intel_extension_for_pytorch" for name, _, _ in module.layout.imports)}
    for path in (p for p in reach if p not in out) if "pytorch" in used and ipex else ():
        why = intel_xpu(path, ipex)
        if why is not None:
            out[path] = (PYTORCH, 0, why)
    return out


PYTORCH = frozenset({"pytorch"})


def intel_xpu(path: str, ipex: set[str]) -> str | None:
    """Why the module is Intel XPU code, where it or its package's `__init__.py` imports Intel's extension for
    PyTorch (`import intel_extension_for_pytorch as ipex`; `ipex`: the modules that do): kohya-ss/sd-scripts'
    `library/ipex` package (forty-fifth corpus, 36 false alarms), which swaps PyTorch's functions for XPU workarounds
    and is installed only when `torch.xpu.is_available()`. Its calls run on an Intel GPU or the CPU, never on an
    NVIDIA GPU."""
    if path in ipex:
        return "this module imports Intel's extension for PyTorch: it is Intel XPU code, which runs on no NVIDIA GPU"
    if os.path.join(os.path.dirname(path), "__init__.py") in ipex:
        return "its package imports Intel's extension for PyTorch: it is Intel XPU code, which runs on no NVIDIA GPU"
    return None


def off_gpu_why(off: dict[str, tuple[frozenset[str], int, str]], path: str, line: int, framework: str | None) -> str | None:
    frameworks, first, why = off.get(path, (frozenset(), 0, ""))
    return why if framework in frameworks and line > first else None


def jax_platform(text: str | None) -> tuple[int, str] | None:
    """(line, why) of the first module-level statement (in a notebook, of any cell) that sends JAX off the GPU:
    `jax.tools.colab_tpu.setup_tpu()` (a Colab's TPU), `jax.config.update("jax_platform_name" or "jax_platforms",
    "cpu" or "tpu")`, or `os.environ["JAX_PLATFORMS"] = "cpu"` (or "tpu") before JAX is imported. JAX then compiles every later
    computation of the program for that platform, where no GPU kernel, autotuner or collective runs."""
    if not text or _JAX_PLATFORM.search(text) is None:
        return None
    try:
        tree = oldsyntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    main = next((s for s in tree.body if isinstance(s, ast.If) and is_main(s.test)), None)
    if main is not None:  # a switch the `__main__` block makes before it calls anything: every function runs after it
        found = _jax_switch(main.body, True)
        if found is not None:
            quiet = all(_inert(s) for s in tree.body if s is not main)
            return (0 if quiet else found[0]), found[1]
    return _jax_switch(tree.body, False)


# Modules whose module-level calls compute nothing on a device: command-line flags (absl's `flags.DEFINE_float`,
# argparse's `parser.add_argument`), logging and warnings settings, the OS, NumPy on the host.
_HOST_ROOTS = frozenset({"flags", "absl", "argparse", "parser", "logging", "warnings", "os", "sys", "np", "onp", "numpy",
                         "print", "random"})


def _inert(stmt: ast.stmt) -> bool:
    """A module-level statement that computes nothing on a device: an import, a definition, a docstring, a constant,
    or calls of the host's modules only (`flags.DEFINE_float("lam", 0.5, ...)` of google/jaxopt's examples)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    return value is not None and all(ast.unparse(n.func).split(".")[0] in _HOST_ROOTS
                                     for n in walk(value) if isinstance(n, ast.Call))


def _jax_switch(body: list[ast.stmt], imported: bool) -> tuple[int, str] | None:
    """(line, why) of the first statement of `body` that sends JAX off the GPU (jax_platform)."""
    for stmt in body:
        imported = imported or (isinstance(stmt, (ast.Import, ast.ImportFrom)) and "jax" in ast.unparse(stmt))
        node = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            name = ast.unparse(node.func).rpartition(".")[2]
            if name == "setup_tpu":
                return stmt.lineno, "JAX runs this program on a Colab TPU after its setup_tpu() call, not on a GPU"
            key = node.args[0] if node.args else None
            value = node.args[1] if len(node.args) > 1 else None
            if name == "update" and _platform(key, value):
                return stmt.lineno, f"JAX is set to run on {value.value} (jax.config.update), not on a GPU"  # type: ignore[union-attr]
        if not imported and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript) \
                and "environ" in ast.unparse(stmt.targets[0].value) and _platform(stmt.targets[0].slice, stmt.value):
            return stmt.lineno, f"JAX_PLATFORMS is set to {stmt.value.value} (os.environ), not a GPU"  # type: ignore[attr-defined]
    return None


def _platform(key: ast.AST | None, value: ast.AST | None) -> bool:
    return isinstance(key, ast.Constant) and key.value in _JAX_KEYS and isinstance(value, ast.Constant) \
        and isinstance(value.value, str) and value.value.lower() in ("cpu", "tpu")


def _hides_gpu_from_tf(text: str | None) -> bool:
    """The text calls `*.set_visible_devices([], "GPU")` as a statement of its module, of its `__main__` block or
    of one of its module-level functions (not under a test or in a loop)."""
    if not text or "set_visible_devices" not in text:
        return False
    try:
        tree = oldsyntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                            or (isinstance(n, ast.If) and "__main__" in ast.dump(n.test))]
    for stmt in (s for body in bodies for s in body):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) \
                or call.func.attr != "set_visible_devices":
            continue
        devices = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "devices"), None)
        kind = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "device_type"), None)
        if isinstance(devices, (ast.List, ast.Tuple)) and not devices.elts \
                and isinstance(kind, ast.Constant) and str(kind.value).upper() == "GPU":
            return True
    return False
