"""The example trainings of docs/probe.md, run once per test run and shared (tests/shared.py).

Each example is one real `python -m kb probe run` of an examples/probe script, exactly as
scripts/probe_docs.py runs it for the page (run 1 clean, run 2 carrying the plant where the
example plants one). test_probe_docs.py compares what it printed with the page;
test_probe.py reads the same two logs for the report's details, and compares run 1 with one
more clean run (`clean_run`) where it also checks that unplanted runs are identical. Every
training is a fresh process that imports its framework: sharing them halves the probe
tests' cost.

JAX's persistent compilation cache (a folder of this test run) is on for these trainings:
the second and third JAX processes load the programs the first compiled instead of
compiling about 60 of them again. It changes no result (the cache key covers the program,
the compiler options and XLA's flags), only the time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import shared

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import probe_docs  # noqa: E402

EXAMPLES = probe_docs.EXAMPLES


def _jax_cache() -> dict[str, str]:
    return {"JAX_COMPILATION_CACHE_DIR": str(shared.base() / "jax-cache"),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}


def example(name: str) -> tuple[str, Path]:
    """(the block as `kb probe run` printed it, the folder holding run1 and run2)."""

    def make(folder: Path) -> None:
        saved = dict(os.environ)
        os.environ.update(_jax_cache())
        try:
            text = probe_docs.run_example(name, keep=folder)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        (folder / "block.txt").write_text(text, encoding="utf-8")

    folder = shared.once(f"probe-{name}", make)
    return (folder / "block.txt").read_text(encoding="utf-8"), folder / "kb-probe"


def clean_run(name: str) -> Path:
    """The log of one more run of the example's script as its run 3 (never planted: only run 2 is)."""
    script = ROOT / "examples" / "probe" / EXAMPLES[name][1]

    def make(folder: Path) -> None:
        log = folder / "run3"
        log.mkdir()
        env = {**probe_docs.example_env(name), **_jax_cache(), "KB_PROBE_DIR": str(log), "KB_PROBE_RUN": "3"}
        out = subprocess.run([sys.executable, str(script)], cwd=folder, env=env, capture_output=True, text=True,
                             timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]

    return shared.once(f"probe-{name}-clean", make) / "run3"
