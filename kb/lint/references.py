"""KB008: every record says where its facts come from."""

from __future__ import annotations

from kb.catalog import Catalog

CODE = "KB008"
TITLE = "references: every source record cites at least one reference"


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        if not record.references:
            doc = catalog.documents[path]
            catalog.report(path, doc.line_of(("references",)), CODE, f"record {record.id!r} has no references", "cite the release notes, PR, issue or vendor doc the facts come from")
