"""KB009: files are in canonical form (run `kb fix`)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from collections.abc import Callable

from kb import canonical as canon
from kb import schema, yamlio
from kb.catalog import LINKS_FILE, SOLUTIONS_FILE, Catalog
from kb.known import Known, fingerprint

CODE = "KB009"
TITLE = "format: each file equals its canonical form (`kb fix` rewrites it)"


def _renderers(catalog: Catalog) -> dict[Path, Callable[[], str]]:
    """How to make the canonical text of every file that loaded cleanly (made only when needed)."""
    root = catalog.root
    out: dict[Path, Callable[[], str]] = {}
    for path, record in catalog.sources.items():
        out[path] = partial(canon.source_text, record, path, root)
    for name, registry in catalog.registries.items():
        path = catalog.registry_paths[name]
        out[path] = partial(canon.registry_text, registry, path, root)
    bad = {Path(f.path) for f in catalog.findings if f.code in ("KB001", "KB002")}
    lists: tuple[tuple[str, list, Callable[..., str]], ...] = (
        (SOLUTIONS_FILE, catalog.solutions, canon.solutions_text), (LINKS_FILE, catalog.links, canon.links_text))
    for name, items, render in lists:
        path = root / name
        if path in catalog.documents and Path(catalog.rel(path)) not in bad:
            out[path] = partial(render, items, path, root)
    return out


def expected_texts(catalog: Catalog) -> dict[Path, str]:
    """Canonical text of every file that loaded cleanly; `kb fix` writes exactly these."""
    return {path: render() for path, render in _renderers(catalog).items()}


def _code() -> str:
    """What the canonical form depends on besides the file: this code, the models, the dumper."""
    import pydantic
    import yaml

    files = (Path(__file__), Path(canon.__file__), Path(schema.__file__), Path(yamlio.__file__))
    return fingerprint(*files, yaml.__version__, pydantic.VERSION)


def check(catalog: Catalog) -> None:
    # Dumping every file back to YAML is most of `kb validate`'s time; a file whose text,
    # path and checking code are unchanged since it last passed is not dumped again.
    known = Known(catalog.root, "canonical", _code())
    for path, render in _renderers(catalog).items():
        doc = catalog.documents[path]
        if "\r" in doc.text:  # splitlines() would call the lines equal
            catalog.report(path, 1, CODE, "not in canonical form: lines end with CR (carriage return) alone",
                           "run `kb fix` to rewrite it with LF line endings")
            continue
        key = known.key(catalog.rel(path), doc.text)
        if known.passed(key):
            continue
        text = render()
        if doc.text != text:
            line = _first_difference(doc.text, text)
            catalog.report(path, line, CODE, "not in canonical form", "run `kb fix` to rewrite it (order of fields, quoting, indentation)")
        else:
            known.add(key)
    known.save()


def _first_difference(actual: str, wanted: str) -> int:
    a, w = actual.splitlines(), wanted.splitlines()
    for number, (x, y) in enumerate(zip(a, w), start=1):
        if x != y:
            return number
    return min(len(a), len(w)) + 1
