"""KB019: text in the data names no file outside the repository.

A note that cites `shared/reference/...`, `/home/...` or `../elsewhere` sends a reader to a
file no user can open; the fact must cite its primary source (a release's code or
documentation, an issue, a run file under data/runs/) instead. Paths inside the repository
(data/runs/..., benchmarks/...) and paths inside a framework's source tree (aten/...,
torch/nn/functional.py) are fine; URLs are fine. A bare `name.md` must exist in the repository.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Iterator

from kb.catalog import Catalog

CODE = "KB019"
TITLE = ("paths: notes and references cite public sources, never files outside the repository (a private folder, "
         "a home directory) nor a founding document by an internal name instead of its public title and URL")

# A path token not inside a URL: after start, space or an opening bracket/quote.
OUTSIDE = re.compile(
    r"(?:^|(?<=[\s(\[`'\"]))"
    r"((?:shared|reference|references)/[\w./-]*"  # the project's private reference folders
    r"|/(?:work|home|root|tmp|mnt|Users|var|opt)/[\w./-]*"  # absolute paths on one machine
    r"|~/[\w./-]*"
    r"|\.\./[\w./-]*)"
)


# A bare document name with no folder (`h100-probe.md`), not inside a URL: fine only where the
# repository has it at its root. (A path with folders, `doc/d9m/tensorflow.md`, is usually a file
# of the public repository the text names.)
DOCUMENT = re.compile(r"(?:^|(?<=[\s(\[`'\"]))([\w.-]+\.md)(?![\w/])")


# The project's founding documents by their internal names ("Seed 003", "seed document", the
# seed files' names): a reader cannot open them; the public document each one is (a GTC talk, a
# Stack Overflow thread, NVIDIA's README) is cited by its title and URL instead. Any case.
FOUNDING = re.compile(
    r"\bseeds?\s+(?:00\d\b(?:\s*(?:and|,|&)\s*00\d\b)*|documents?\b)|\b00\d_[0-9a-f]{16}(?:\.txt)?\b",
    re.IGNORECASE,
)


def _strings(value: Any, loc: tuple = ()) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield loc, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, loc + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, loc + (index,))


def check(catalog: Catalog) -> None:
    # A pure function of a file's text and of which bare `name.md` files the repository has: a
    # text that passed last time with no such name in it is not searched again (kb/known.py).
    from pathlib import Path

    from kb.known import Known, fingerprint

    known = Known(catalog.root, "paths", fingerprint(Path(__file__)))
    for path, doc in catalog.documents.items():
        key = known.key("", doc.text)
        if known.passed(key):
            continue
        before = len(catalog.findings)
        named = False
        for loc, text in _strings(doc.data):
            found = [m.group(1) for m in OUTSIDE.finditer(text)]
            documents = [m.group(1) for m in DOCUMENT.finditer(text)]
            named = named or bool(documents)
            found += [name for name in documents
                      if not any(name in f for f in found) and not (catalog.root / name).is_file()]
            where = ".".join(str(part) for part in loc) or "(top level)"
            for token in (m.group(0) for m in FOUNDING.finditer(text)):
                catalog.report(
                    path, doc.line_of(loc), CODE,
                    f"{where} cites {token!r}, an internal name of one of the project's founding documents",
                    "cite the public title and URL instead (e.g. NVIDIA's tensorflow-determinism README, "
                    "https://github.com/NVIDIA/framework-reproducibility)",
                )
            for token in found:
                catalog.report(
                    path, doc.line_of(loc), CODE,
                    f"{where} points at {token!r}, a file outside the repository that no reader can open",
                    "cite the primary source instead: a URL of the code or docs at a release tag, an issue or PR, "
                    "or a run file under data/runs/",
                )
        if len(catalog.findings) == before and not named:
            known.add(key)
    known.save()
