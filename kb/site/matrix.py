"""Status matrices people can read: newest first, identical neighbours merged, every cell explained.

A matrix is sources (down) against release series (across). Two adjacent series whose
cells are the same in every row become one column ("2.10–2.21"), so a table shows only the
versions where something changed. Each cell carries what a person needs without hovering:
the sentence it stands for, the record range it comes from (a link to that range on the
source's page) and, where a verifier ran on that series, what the run measured.
"""

from __future__ import annotations

from typing import Any

from kb.entries import VERSIONS
from kb.site import model, words

GLYPH = {"ok": "✓", "fix": "", "ns": "✗", "unknown": ""}


def range_anchor(source: dict, matched: str | None, distribution: str | None = None) -> str:
    """The id of a record range's row on the source page (`status` when no range matched)."""
    if matched is None:
        return "status"
    ranges = source["distributions"].get(distribution, ()) if distribution else source["status"]
    for number, entry in enumerate(ranges):
        if entry[VERSIONS] == matched:
            return f"{distribution or 'range'}-{number + 1}"
    return "status"


def runs_on(index: dict, source_id: str, releases: list[tuple[str, tuple]], device: str = "gpu") -> list[dict]:
    """Verifier runs of a source measured on one of these releases (same series), on `device`."""
    # Keys drop trailing zeros (2.0.0 -> (0, 2)), so compare whole series, padded: a run on
    # 2.11.0 is not a run on 2.0.
    series = {(key + (0, 0))[:3] for _, key in releases}
    found = []
    for run in (index.get("runs") or {}).get(source_id, ()):
        key = tuple(run.get("key") or ())
        if run.get("device") == device and (key + (0, 0))[:3] in series:
            found.append(run)
    return found


def _part(source: dict, framework: str, version: str, answer: Any, distribution: str | None,
          runs: list[dict], solutions: dict) -> dict:
    state = model.cell_state(answer)
    return {
        "state": state, "glyph": GLYPH[state],
        "codes": list(answer.solutions) if state == "fix" else [],
        "text": {"ok": "OK", "ns": "NS", "unknown": "not verified"}.get(state, ""),
        "raises": answer.raises, "range": answer.versions,
        "sentence": words.sentence(state, answer.solutions, solutions,
                                   answer.varies_with if getattr(answer, "varies", None) == "configuration" else ())
        + (" (read in the code of the release, not run)" if getattr(answer, "basis", None) == "static" else "")
        + (" (a sweep of the release, a run)" if getattr(answer, "basis", None) == "verified" else ""),
        "basis": getattr(answer, "basis", None),
        "anchor": range_anchor(source, answer.versions, distribution),
        "verified": [words.verified_mark(run, framework) for run in runs],
        "condition": getattr(answer, "condition", None),
    }


def matrix(catalog: Any, index: dict, framework: str, distribution: str | None = None,
           only: str | None = None) -> dict:
    """Rows = sources (or the one source `only`), columns = merged series, newest first."""
    registry = f"{distribution}-{framework}" if distribution else framework
    cols = model.series(catalog, registry)
    sources = sorted(model.sources_of(index, framework), key=lambda s: s["id"])
    if only is not None:
        sources = [s for s in sources if s["id"] == only]
    if distribution:
        sources = [s for s in sources if s["distributions"].get(distribution)]
    solutions = index["solutions"]
    grid: list[list[list[dict]]] = []  # [row][series] -> parts
    for source in sources:
        row = []
        for col in cols:
            parts: list[tuple[str, Any]] = []
            for version, _ in col.releases:
                answer = model.source_answer(source["id"], framework, version, distribution)
                if parts and parts[-1][1] == answer:
                    continue
                parts.append((version, answer))
            runs = [] if distribution else runs_on(index, source["id"], col.releases)
            cell = []
            for number, (version, answer) in enumerate(parts):
                part = _part(source, framework, version, answer, distribution, runs if number == len(parts) - 1 else [],
                             solutions)
                part["from"] = version if len(parts) > 1 else None
                cell.append(part)
            row.append(cell)
        grid.append(row)
    # Merge adjacent series whose column is the same in every row (and never a split column).
    groups: list[list[int]] = []
    for c in range(len(cols)):
        column = [row[c] for row in grid]
        if groups and all(len(cell) == 1 for cell in column):
            last = groups[-1]
            previous = [row[last[-1]] for row in grid]
            if all(len(cell) == 1 for cell in previous) and previous == column:
                last.append(c)
                continue
        groups.append([c])
    columns: list[dict[str, Any]] = []
    for group in reversed(groups):
        first_label, last_label = cols[group[0]].label, cols[group[-1]].label
        label = first_label if first_label == last_label else f"{first_label}–{last_label}"
        columns.append({"label": label, "first": first_label, "last": last_label, "count": len(group),
                        "id": f"{(distribution or framework)}-{first_label}"})
    rows = []
    for source, row in zip(sources, grid):
        cells = []
        for group, merged in zip(reversed(groups), columns):
            cells.append([dict(p, where=merged["label"]) for p in row[group[0]]])
        conditions = list(dict.fromkeys(p["condition"] for cell in cells for p in cell if p["condition"]))
        rows.append({"source": source, "cells": cells, "conditions": conditions})
    used_states = sorted({p["state"] for r in rows for cell in r["cells"] for p in cell},
                         key=["fix", "ns", "ok", "unknown"].index)
    used_codes = [c for c in index["order"] if any(c in p["codes"] for r in rows for cell in r["cells"] for p in cell)]
    return {
        "framework": framework, "distribution": distribution, "columns": columns, "rows": rows,
        "legend": {
            "states": [(s, words.STATE_LEGEND[s]) for s in used_states],
            "codes": [(c, solutions[c]["title"]) for c in used_codes],
            "raises": any(p["raises"] for r in rows for cell in r["cells"] for p in cell),
            "split": any(len(cell) > 1 for r in rows for cell in r["cells"]),
            "verified": any(p["verified"] for r in rows for cell in r["cells"] for p in cell),
        },
        "series_count": len(cols),
    }
