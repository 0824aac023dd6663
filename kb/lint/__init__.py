"""Coded lint checks. Each check lives in its own module with a CODE, a TITLE and `check()`.

KB001 (YAML), KB002 (schema) and KB012 (bounds on untrusted input, kb/yamlio.py) are
reported while loading (kb/catalog.py); the modules
listed in CHECKS run on what loaded. `run()` returns every finding of a run, sorted by
file and line, so one `kb validate` shows all problems together.
"""

from __future__ import annotations

from pathlib import Path

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
        for module in CHECKS:
            module.check(catalog)
    return catalog, sorted(set(catalog.findings))


def errors(findings: list[Finding]) -> list[Finding]:
    """The findings that fail validation (warnings such as KB015 excluded)."""
    return [f for f in findings if f.code not in WARNINGS]
