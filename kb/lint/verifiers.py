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
    """verifiers/discover.scan() of the project's verifiers/, remembered under .cache/kb/ by the
    text of every file it reads (and discover.py's own): parsing ~40 modules with `ast` is slow."""
    from verifiers import discover

    from kb.memo import MISS, Memo

    folder = root / "verifiers"
    folder = folder if folder.is_dir() else discover.HERE
    memo = Memo(root, "verifiers", Path(discover.__file__))
    try:
        files = discover.python_files(folder)
        key = memo.key(folder.name, *(part for path in files for part in (path.relative_to(folder).as_posix(), path.read_bytes())))
    except OSError:  # a file that cannot be read: scan() skips it; nothing remembered
        return discover.scan(folder)
    found = memo.get(key)
    if found is MISS:
        found = {name: {**f.to_dict(), "path": f.path.relative_to(folder).as_posix()} for name, f in discover.scan(folder).items()}
        memo.put(key, found)
        memo.save()
    return {name: discover.Found.from_dict(kw, folder / kw["path"]) for name, kw in found.items()}


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
