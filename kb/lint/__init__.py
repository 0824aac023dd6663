"""Coded lint checks. Each check lives in its own module with a CODE, a TITLE and `check()`.

KB001 (YAML), KB002 (schema) and KB012 (bounds on untrusted input, kb/yamlio.py) are
reported while loading (kb/catalog.py); the modules
listed in CHECKS run on what loaded. `run()` returns every finding of a run, sorted by
file and line, so one `kb validate` shows all problems together.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Callable, Iterator

from kb.catalog import Catalog, load
from kb.findings import Finding
from kb.yamlio import remembering
from kb.lint import (
    calls, canonical, causes, comments, ids, links, ops, paths, ranges, references, registry, runs, solutions,
    static_ranges, static_unclaimed, verifiers,
)

CHECKS = (ids, ranges, registry, solutions, links, references, canonical, comments, ops, causes, verifiers, runs, calls,
          paths, static_ranges, static_unclaimed)

WARNINGS = frozenset({runs.CODE})
"""Codes printed but not failing `kb validate`/`kb build` (unless `kb validate --strict`)."""

CODES = {
    "KB001": "YAML: the file parses as plain, safe YAML without duplicate keys",
    "KB002": "schema: fields, types and values match kb/schema.py",
    "KB012": "bounds: no YAML anchors/aliases/merges; size, nesting, node count and value length within "
    "the reader's bounds (docs/records.md); no symlink out of data/",
    **{module.CODE: module.TITLE for module in CHECKS},
}


def run(root: Path) -> tuple[Catalog, list[Finding]]:
    with remembering(root):  # files parsed by an earlier run with the same text are not parsed again
        catalog = load(root)
        return catalog, _checked(catalog)


@contextlib.contextmanager
def checking(root: Path) -> Iterator[tuple[Catalog, Callable[[], list[Finding]]]]:
    """Load data/ and run the checks beside the block: yields (catalog, wait for the findings).

    For `kb site`, which builds from the catalog while the checks run. Where the OS forks
    (Linux), the checks run in a child process on the catalog as loaded, so a second core
    checks while the first renders; `wait()` returns what `run(root)` would. The block must
    act on nothing it built until `wait()` says the data is clean. Elsewhere, or when the
    catalog did not load cleanly, the checks run first, here, as in `run`. The whole block
    reads files through the parse memo (kb/yamlio.py), saved when it ends.
    """
    import os
    import pickle

    with remembering(root):
        catalog = load(root)
        if not hasattr(os, "fork") or not sys.platform.startswith("linux") or errors(catalog.findings):
            found = _checked(catalog)
            yield catalog, lambda: found
            return
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: check, send the findings, leave without running the parent's exit code
            status = 1
            try:
                os.close(read_end)
                with os.fdopen(write_end, "wb") as out:
                    pickle.dump(_checked(catalog), out)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        result: list[list[Finding]] = []

        def wait() -> list[Finding]:
            if not result:
                with os.fdopen(read_end, "rb") as incoming:
                    data = incoming.read()
                _, status = os.waitpid(pid, 0)
                try:
                    found = pickle.loads(data) if status == 0 else None
                except Exception:  # noqa: BLE001 - a damaged answer: check here instead
                    found = None
                # A child that failed (killed, out of memory): the same checks, here.
                result.append(found if isinstance(found, list) else _checked(load(root)))
            return result[0]

        try:
            yield catalog, wait
        finally:
            if not result:  # the block failed before waiting: stop the child, ignore its answer
                import signal

                os.close(read_end)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)


def _checked(catalog: Catalog) -> list[Finding]:
    for module in CHECKS:
        module.check(catalog)
    return sorted(set(catalog.findings))


def errors(findings: list[Finding]) -> list[Finding]:
    """The findings that fail validation (warnings such as KB015 excluded)."""
    return [f for f in findings if f.code not in WARNINGS]
