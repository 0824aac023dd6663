"""Expensive test inputs made once per test run and shared by every pytest-xdist worker.

`once(key, make)` returns a folder that `make(folder)` filled: the first process that asks
makes it while holding a lock on the key; the others wait for it and then read the same
files. The folders live under one temporary directory per run (KB_TESTS_SHARED, set by
tests/conftest.py in the process that starts the run, inherited by the workers, removed at
the end). Only what a test treats as read-only may be shared: a built site, a finished
training log, a warmed lint cache.

A `make` that raises leaves no folder behind, so the next test that asks tries again (and
fails with the same error where the error is real).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

ENV = "KB_TESTS_SHARED"
_DONE = ".made"


def base() -> Path:
    """This run's shared folder (made on first use when no conftest set one, e.g. a script)."""
    path = os.environ.get(ENV)
    if not path:
        path = os.environ[ENV] = tempfile.mkdtemp(prefix="kb-tests-")
    return Path(path)


def once(key: str, make: Callable[[Path], object]) -> Path:
    """The folder for `key`, filled by `make(folder)` exactly once per run."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", key):
        raise ValueError(f"shared key {key!r}: letters, digits, '.', '_' and '-' only")
    root = base()
    folder = root / key
    if (folder / _DONE).is_file():
        return folder
    with open(root / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / _DONE).is_file():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                try:
                    make(folder)
                except BaseException:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
                (folder / _DONE).touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def repo_lint() -> tuple:
    """(catalog, findings) of this repository's own data, linted once per process. Read-only:
    a test that changes data works on a copy (site_build.copy_project)."""
    from kb.lint import run

    return run(ROOT)
