"""KB010: no YAML comments besides the schema header, since `kb fix` cannot keep them."""

from __future__ import annotations

from kb.catalog import Catalog
from kb.yamlio import has_comments

CODE = "KB010"
TITLE = "comments: no comments but the yaml-language-server header (facts belong in `notes:`)"


def check(catalog: Catalog) -> None:
    for path, doc in catalog.documents.items():
        for line in has_comments(doc.text):
            catalog.report(path, line, CODE, "a comment would be lost by `kb fix`", "move the text into a `notes:` field")
