"""The package with no extras, as `pip install -e .` leaves it, runs every command's `--help`.

The test suite's own environment has every extra (NumPy, mkdocs, the frameworks), so an import
of an undeclared module anywhere on the command line's path passes every other test and fails
for a newcomer (issue 43: `kb --help` ended in `No module named 'numpy'`). Two checks:

- `test_every_help_runs_with_the_core_dependencies_alone`: a fresh virtual environment
  (`python -m venv`, no system site-packages) holding only the distributions that the
  `[project] dependencies` of pyproject.toml pull in, at the versions installed here (the test
  lock's pins), linked from this environment so that no network is needed, plus the project as
  an editable install leaves it (a `.pth` naming the project root, and the `kb` script from
  `[project.scripts]`). It runs `kb --help`, every command's and sub-command's `--help`
  (discovered from the parser) and `kb verify --dry-run`.
- `test_module_level_imports_are_declared`: every third-party module imported at module level
  anywhere under kb/ is a declared dependency; a module from an extra is imported inside a
  function, in a file that names the extra to install; a framework (torch, TensorFlow, ...) is
  imported only by its adapter modules, which no other module imports at module level.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import functools
import importlib.metadata as md
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _closure(requirements: list[str]) -> set[str]:
    """Canonical names of the distributions `requirements` install, with their own dependencies
    (markers read for this interpreter, no extras)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        todo.extend(Requirement(r) for r in (md.distribution(name).requires or []))
    return seen


