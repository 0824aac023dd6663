"""KB021 (warning): a sweep found a source that no record covers, or one its record contradicts.

`kb verify --sweep` (data/sweeps/) runs every operator of a framework's catalog by default and
under the determinism switch. A case classified `fixed` (differs by default, the switch fixes
it), `raises` (the switch refuses the op) or `silent` (differs under the switch without an
error) is a source of non-determinism; when no record covers that op, call, pass, device and
version, it is an undocumented source: this finding is how it becomes data (a new record, or
the call joined to an existing record's condition, citing the sweep file). Where a record does
cover the call but says otherwise (fixed by the switch where the sweep saw it differ under the
switch), the record is to be corrected or the disagreement kept as a reviewed dispute. `error`
and `skipped` cases are never evidence. A warning like KB015: `kb validate --strict` fails on it.

Unreadable or malformed sweep files are reported here too, with the file and the field: KB012
for a bound of the JSON reader, KB002 for the shape.
"""

from __future__ import annotations

from kb.catalog import Catalog

CODE = "KB021"
TITLE = ("sweeps (warning): every operator a sweep in data/sweeps/ found non-deterministic (fixed, raises, silent) "
         "is covered by a record that says the same")


def check(catalog: Catalog) -> None:
    from kb.verify import sweepfile

    sweeps = sweepfile.sweeps_of(catalog)
    for sweep in sweeps:
        for line, code, message in sweep.problems:
            catalog.report(sweep.path, line, code, message,
                           "sweep files are written by `kb verify --sweep`; run it again rather than editing the file")
    records = [r for r in catalog.sources.values() if r.withdrawn is None]
    misstated = sweepfile.reviewed_cases(catalog.sources.values())  # not a new source
    params: dict[str, tuple | None] = {}
    for sweep in sweeps:
        data = sweep.data
        if data is None:
            continue
        prefix = {"pytorch": "torch.", "jax": "jax."}[data["framework"]]
        seen: set[tuple] = set()
        for i, case in enumerate(data["cases"]):
            if case["class"] not in sweepfile.FINDINGS or not case["op"].startswith(prefix):
                continue
            op = sweepfile.kb_op(case["op"])
            if op not in params:
                params[op] = sweepfile.params_for(data["framework"], op, catalog.root)
            call = sweepfile.case_call(case, data["suite"], params[op])
            found = sweepfile.covering(records, data, case, call,
                                      sweepfile.defaults_for(data["framework"], op, params[op], catalog.root))
            what = (f"cases[{i}] {op} ({case.get('pass')}, {case.get('dtype')}"
                    + (f", {', '.join(f'{k}={v!r}' for k, v in call.items())}" if call else "") + ")")
            version = sweepfile.version_of(data)
            if not found:
                if (sweep.rel, i) in misstated:
                    continue
                key = (op, case.get("pass"), case["class"], tuple(call.items()))
                if key in seen:
                    continue
                seen.add(key)
                catalog.report(
                    sweep.path, 1, CODE,
                    f"{what}: {case['class']} on {data['framework']} {version}, and no record covers this call: "
                    "an undocumented source the sweep found",
                    f"add a record under data/sources/{data['framework']}/ (or add the op and its call condition to "
                    f"an existing record) citing {sweep.rel}, with the versions measured and the fix "
                    + {"fixed": "(the switch)", "raises": "(raises: the message)",
                       "silent": "(switch: silent; a verified replacement, or none known)"}[case["class"]],
                )
                continue
            reason = sweepfile.disagreement(case, [item for _, item in found])
            if reason and all(sweep.rel in {r.run for r in (rec.verify.reviewed if rec.verify else ())} for rec, _ in found):
                continue  # a person read this sweep's finding and kept the record (verify.reviewed says why)
            if reason:
                ids = ", ".join(r.id for r, _ in found)
                catalog.report(
                    sweep.path, 1, CODE, f"{what} on {data['framework']} {version}: {ids}: {reason}",
                    "correct the record's range for this version (cite the sweep file), or keep the record's claim "
                    "as a dispute with the reason",
                )
