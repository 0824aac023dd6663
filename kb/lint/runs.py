"""KB015 (warning): a run file under data/runs/ contradicts the record it verified.

A warning, not an error: run files are machine evidence that nobody may edit, and a
contradiction (differs under the solution; nothing differed where the record claims
non-determinism; no raise where the record says the solution raises) is news for a person
to review, not a broken file. `kb validate` prints it but exits 0 unless `--strict`;
`kb build` builds regardless and lists it in the index's `flagged` (docs' verification
page). A malformed run file is a KB002 error (it cannot be merged).
"""

from __future__ import annotations

from kb.catalog import Catalog

CODE = "KB015"
TITLE = "runs (warning): a verifier run in data/runs/ contradicts its record; review it"


def check(catalog: Catalog) -> None:
    from kb.verify.merge import merged_runs
    from kb.verify.runfile import runs_of

    for run in runs_of(catalog):
        for line, problem in run.problems:
            catalog.report(run.path, line, "KB002", f"run file: {problem}", "run files are written by `kb verify`; regenerate it rather than editing")
    if not catalog.sources:
        return
    for path, record in catalog.sources.items():
        for i, review in enumerate(record.verify.reviewed if record.verify else ()):
            if not (catalog.root / review.run).is_file():
                doc = catalog.documents.get(path)
                line = doc.line_of(("verify", "reviewed", i, "run")) if doc else 1
                catalog.report(
                    path, line, CODE,
                    f"{record.id}: verify.reviewed names {review.run}, which is not a run file",
                    "name a file under data/runs/ exactly as `kb verify --flagged` prints it",
                )
    from kb.verify.cases import label

    for flag in merged_runs(catalog)["flagged"]:
        case = f", case {label(flag['op'], flag['call'])}" if flag.get("op") else ""
        for reason in flag["reasons"]:
            catalog.report(
                catalog.root / flag["file"], 1, CODE,
                f"{flag['source']} ({flag['device']}, {flag['version']}{case}): {reason}",
                "review the evidence; fix the record (cite the run), or add the run file with your note "
                "to the record's verify.reviewed",
            )
