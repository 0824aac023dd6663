"""What the pages and the JSON API show, derived from the compiled index and the catalog.

Every answer here comes from `kb.status()` itself (or its own cover function), so the
site can never disagree with the API. Plain Python: no Jinja, no JSON.
"""

from __future__ import annotations

from typing import Any

from kb import query
from kb.catalog import Catalog
from kb.versions import key_to_str, release_key

DISTRIBUTION = "ngc"


class Series:
    """A minor series (`2.3`) of a registry, with its releases in order."""

    def __init__(self, label: str, releases: list[tuple[str, tuple]]) -> None:
        self.label = label
        self.releases = releases  # [(version string, release key)]

    @property
    def key(self) -> tuple:
        return release_key(self.label)


def series(catalog: Catalog, registry: str) -> list[Series]:
    """The registry's releases grouped into minor series, oldest first (worked out once per
    catalog: every matrix, page and API file asks again)."""
    cache = catalog.__dict__.setdefault("_series", {})
    if registry not in cache:
        cache[registry] = _series(catalog, registry)
    return list(cache[registry])


def _series(catalog: Catalog, registry: str) -> list[Series]:
    reg = catalog.registries.get(registry)
    if reg is None:
        return []
    releases = sorted(((r.version, release_key(r.version)) for r in reg.releases), key=lambda r: r[1])
    groups: dict[tuple, list] = {}
    for version, key in releases:
        groups.setdefault((key + (0, 0))[:3], []).append((version, key))
    out = []
    for members in groups.values():
        label = ".".join(members[0][0].split("+")[0].split(".")[:2])
        out.append(Series(label, members))
    return out


def frameworks(index: dict) -> list[str]:
    """Frameworks that have at least one source record, in name order."""
    return sorted({s["framework"] for s in index["sources"].values()})


def sources_of(index: dict, framework: str) -> list[dict]:
    return [s for s in index["sources"].values() if s["framework"] == framework]


def cell_state(answer: Any) -> str:
    """ok | fix | ns | unknown: the colour class of one answer (raises is shown beside it)."""
    if answer.deterministic is None:
        return "unknown"
    if answer.deterministic:
        return "ok"
    return "fix" if answer.solutions else "ns"


def cell_text(answer: Any) -> str:
    state = cell_state(answer)
    if state == "unknown":
        return "not verified"
    if state == "ok":
        return "OK"
    if state == "ns":
        return "NS"
    return " or ".join(answer.solutions)


_answers: dict[tuple, Any] = {}
_answers_of: list[dict] = []  # the index `_answers` were computed from


def source_answer(source_id: str, framework: str, version: str, distribution: str | None = None) -> Any:
    """The record's own answer at `version` (its SourceStatus), straight from kb.status().

    Remembered for as long as kb.status() answers from the same index: every matrix, source
    page and solution list asks for the same (record, release) again, ~150,000 times per site,
    more than kb.status()'s own bounded memo keeps.
    """
    idx = query.index()
    if not _answers_of or _answers_of[0] is not idx:
        _answers.clear()
        _answers_of[:] = [idx]
    memo = (source_id, framework, version, distribution)
    found = _answers.get(memo)
    if found is None:
        result = query.status(source_id, version, framework=framework, device="any", distribution=distribution)
        found = _answers[memo] = result.sources[0]
    return found


def matrix(catalog: Catalog, index: dict, framework: str, distribution: str | None = None) -> dict:
    """Rows = sources, columns = series; a cell splits when releases of a series differ."""
    registry = f"{distribution}-{framework}" if distribution else framework
    cols = series(catalog, registry)
    rows = []
    for source in sorted(sources_of(index, framework), key=lambda s: s["id"]):
        if distribution and not source["distributions"].get(distribution):
            continue
        cells = []
        for col in cols:
            parts: list[tuple[str, Any]] = []
            for version, _ in col.releases:
                answer = source_answer(source["id"], framework, version, distribution)
                if parts and parts[-1][1] == answer:
                    continue
                parts.append((version, answer))
            cells.append([
                {"from": version if len(parts) > 1 else None, "state": cell_state(a), "text": cell_text(a),
                 "raises": a.raises, "range": a.versions or "no range"}
                for version, a in parts
            ])
        rows.append({"source": source, "cells": cells})
    return {"framework": framework, "distribution": distribution, "columns": cols, "rows": rows}


def stack(index: dict, framework: str, version: str, device: str = "gpu", distribution: str | None = None) -> dict:
    """What applies to a whole stack (every source of the framework) and the recipe for it.

    The recipe covers every source that has a solution, with kb.status()'s own cover;
    sources with no solution (NS) or no known status are listed beside it, because one
    of those would otherwise hide the recipe for all the others.
    """
    ids = tuple(s["id"] for s in sorted(sources_of(index, framework), key=lambda s: s["id"]))
    key = release_key(version)
    answer = query.answer(f"{framework} stack", version, key=key, framework=framework, device=device,
                          distribution=distribution, ids=ids, idx=index)
    needs, unsolved, unknown = [], [], []
    for source in answer.sources:
        if source.deterministic is None:
            unknown.append(source.id)
        elif source.deterministic is False:
            if source.solutions:
                needs.append(frozenset(source.solutions))
            else:
                unsolved.append(source.id)
    recipe = query.smallest_cover(needs, index["solutions"], index["order"]) if needs else ()
    return {
        "recipe": list(recipe),
        "unsolved": unsolved,
        "unknown": unknown,
        "affected": [s.id for s in answer.sources if s.deterministic is False],
    }


def recipe_ranges(catalog: Catalog, index: dict, framework: str, device: str = "gpu") -> list[dict]:
    """Consecutive series with the same stack answer, merged into one row each."""
    rows: list[dict] = []
    for col in series(catalog, framework):
        answer = stack(index, framework, col.label, device)
        signature = (tuple(answer["recipe"]), len(answer["unsolved"]), len(answer["unknown"]))
        if rows and rows[-1]["signature"] == signature:
            rows[-1]["last"] = col.label
            continue
        rows.append({"first": col.label, "last": col.label, "signature": signature, **answer})
    return rows


def op_series(catalog: Catalog, framework: str, op: str, distribution: str | None = None) -> list[tuple[str, Any]]:
    registry = f"{distribution}-{framework}" if distribution else framework
    return [
        (col.label, query.status(op, col.label, framework=framework, distribution=distribution))
        for col in series(catalog, registry)
    ]


def latest_date(catalog: Catalog) -> str | None:
    """The newest date in the data (a release or a link), for "data as of": never the clock."""
    dates = [r.date for reg in catalog.registries.values() for r in reg.releases if r.date]
    dates += [d for link in catalog.links for d in (link.opened, link.merged) if d]
    return max(dates).isoformat() if dates else None


def key_list(key: tuple | None) -> list[int] | None:
    return None if key is None else list(key)


__all__ = ["key_to_str", "matrix", "recipe_ranges", "series", "stack"]
