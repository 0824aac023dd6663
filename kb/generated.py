"""Every file `kb build` writes, rendered from the compiled index: kb/_index.py, kb/_details.py,
kb/_seen.py, docs/lint.md,
schema/*.json, the README's status section and docs/architecture.md's module map (from
kb/layers.py); `kb build --check` compares against these.

Above the compiler (kb/compile.py) so that it can use the templates and the site's model
without the compiler reaching up into them.
"""

from __future__ import annotations

import json
import pprint
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from kb import schema
from kb.catalog import Catalog
from kb.compile import build_index
from kb.entries import JSON_PACKED, PACKED, JsonPacked, Packed
from kb.render import render

if TYPE_CHECKING:
    from kb.memo import Memo

INDEX_FILE = "kb/_index.py"
DETAILS_FILE = "kb/_details.py"
SEEN_FILE = "kb/_seen.py"
SCHEMA_FILES: dict[str, type[BaseModel]] = {
    "source.schema.json": schema.SourceRecord,
    "versions.schema.json": schema.VersionRegistry,
}
LIST_SCHEMA_FILES: dict[str, type[BaseModel]] = {"solutions.schema.json": schema.Solution, "links.schema.json": schema.Link}


class _Printer(pprint.PrettyPrinter):
    """pprint's layout, with the built-in repr for each value's one-line form.

    For the index's plain data (dict, tuple, list, str, int, float, bool, None; no recursion)
    with sort_dicts=False, pprint's own `_safe_repr` returns exactly `repr()`, only ~10x slower,
    and the layout asks for it at every nesting level.
    """

    _PLAIN = (dict, tuple, list, str, int, float, bool, type(None))

    def format(self, object: Any, context: dict, maxlevels: int, level: int) -> tuple[str, bool, bool]:
        if type(object) in self._PLAIN and not self._sort_dicts:  # type: ignore[attr-defined]  # set by PrettyPrinter
            return repr(object), True, False
        if type(object) is Packed or type(object) is JsonPacked:
            return object.literal(), True, False
        return super().format(object, context, maxlevels, level)


class _Flat(tuple):
    """A tuple pprint writes on one line however long (its own __repr__ has no pprint layout): the
    sweep cases of kb/_details.py's `seen`, thousands of small tuples that a nested layout would
    spread over many indented lines. It loads back as a plain tuple."""

    __slots__ = ()

    def __repr__(self) -> str:
        return tuple.__repr__(self)


def _flat_seen(details: dict[str, Any]) -> dict[str, Any]:
    """The sweep cases (`seen`) one line per op, and each record's runs (`runs`) one JSON text (JsonPacked): the
    file is read only by `kb.query`'s loader, and a nested layout doubled its size (13 MB) for no reader."""
    out = dict(details)
    if "seen" in details:
        out["seen"] = {fw: {op: _Flat(entries) for op, entries in ops.items()} for fw, ops in details["seen"].items()}
    for name in JSON_PACKED:
        if name in details:
            out[name] = JsonPacked.of(details[name])
    return out


def literal(value: Any) -> str:
    """`pprint.pformat(value, width=110, sort_dicts=False)` of plain data, faster."""
    return _Printer(width=110, sort_dicts=False).pformat(value)


def index_texts(index: dict[str, Any], root: Path | None = None) -> dict[str, str]:
    """{file: text} of the index modules: what every query reads (kb/_index.py), the details
    loaded when one needs them (kb/_details.py) and the sweep cases of ops without a record
    (kb/_seen.py: no scan loads them, kb/query/state.py's scan_index). Each table is in one module
    only. Under `root`, the texts of an index laid out before are remembered (.cache/kb/, keyed by
    the index's repr and this code)."""
    from kb.query import split_index, split_seen

    memo: Memo | None = None
    key = b""
    if root is not None:
        from kb.memo import MISS, Memo

        from kb import query, render as rendering

        templates = rendering.TEMPLATES
        import jinja2

        from kb import entries

        # every file whose code shapes the texts: this module, the query package (split_index),
        # entries (PACKED and the Packed literal), the renderer and its templates
        memo = Memo(root, "index", Path(__file__), Path(pprint.__file__), *sorted(Path(query.__file__).parent.glob("*.py")),
                    Path(entries.__file__), Path(rendering.__file__),
                    templates / "index.py.j2", templates / "details.py.j2", templates / "seen.py.j2", jinja2.__version__)
        key = memo.key(repr(index))
        found = memo.get(key)
        if found is not MISS and isinstance(found, dict):
            return found
    core, details = split_index(index)
    core = {name: Packed.of(value) if name in PACKED else value for name, value in core.items()}
    details, seen = split_seen(details)
    texts = {INDEX_FILE: render("index.py.j2", body=literal(core)),
             DETAILS_FILE: render("details.py.j2", body=literal(_flat_seen(details))),
             SEEN_FILE: render("seen.py.j2", body=literal(_flat_seen(seen)))}
    if memo is not None:
        memo.put(key, texts)
        memo.save()
    return texts


def schema_texts() -> dict[str, str]:
    from pydantic import TypeAdapter

    out = {}
    for name, model in SCHEMA_FILES.items():
        out[name] = json.dumps(model.model_json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"
    for name, item in LIST_SCHEMA_FILES.items():
        out[name] = json.dumps(TypeAdapter(list[item]).json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"  # type: ignore[valid-type]
    return out


def lint_doc_text() -> str:
    """docs/lint.md: the table of check codes, from the check modules themselves."""
    from kb import lint

    codes = sorted(lint.CODES.items())
    modules = [(m.CODE, m.__name__.replace(".", "/") + ".py") for m in lint.CHECKS]
    return render("lint.md.j2", codes=codes, modules=modules)


MAP_BEGIN = "<!-- BEGIN GENERATED MODULE MAP (kb build, from kb/layers.py) -->"
MAP_END = "<!-- END GENERATED MODULE MAP -->"


def architecture_text(current: str, root: Path) -> str:
    """docs/architecture.md with its module map (between MAP_BEGIN and MAP_END) made from
    kb/layers.py and the modules' docstrings; a text without the markers is returned as it is."""
    from kb.layers import module_map

    if MAP_BEGIN not in current or MAP_END not in current:
        return current
    head, rest = current.split(MAP_BEGIN, 1)
    _, tail = rest.split(MAP_END, 1)
    note = "<!-- GENERATED by `kb build` from kb/layers.py and each module's docstring: do not edit. -->"
    return f"{head}{MAP_BEGIN}\n{note}\n\n{module_map(root)}\n{MAP_END}{tail}"


def generated_files(catalog: Catalog) -> dict[Path, str]:
    """Every file `kb build` writes, with its expected text; `--check` compares these."""
    root = catalog.root
    index = build_index(catalog)
    files = {root / name: text for name, text in index_texts(index, root).items()}
    if (root / "docs").is_dir():
        files[root / "docs" / "lint.md"] = lint_doc_text()
    architecture = root / "docs" / "architecture.md"
    if architecture.is_file() and (root / "kb").is_dir():
        files[architecture] = architecture_text(architecture.read_text(encoding="utf-8"), root)
    scan_page = root / "docs" / "scan.md"
    if scan_page.is_file():
        from kb.scan.ruledoc import page

        files[scan_page] = page(scan_page.read_text(encoding="utf-8"), index)
    for name, text in schema_texts().items():
        files[root / "schema" / name] = text
    readme = root / "README.md"
    if readme.is_file():
        from kb.site.readme import readme_text

        files[readme] = readme_text(readme.read_text(encoding="utf-8"), catalog, index)
    return files
