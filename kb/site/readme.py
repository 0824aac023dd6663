"""The README's generated sections (status, solution codes), each between two markers; the
rest stays hand-written."""

from __future__ import annotations

from kb.catalog import Catalog
from kb.site import model
from kb.render import render

BEGIN = "<!-- BEGIN GENERATED STATUS (kb build) -->"
END = "<!-- END GENERATED STATUS -->"
SOLUTIONS_BEGIN = "<!-- BEGIN GENERATED SOLUTIONS (kb build) -->"
SOLUTIONS_END = "<!-- END GENERATED SOLUTIONS -->"


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


def solutions_section(catalog: Catalog) -> str:
    """Every solution code with what to do, from data/solutions.yaml: a code a user meets in
    an answer (PT_DET, XLA_DET, NVTE_DET...) is always explained in the README."""
    rows = [
        {"code": s.code, "frameworks": ", ".join(s.frameworks), "title": _cell(s.title), "how": _cell(_first_sentence(s.how))}
        for s in sorted(catalog.solutions, key=lambda s: (s.frameworks[0], s.phase, s.preference, s.code))
    ]
    return render("readme_solutions.md.j2", rows=rows, begin=SOLUTIONS_BEGIN, end=SOLUTIONS_END)


_ABBREVIATIONS = ("e.g", "i.e", "etc", "cf", "vs", "approx")


def _first_sentence(text: str) -> str:
    """Up to the first ". " or "; " outside parentheses and not after an abbreviation ("e.g."):
    cutting at the first one anywhere left "one protocol (e.g." in the README's table."""
    text = " ".join(text.split())
    depth = 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char in ".;" and depth == 0 and text[i + 1:i + 2] == " ":
            word = text[:i].rsplit(" ", 1)[-1].lstrip("(").lower()
            if char == "." and word in _ABBREVIATIONS:
                continue
            text = text[:i] + "."
            break
    return text if len(text) <= 160 else text[:157].rstrip() + "..."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _replace(current: str, begin: str, end: str, text: str) -> str:
    if begin not in current or end not in current:
        return current
    head, rest = current.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + text.rstrip("\n") + tail


def readme_text(current: str, catalog: Catalog, index: dict) -> str:
    """The README with its generated sections regenerated; a section without its markers is left alone."""
    current = _replace(current, BEGIN, END, section(catalog, index))
    return _replace(current, SOLUTIONS_BEGIN, SOLUTIONS_END, solutions_section(catalog))
