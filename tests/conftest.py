"""Test-run setup: one shared folder for the expensive inputs (tests/shared.py).

The process that starts the run (pytest itself, or pytest-xdist's controller) makes the
folder and names it in KB_TESTS_SHARED before any worker starts, so every worker inherits
the same one; it removes it when the run ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import shared


def pytest_configure(config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(shared.ENV):
        return  # a worker (the controller made the folder), or a caller that chose one
    os.environ[shared.ENV] = tempfile.mkdtemp(prefix="kb-tests-")
    config._kb_shared_made = os.environ[shared.ENV]


def pytest_unconfigure(config) -> None:
    made = getattr(config, "_kb_shared_made", None)
    if made:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(shared.ENV, None)
