"""Every file `kb build` writes, rendered from the compiled index: kb/_index.py, docs/lint.md,
schema/*.json and the README's status section; `kb build --check` compares against these.

Above the compiler (kb/compile.py) so that it can use the templates and the site's model
without the compiler reaching up into them.
"""

from __future__ import annotations

import json
import pprint
from pathlib import Path
from typing import Any

from kb import schema
from kb.catalog import Catalog
from kb.compile import build_index
from kb.render import render

INDEX_FILE = "kb/_index.py"
SCHEMA_FILES = {
    "source.schema.json": schema.SourceRecord,
    "versions.schema.json": schema.VersionRegistry,
}
LIST_SCHEMA_FILES = {"solutions.schema.json": schema.Solution, "links.schema.json": schema.Link}


def index_text(index: dict[str, Any]) -> str:
    return render("index.py.j2", body=pprint.pformat(index, width=110, sort_dicts=False))


def schema_texts() -> dict[str, str]:
    from pydantic import TypeAdapter

    out = {}
    for name, model in SCHEMA_FILES.items():
        out[name] = json.dumps(model.model_json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"
    for name, model in LIST_SCHEMA_FILES.items():
        out[name] = json.dumps(TypeAdapter(list[model]).json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"
    return out


def lint_doc_text() -> str:
    """docs/lint.md: the table of check codes, from the check modules themselves."""
    from kb import lint

    codes = sorted(lint.CODES.items())
    modules = [(m.CODE, m.__name__.replace(".", "/") + ".py") for m in lint.CHECKS]
    return render("lint.md.j2", codes=codes, modules=modules)


def generated_files(catalog: Catalog) -> dict[Path, str]:
    """Every file `kb build` writes, with its expected text; `--check` compares these."""
    root = catalog.root
    index = build_index(catalog)
    files = {root / INDEX_FILE: index_text(index)}
    if (root / "docs").is_dir():
        files[root / "docs" / "lint.md"] = lint_doc_text()
    for name, text in schema_texts().items():
        files[root / "schema" / name] = text
    readme = root / "README.md"
    if readme.is_file():
        from kb.site.readme import readme_text

        files[readme] = readme_text(readme.read_text(encoding="utf-8"), catalog, index)
    return files
