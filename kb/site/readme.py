"""The README's generated status section, between two markers; the rest stays hand-written."""

from __future__ import annotations

from kb.catalog import Catalog
from kb.site import model
from kb.render import render

BEGIN = "<!-- BEGIN GENERATED STATUS (kb build) -->"
END = "<!-- END GENERATED STATUS -->"


def section(catalog: Catalog, index: dict) -> str:
    from kb import query

    query.reset(index)
    try:
        frameworks = [
            {"name": fw, "count": len(model.sources_of(index, fw)),
             "rows": model.recipe_ranges(catalog, index, fw) if catalog.registries.get(fw) else []}
            for fw in model.frameworks(index)
        ]
    finally:
        query.reset()
    return render("readme_status.md.j2", frameworks=frameworks, as_of=model.latest_date(catalog), begin=BEGIN, end=END)


def readme_text(current: str, catalog: Catalog, index: dict) -> str:
    """The README with its status section regenerated; unchanged when it has no markers."""
    if BEGIN not in current or END not in current:
        return current
    head, rest = current.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + section(catalog, index).rstrip("\n") + tail
