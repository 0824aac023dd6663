"""KB007: every issue, PR or commit a record cites is recorded in data/links.yaml."""

from __future__ import annotations

from kb import schema
from kb.catalog import Catalog
from kb.links.resolve import resolve

CODE = "KB007"
TITLE = "links: issue/PR/commit references resolve to an entry of data/links.yaml"


def _refs(record: schema.SourceRecord):
    yield ("references",), record.references
    for index, dispute in enumerate(record.disputes):
        yield ("disputes", index, "references"), dispute.references


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        for loc, refs in _refs(record):
            for index, ref in enumerate(refs):
                if isinstance(ref, (schema.IssueRef, schema.CommitRef)) and resolve(ref, catalog.links) is None:
                    what = f"{ref.repo}#{ref.number}" if isinstance(ref, schema.IssueRef) else f"{ref.repo}@{ref.sha}"
                    catalog.report(path, doc.line_of(loc + (index,)), CODE, f"{ref.kind} {what} is not in data/links.yaml", "add it there with its title, dates and state, checked against GitHub")
