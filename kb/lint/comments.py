"""KB010: no YAML comments besides the schema header, since `kb fix` cannot keep them."""

from __future__ import annotations

from pathlib import Path

from kb import yamlio
from kb.catalog import Catalog
from kb.known import Known, fingerprint
from kb.yamlio import has_comments

CODE = "KB010"
TITLE = "comments: no comments but the yaml-language-server header (facts belong in `notes:`)"


def check(catalog: Catalog) -> None:
    # Scanning every file's tokens for comments is a pure function of its text and the scanner
    # (kb/yamlio.py): a text that had none last time is not scanned again (kb/known.py).
    import yaml

    known = Known(catalog.root, "comments", fingerprint(Path(yamlio.__file__), yaml.__version__))
    for path, doc in catalog.documents.items():
        key = known.key("", doc.text)
        if known.passed(key):
            continue
        lines = has_comments(doc.text)
        for line in lines:
            catalog.report(path, line, CODE, "a comment would be lost by `kb fix`", "move the text into a `notes:` field")
        if not lines:
            known.add(key)
    known.save()
