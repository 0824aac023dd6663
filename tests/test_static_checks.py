"""The type checker (mypy) and the linter (ruff check) hold the code, as configured in
pyproject.toml: each runs over the project and fails the suite with its own report.

Both are pinned in requirements/test.lock, so a new release of either cannot fail CI by
itself. Both keep their caches under .cache/ (git-ignored): a run after a small change
rechecks only what the change reaches.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_finds_no_error() -> None:
    done = _run("mypy", "--no-error-summary")
    assert done.returncode == 0, f"mypy (configured in pyproject.toml) reports:\n{done.stdout}{done.stderr}"


def test_ruff_check_finds_nothing() -> None:
    done = _run("ruff", "check", "--output-format", "concise", ".")
    assert done.returncode == 0, f"ruff check (configured in pyproject.toml) reports:\n{done.stdout}{done.stderr}"


def test_the_checks_cover_kb_and_verifiers_and_leave_out_only_the_generated_files() -> None:
    """What the checks skip is said in one place, and only the generated modules are skipped;
    untyped imports are only the frameworks and two optional helpers (IPython for notebooks with
    magics, PyTorch's expecttest on the GPU machine)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert config["mypy"]["files"] == ["kb", "verifiers"]
    assert not config["mypy"].get("ignore_errors")
    for override in config["mypy"].get("overrides", []):
        assert not override.get("ignore_errors"), f"mypy skips errors in {override['module']}"
        if override.get("ignore_missing_imports"):
            assert {m.split(".")[0] for m in override["module"]} <= {
                "torch", "torchvision", "triton", "jax", "jaxlib", "tensorflow", "keras", "IPython", "expecttest"}, override
    assert set(config["ruff"]["extend-exclude"]) == {"kb/_index.py", "kb/_details.py", "kb/_seen.py", "site/build", "tests/fixtures"}


def test_no_hand_written_module_over_600_lines_without_a_stated_reason() -> None:
    """Issue 44: a long module says in its docstring why it is one module ("Why one module")."""
    import ast

    generated = {"kb/_index.py", "kb/_details.py", "kb/_seen.py"}
    long_ones = []
    for path in sorted((ROOT / "kb").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if rel in generated or text.count("\n") <= 600:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Why one module" not in doc:
            long_ones.append(f"{rel}: {text.count(chr(10))} lines")
    assert not long_ones, "split these or say why they are one module:\n" + "\n".join(long_ones)
