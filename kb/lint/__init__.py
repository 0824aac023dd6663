"""Coded lint checks. Each check lives in its own module with a CODE, a TITLE and `check()`.

To add a lint check:
1. Write kb/lint/<name>.py with CODE (the next free KBnnn), TITLE and `check(catalog)`, which
   calls `catalog.report(path, line, CODE, message, hint)` per problem (kb/lint/causes.py is
   a small one to copy).
2. Import it below and add it to CHECKS; `python -m kb build` lists it in docs/lint.md.
3. Add a file under tests/fixtures/malformed/ and its expected (file, code, line) to EXPECTED
   in tests/test_lint_fixtures.py, then run `pytest tests/test_lint_fixtures.py`.

KB001 (YAML), KB002 (schema) and KB012 (bounds on untrusted input, kb/yamlio.py) are
reported while loading (kb/catalog.py); the modules
listed in CHECKS run on what loaded. `run()` returns every finding of a run, sorted by
file and line, so one `kb validate` shows all problems together.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from collections.abc import Callable, Iterator

from kb.catalog import Catalog, load
from kb.findings import Finding
from kb.yamlio import remembering
from kb.lint import (
    calls, canonical, cases, causes, comments, ids, links, ops, paths, ranges, references, registry, runs, scanrules,
    solutions, spellings, static_ranges, static_unclaimed, sweeps, switch, verifiers,
)

CHECKS = (ids, ranges, registry, solutions, links, references, canonical, comments, ops, causes, verifiers, runs, calls,
          paths, static_ranges, static_unclaimed, switch, sweeps, spellings, scanrules, cases)

WARNINGS = frozenset({runs.CODE, sweeps.CODE})
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

    For `kb site`, which builds from the catalog while the checks run: where the OS forks,
    the checks run in a child process on the catalog as loaded (kb/aside.py), so a second
    core checks while the first renders; `wait()` returns what `run(root)` would. The block
    must act on nothing it built until `wait()` says the data is clean. When the catalog did
    not load cleanly, the checks run first, here, as in `run`. The whole block reads files
    through the parse memo (kb/yamlio.py), saved when it ends.
    """
    from kb.aside import Aside

    with remembering(root):
        catalog = load(root)
        if errors(catalog.findings):
            found = _checked(catalog)
            yield catalog, lambda: found
            return
        # The run and static evidence files are read here, once: the caller's build needs them
        # too, and the child inherits them (cached on the catalog) instead of reading them again.
        from kb.verify.runfile import runs_of
        from kb.verify.static.merge import static_of

        runs_of(catalog)
        static_of(catalog)
        checks = Aside(lambda: _checked(catalog), again=lambda: _checked(load(root)))
        try:
            yield catalog, checks.result
        finally:
            checks.cancel()


def _checked(catalog: Catalog) -> list[Finding]:
    for module in CHECKS:
        module.check(catalog)
    return sorted(set(catalog.findings))


def errors(findings: list[Finding]) -> list[Finding]:
    """The findings that fail validation (warnings such as KB015 excluded)."""
    return [f for f in findings if f.code not in WARNINGS]
