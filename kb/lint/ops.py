"""KB011: op names carry their framework's prefix and appear once per record."""

from __future__ import annotations

from kb.catalog import Catalog
from kb.prefixes import PREFIXES

CODE = "KB011"
TITLE = "ops: names start with the framework's prefix (tf., torch., jax., hvd., cudnn., cublas., nccl.) and are not repeated"


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        prefixes = PREFIXES.get(record.framework)
        seen: set[str] = set()
        for field in ("ops", "aliases"):
            for index, name in enumerate(getattr(record, field)):
                line = doc.line_of((field, index))
                if prefixes and not name.startswith(prefixes):
                    catalog.report(path, line, CODE, f"{field}[{index}] {name!r} does not start with {' or '.join(prefixes)}", f"write the full public name, e.g. {prefixes[0]}...")
                if name in seen:
                    catalog.report(path, line, CODE, f"{name!r} is listed twice", "list each name once, in ops or aliases")
                seen.add(name)
