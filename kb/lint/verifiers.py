"""KB014: a record's `verify.verifier` names a verifier registered under verifiers/.

Registered names are read from the verifiers' source with `ast` (verifiers/discover.py),
so lint never imports torch, jax or tensorflow.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from kb.catalog import Catalog

CODE = "KB014"
TITLE = "verifiers: `verify.verifier` names a verifier registered with @verifier in verifiers/"


def registered(root: Path) -> dict:
    from verifiers import discover

    folder = root / "verifiers"
    return discover.scan(folder if folder.is_dir() else discover.HERE)


def check(catalog: Catalog) -> None:
    names = None
    for path, record in catalog.sources.items():
        if record.verify is None or record.verify.verifier is None:
            continue
        if names is None:
            names = registered(catalog.root)
        name = record.verify.verifier
        found = names.get(name)
        line = catalog.documents[path].line_of(("verify", "verifier"))
        if found is None:
            near = difflib.get_close_matches(name, list(names), n=3)
            hint = f"did you mean {', '.join(near)}?" if near else "register it with @verifier(...) in a module under verifiers/"
            catalog.report(path, line, CODE, f"verifier {name!r} is not registered", hint)
        elif found.framework not in (record.framework, "synthetic"):
            catalog.report(path, line, CODE, f"verifier {name!r} is registered for {found.framework}, the record is {record.framework}", "name a verifier of the record's framework")
