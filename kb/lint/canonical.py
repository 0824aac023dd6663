"""KB009: files are in canonical form (run `kb fix`)."""

from __future__ import annotations

from pathlib import Path

from kb import canonical as canon
from kb.catalog import LINKS_FILE, SOLUTIONS_FILE, Catalog

CODE = "KB009"
TITLE = "format: each file equals its canonical form (`kb fix` rewrites it)"


def expected_texts(catalog: Catalog) -> dict[Path, str]:
    """Canonical text of every file that loaded cleanly; `kb fix` writes exactly these."""
    root = catalog.root
    out: dict[Path, str] = {}
    for path, record in catalog.sources.items():
        out[path] = canon.source_text(record, path, root)
    for name, registry in catalog.registries.items():
        path = catalog.registry_paths[name]
        out[path] = canon.registry_text(registry, path, root)
    bad = {Path(f.path) for f in catalog.findings if f.code in ("KB001", "KB002")}
    for name, items, render in ((SOLUTIONS_FILE, catalog.solutions, canon.solutions_text), (LINKS_FILE, catalog.links, canon.links_text)):
        path = root / name
        if path in catalog.documents and Path(catalog.rel(path)) not in bad:
            out[path] = render(items, path, root)
    return out


def check(catalog: Catalog) -> None:
    for path, text in expected_texts(catalog).items():
        doc = catalog.documents[path]
        if "\r" in doc.text:  # splitlines() would call the lines equal
            catalog.report(path, 1, CODE, "not in canonical form: lines end with CR (carriage return) alone",
                           "run `kb fix` to rewrite it with LF line endings")
        elif doc.text != text:
            line = _first_difference(doc.text, text)
            catalog.report(path, line, CODE, "not in canonical form", "run `kb fix` to rewrite it (order of fields, quoting, indentation)")


def _first_difference(actual: str, wanted: str) -> int:
    a, w = actual.splitlines(), wanted.splitlines()
    for number, (x, y) in enumerate(zip(a, w), start=1):
        if x != y:
            return number
    return min(len(a), len(w)) + 1