def _link_distribution(name: str, site: Path) -> None:
    """Put one installed distribution into `site` as pip would have: its top-level packages,
    modules and .dist-info, linked (not copied) from this environment."""
    dist = md.distribution(name)
    base = Path(dist.locate_file(""))
    tops = {Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")}
    for top in tops:
        if (base / top).exists() and not (site / top).exists():
            (site / top).symlink_to(base / top)


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of the parser: ("status",), ("probe", "run"), ..."""
    out: list[tuple[str, ...]] = []
    for action in parser._actions:  # argparse keeps sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((*prefix, name))
                out.extend(_commands(sub, (*prefix, name)))
    return out


def test_every_help_runs_with_the_core_dependencies_alone(tmp_path: Path) -> None:
    from kb.cli import parser

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for name in sorted(_closure(PYPROJECT["dependencies"])):
        _link_distribution(name, site)
    (site / "_editable_impl_kb_determinism.pth").write_text(f"{ROOT}\n", encoding="utf-8")
    for script, target in PYPROJECT["scripts"].items():
        module, _, func = target.partition(":")
        path = venv / "bin" / script
        path.write_text(f"#!{python}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n", encoding="utf-8")
        path.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def kb(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "kb"), *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)

    # The environment is what it claims to be: no extra came along.
    for extra_module in ("numpy", "mkdocs", "pytest"):
        probe = subprocess.run([str(python), "-c", f"import {extra_module}"], env=env, capture_output=True, text=True)
        assert probe.returncode != 0, f"{extra_module} is importable in the fresh environment: the test proves nothing"

    commands = _commands(parser())
    assert {c[0] for c in commands} >= {"status", "verify", "scan", "probe", "site"}, commands
    runs = [("--help",), *((*c, "--help") for c in commands), ("verify", "--dry-run")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        results = list(pool.map(lambda argv: (argv, kb(*argv)), runs))
    failures = [f"kb {' '.join(argv)} -> {done.returncode}: {done.stderr.strip()[-400:]}"
                for argv, done in results if done.returncode != 0 or "Traceback" in done.stderr]
    assert not failures, "\n".join(failures)


# --- the fast companion: imports read from the source -------------------------------------

ADAPTERS = {
    # module: why it may import a framework at module level
    "kb/probe/_torch.py": "the PyTorch probe adapter: loaded by kb.probe only once the script imported torch",
    "kb/probe/_torch_calls.py": "imported by the PyTorch adapter only",
    "kb/probe/_torch_device.py": "imported by the PyTorch adapter only",
    "kb/probe/_torch_fused.py": "imported by the PyTorch adapter only, on CUDA with Triton",
    "kb/probe/_tf.py": "the TensorFlow probe adapter: loaded once the script imported tensorflow",
    "kb/probe/_jax.py": "the JAX probe adapter: loaded once the script imported jax",
    "kb/sweep/tf_worker.py": "a child process of the TensorFlow sweep (python -m), never imported by the CLI",
    "kb/sweep/keras_worker.py": "a child process of the Keras sweep (python -m), never imported by the CLI",
    "kb/sweep/tf_specials.py": "the TensorFlow sweep's special cases, imported by its worker (a child process) only",
    "kb/check/inventory_torch.py": "kb check's PyTorch call inventory: loaded inside the checked program once it imported torch",
    "kb/probe/calls.py": "the probe's PyTorch call facts, imported by kb check's PyTorch inventory only",
}
FRAMEWORK_VALUES = {
    # (file, module): why a function there may import a module no extra declares
    ("kb/probe/recorder.py", "numpy"): "reads an array a framework handed to the probe (the framework brought NumPy)",
    ("kb/probe/fingerprint.py", "numpy"): "the reference fingerprint over a NumPy array, for the tests and adapters",
    ("kb/scan/cells.py", "IPython"): "IPython's own cell transformer when installed; a fallback without it",
    ("kb/check/inside.py", "torch"): "kb check's hooks, installed inside the checked program once it imported torch",
    ("kb/check/switches.py", "torch"): "a DataLoader worker's seeding, inside a program that runs PyTorch",
    ("kb/check/switches.py", "numpy"): "seeds NumPy in the checked program where it is installed; skipped without it",
}


def _first_party() -> set[str]:
    return {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()} | {"kb"}


def _imports(path: Path):
    """(top-level module, line, at_module_level) of every absolute import; imports under
    `if TYPE_CHECKING:` are skipped (they never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def walk(nodes, module_level: bool):
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                yield from walk(node.orelse, module_level)
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name.split(".")[0], node.lineno, module_level, alias.name
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield node.module.split(".")[0], node.lineno, module_level, node.module
            for _, value in ast.iter_fields(node):
                if isinstance(value, list) and value and isinstance(value[0], ast.AST):
                    inner = module_level and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                    yield from walk(value, inner)

    yield from walk(tree.body, True)


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return md.packages_distributions()  # reads every installed distribution: once


def _distribution_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in _distributions().get(module, [])}


def test_module_level_imports_are_declared() -> None:
    core = _closure(PYPROJECT["dependencies"])
    declared = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["dependencies"]}
    extras = {
        canonicalize_name(Requirement(r).name): extra
        for extra, reqs in PYPROJECT["optional-dependencies"].items() if extra != "test" for r in reqs
    }
    local = _first_party()
    std = set(sys.stdlib_module_names) | {"__future__"}
    problems: list[str] = []
    used_exceptions: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "kb").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        found = list(_imports(path))
        # the message naming the extra may be a constant of a kb module this one imports
        text = path.read_text(encoding="utf-8") + "".join(
            (ROOT / (full.replace(".", "/") + ".py")).read_text(encoding="utf-8")
            for top, _line, _level, full in found if top == "kb" and (ROOT / (full.replace(".", "/") + ".py")).is_file())
        for top, line, module_level, full in found:
            if full.startswith("kb.") and module_level and rel not in ADAPTERS:
                target = full.replace(".", "/") + ".py"
                if target in ADAPTERS:
                    problems.append(f"{rel}:{line}: imports the framework adapter {full} at module level")
            if top in std or top in local:
                continue
            dists = _distribution_of(top)
            if dists & declared:
                continue
            if dists & core:
                problems.append(f"{rel}:{line}: imports {top}, which only comes with another dependency: declare it")
                continue
            if rel in ADAPTERS:
                continue
            if (rel, top) in FRAMEWORK_VALUES:
                used_exceptions.add((rel, top))
                if module_level:
                    problems.append(f"{rel}:{line}: imports {top} at module level")
                continue
            extra = next((extras[d] for d in dists if d in extras), None)
            if extra is None:
                problems.append(f"{rel}:{line}: imports {top}, which no dependency or extra declares")
            elif module_level:
                problems.append(f"{rel}:{line}: imports {top} (extra '{extra}') at module level: import it when needed")
            elif f"kb-determinism[{extra}]" not in text:
                problems.append(f"{rel}:{line}: imports {top} without a message naming pip install 'kb-determinism[{extra}]'")
    assert not problems, "\n".join(problems)
    assert used_exceptions == set(FRAMEWORK_VALUES), f"stale exceptions: {set(FRAMEWORK_VALUES) - used_exceptions}"
