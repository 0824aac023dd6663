"""The frozen check corpus (benchmarks/check_frozen/): every program compiles, has the
command line run_corpus.py gives it, and the program list names exactly the files there, so
a program added or renamed after the freeze cannot silently drop out of the measurement."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
FROZEN = ROOT / "benchmarks" / "check_frozen"


def _run_corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_run_corpus_under_test", ROOT / "benchmarks" / "check_corpus" / "run_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_program_list_names_exactly_the_files_of_the_folder() -> None:
    folder, programs = _run_corpus().corpus("frozen")
    assert folder == FROZEN
    files = {p.name for p in FROZEN.glob("*.py")} - {"programs.py"}
    listed = [file for _, file, _, _ in programs]
    assert len(listed) == len(set(listed)) and set(listed) == files
    assert len(programs) >= 12
    assert all(name + ".py" == file for name, file, _, _ in programs)


def test_each_program_compiles_and_takes_the_runner_arguments() -> None:
    _, programs = _run_corpus().corpus("frozen")
    for _name, file, needs, extra in programs:
        source = (FROZEN / file).read_text(encoding="utf-8")
        tree = ast.parse(source, filename=file)
        compile(tree, file, "exec")
        assert ast.get_docstring(tree), f"{file}: no docstring saying what public shape it imitates"
        options = {a.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and getattr(node.func, "attr", None) == "add_argument" for a in node.args[:1]
                   if isinstance(a, ast.Constant)}
        assert {"--device", "--steps"} <= options, f"{file}: options {options}"
        imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names} | {(node.module or "").split(".")[0] for node in ast.walk(tree)
                                                if isinstance(node, ast.ImportFrom)}
        assert ("jax" in imported) == file.startswith("jax_"), f"{file}: run_corpus passes --device by the jax_ prefix"
        assert needs is None or needs in imported, f"{file}: listed as needing {needs}"
        assert extra == []


def test_the_project_corpus_is_still_the_default() -> None:
    run_corpus = _run_corpus()
    folder, programs = run_corpus.corpus("project")
    assert folder == ROOT / "benchmarks" / "check_corpus" and programs is run_corpus.PROGRAMS
    assert len(programs) == 18 and programs[0][0] == "detector_roi_align"
    frozen_names = {name for name, _, _, _ in run_corpus.corpus("frozen")[1]}
    assert not frozen_names & {name for name, _, _, _ in programs}
