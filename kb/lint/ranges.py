"""KB004: every range is a valid, non-empty interval and no two ranges of a list overlap."""

from __future__ import annotations

from kb import schema
from kb.catalog import Catalog
from kb.versions import compile_range, key_to_str, overlaps

CODE = "KB004"
TITLE = "ranges: version ranges compile to non-empty intervals and do not overlap"


def range_lists(record: schema.SourceRecord) -> list[tuple[tuple, list[schema.Range]]]:
    """Every list of ranges in a record, with its location (status, distributions, disputes)."""
    lists: list[tuple[tuple, list[schema.Range]]] = [(("status",), record.status)]
    lists += [(("distributions", name), ranges) for name, ranges in record.distributions.items()]
    lists += [(("disputes", i, "status"), d.status) for i, d in enumerate(record.disputes)]
    return lists


def check(catalog: Catalog) -> None:
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        for loc, ranges in range_lists(record):
            compiled: list[tuple[int, tuple]] = []
            for index, item in enumerate(ranges):
                line = doc.line_of(loc + (index, "versions"))
                try:
                    interval = compile_range(item.versions)
                except ValueError as exc:
                    catalog.report(path, line, CODE, str(exc), "write ranges like '>=1.14,<2.1' (docs/versions.md)")
                    continue
                for other_index, other in compiled:
                    if overlaps(interval, other):
                        catalog.report(
                            path, line, CODE,
                            f"range {item.versions!r} overlaps range {ranges[other_index].versions!r} "
                            f"(line {doc.line_of(loc + (other_index, 'versions'))})",
                            "each version may fall in at most one range: end one where the next starts "
                            f"(e.g. '<{key_to_str(interval[0]) or '...'}')",
                        )
                compiled.append((index, interval))
