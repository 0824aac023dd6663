"""A new sweep file extends or closes a record's range: what a sweep of a release that no range of the
record covers says about it, merged into the compiled index as a range of that release (basis
`verified`), never written into the curated record.

For each sweep case that is evidence (kb/verify/sweepfile.py EVIDENCE) of a record's op, device, pass and
call condition, on a release none of the record's ranges covers:
- a case that differs as the record's nearest range says (`silent` where the switch has no effect, `raises`
  where it raises, `fixed` where a solution fixes it) **extends** the record to that release, with the
  nearest range's claim;
- a case that differs otherwise **changes** it: the claim the sweep measured (`silent`: no switch fix;
  `raises`: the switch raises; `fixed`: the switch fixes it);
- cases that all saw no difference (`same`, "0 of N differed") where the nearest range says the op differs
  **close** the range before that release: "no difference seen", deterministic for that release, basis
  `verified` (a run, weaker than a code read; the note says so).
One mismatch proves non-determinism, so any differing case wins over cases that saw nothing. The derived
range is exactly the release swept (`==2.12.0`), and the nightly report lists each change
(kb/nightly/sweep.py `range_changes`).
"""

from __future__ import annotations

from typing import Any

SWITCH_CODES = {"pytorch": ("PT_DET",), "jax": ("XLA_DET", "XLA_EXCL")}


def _nearest(status, version: str):
    """The record's range closest to `version` (the one just before it, else the first after it)."""
    from kb.versions import compile_range, release_key

    key = release_key(version)
    before, after = None, None
    before_hi, after_lo = None, None  # their bounds
    for item in status:
        lo, hi = compile_range(item.versions)
        if hi is not None and hi <= key and (before_hi is None or before_hi < hi):
            before, before_hi = item, hi
        elif lo is not None and lo > key and (after_lo is None or after_lo > lo):
            after, after_lo = item, lo
    return before or after


def _agrees(item, klass: str) -> bool:
    """Does a differing case's class say what the range says? (kb/verify/sweepfile.py disagreement, inverted)."""
    from kb.verify.sweepfile import disagreement

    return disagreement({"class": klass}, [item]) is None


def changes(catalog: Any, records: list | None = None) -> list[dict[str, Any]]:
    """Per (record, swept release) outside every range of the record: {record, version, kind (extends,
    changes, closes), claim, cases, files}. `records`: the records to consider (default: the catalog's)."""
    from kb.verify import sweepfile
    from kb.verify.cases import applies
    from kb.versions import range_at

    records = [r for r in (records if records is not None else catalog.sources.values()) if r.withdrawn is None]
    found: dict[tuple[str, str], dict[str, Any]] = {}
    params: dict[tuple[str, str], Any] = {}
    for sweep in sweepfile.sweeps_of(catalog):
        data = sweep.data
        if data is None:
            continue
        version, device = sweepfile.version_of(data), sweepfile.device_of(data)
        for case in data["cases"]:
            if case["class"] not in sweepfile.EVIDENCE:
                continue
            op = sweepfile.kb_op(case["op"])
            candidates = [r for r in records if r.framework == data["framework"] and (op in r.ops or op in r.aliases)
                          and r.device in ("any", device) and sweepfile.passes(r.pass_, case.get("pass", ""))]
            if not candidates:
                continue
            if (data["framework"], op) not in params:
                own = sweepfile.params_for(data["framework"], op, catalog.root)
                params[(data["framework"], op)] = (own, sweepfile.defaults_for(data["framework"], op, own, catalog.root))
            own, defaults = params[(data["framework"], op)]
            call = sweepfile.with_defaults(sweepfile.case_call(case, data["suite"], own), defaults)
            for record in candidates:
                try:
                    if range_at(record.status, version) is not None:
                        continue  # a range covers the release: its evidence is merged, contradictions are KB021
                except ValueError:
                    continue
                if applies(record.calls, None, op, call) is not True:
                    continue
                entry = found.setdefault((record.id, version), {"record": record, "version": version, "same": [],
                                                                "differ": [], "files": []})
                entry["differ" if case["class"] != "same" else "same"].append((case, sweep.rel, data["runs_per_mode"]))
                if sweep.rel not in entry["files"]:
                    entry["files"].append(sweep.rel)
    out = []
    for (record_id, version), entry in sorted(found.items()):
        record = entry["record"]
        nearest = _nearest(record.status, version)
        if nearest is None:
            continue
        if entry["differ"]:
            case, rel, n = entry["differ"][0]
            klass = case["class"]
            if _agrees(nearest, klass):
                kind, claim = "extends", {"solutions": tuple(nearest.solutions), "deterministic": False,
                                          "raises": nearest.raises, "switch": nearest.switch}
            else:
                codes = tuple(c for c in SWITCH_CODES.get(record.framework, ()) if klass == "fixed")
                raised = ((case.get("modes") or {}).get(sweepfile.SWITCH_MODE.get(record.framework, "")) or {}).get("raised")
                kind, claim = "changes", {"solutions": codes, "deterministic": False,
                                          "raises": (raised or "an error") if klass == "raises" else None,
                                          "switch": {"silent": "silent", "raises": "raises", "fixed": "fixes"}[klass]}
            what = f"{case['op']} {case['case']} was {klass}"
        elif not nearest.deterministic:
            case, rel, n = entry["same"][0]
            kind, claim = "closes", {"solutions": (), "deterministic": True, "raises": None, "switch": None}
            what = f"{len(entry['same'])} case(s) of the record's call saw no difference (0 of {n} differed in every mode)"
        else:
            continue  # nothing differs where the record says nothing does: no change
        out.append({"record": record_id, "framework": record.framework, "version": version, "kind": kind,
                    "claim": claim, "what": what, "files": tuple(entry["files"]), "nearest": nearest.versions})
    return out


def derived_ranges(catalog: Any) -> dict[str, list[tuple[str, dict[str, Any], str]]]:
    """record id -> [(versions, claim, note)]: the ranges kb/compile.py adds, one per release a sweep extends,
    changes or closes."""
    notes = {
        "extends": "A sweep of {v} ({files}) extends this record to {v}: {what}, as the range {near} says. A run, not a code read.",
        "changes": "A sweep of {v} ({files}) saw the record's call behave otherwise than the range {near} says: {what}. A run, not a code read.",
        "closes": "The range {near} closes before {v}: a sweep of {v} ({files}) saw no difference: {what}. A run that saw nothing, weaker than a code read.",
    }
    out: dict[str, list] = {}
    for change in changes(catalog):
        note = notes[change["kind"]].format(v=change["version"], files=", ".join(change["files"]), what=change["what"],
                                            near=change["nearest"])
        out.setdefault(change["record"], []).append((f"=={change['version']}", change["claim"], note))
    return out
