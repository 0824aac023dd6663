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
    _link_state(catalog)
    if not catalog.sources:
        return
    _unknown_targets(catalog, runs_of(catalog))
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


def _unknown_targets(catalog: Catalog, runs: list) -> None:
    """Results naming a record or verifier the KB does not have: evidence that `kb build` cannot
    attach anywhere (a renamed record, a run from another checkout), said rather than dropped."""
    from kb.lint.verifiers import registered

    ids = {record.id for record in catalog.sources.values()}
    verifiers = None
    for run in runs:
        if run.problems:
            continue
        for i, result in enumerate(run.data["results"]):
            if result.get("source") and result["source"] not in ids:
                catalog.report(run.path, 1, CODE, f"results[{i}].source {result['source']!r} is not a record; "
                               "this result is not shown anywhere",
                               "restore the record, or leave the run file as history (it is never edited)")
            if verifiers is None:
                verifiers = registered(catalog.root)
            if data_kind(run) != "e2e" and result["verifier"] not in verifiers:
                catalog.report(run.path, 1, CODE, f"results[{i}].verifier {result['verifier']!r} is not a registered "
                               "verifier", "the verifier was renamed or removed; a new `kb verify` run replaces this one")


def data_kind(run) -> str:
    """`kind` of a run file: e2e runs name the training script they ran, not a verifier."""
    return str(run.data.get("kind") or "verify")


def _link_state(catalog: Catalog) -> None:
    """data/links-state.yaml, read as `kb build` reads it: a file the build refuses fails here too."""
    from kb.links import state

    try:
        state.load(catalog.root)
    except state.StateFileError as exc:
        where, _, message = str(exc).partition(": ")
        line = where.rsplit(":", 1)[-1]
        catalog.report(catalog.root / state.STATE_FILE, int(line) if line.isdigit() else 1, "KB002",
                       f"link state: {message}", "`kb links refresh` writes this file; rerun it or delete the file")
