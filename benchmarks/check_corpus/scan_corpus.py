"""What the static scan (`kb scan`) says for each program of the workload corpus, and whether
that predicts what `kb check`'s runs did on the GPU, or marks the finding that decides it as
`possible` (or a note) with the condition that decides it.

    PYTHONPATH=. python benchmarks/check_corpus/scan_corpus.py --outcomes data/check/<env>/<stamp>-corpus.json ... \
        --results data/check/scan-<stamp>.json
    PYTHONPATH=. python benchmarks/check_corpus/scan_corpus.py --corpus frozen --outcomes frozen.json --results scan.json

For each program the scan's findings are read with the knowledge base's answer for each
record under the scan's recipe: fixed (a recipe code fixes it), raises (its switch raises and
the recipe turns the switch on), or still differs. The scan's prediction is the worst of its
certain findings; a finding the scan marks `possible` or a note says what it would take
(`depends_on`). Against the outcome (the latest run of the program in the outcome files):
`predicts` (same), `possible` (the outcome is the one a possible finding or note names, with
its condition), `miss` (neither). Runs on the CPU: the scan never imports a framework.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import datetime, UTC
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

from run_corpus import corpus  # noqa: E402

VERSIONS = "torch=2.11,jax=0.11.2"
RAISING = {"PT_DET", "PT_FILL", "XLA_DET", "XLA_EXCL"}


def _switch(record: str, version: str, framework: str) -> tuple[str | None, tuple]:
    import kb

    try:
        status = kb.status(record, version, framework=framework)
    except (LookupError, ValueError):
        return None, ()
    for source in status.sources:
        if source.id == record:
            return source.switch, tuple(source.solutions)
    return None, ()


def _under(finding: dict, codes: list[str]) -> str:
    from kb.query import index

    solutions = index()["solutions"]
    switch, solved = _switch(finding["record"], finding["version"], finding["framework"])
    fixes = set(solved) or set(finding.get("codes") or [])
    for code in codes:
        if code in fixes or set(solutions.get(code, {}).get("implies", ())) & fixes:
            return "fixed"
    if switch == "raises" and set(codes) & RAISING:
        return "raises"
    return "differs"


def scan(file: str, folder: Path = HERE) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "kb", "scan", str(folder / file), "--versions", VERSIONS, "--format", "json"],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    data = json.loads(proc.stdout)
    codes = list(dict.fromkeys(c for r in data.get("recipes", []) for c in r["codes"]))
    rows = []
    for f in data["findings"] + data.get("notes", []):
        rows.append({"line": f["line"], "op": f["op"], "record": f["record"], "level": f["level"],
                     "depends_on": f.get("depends_on", []), "under_recipe": _under(f, codes),
                     "note": f.get("note") or None})
    certain = [r for r in rows if r["level"] in ("nondeterministic", "raises")]
    open_ = [r for r in rows if r["level"] in ("possible", "note")]
    verdict = "raises" if any(r["under_recipe"] == "raises" for r in certain) else \
        "differs" if any(r["under_recipe"] == "differs" for r in certain) else \
        "fixed" if certain else "no finding"
    return {"exit": proc.returncode, "recipe": codes, "summary": data.get("summary"), "findings": rows,
            "predicted": verdict, "expect": {"raises": "raises", "differs": "differs"}.get(verdict, "identical"),
            "possible": [r for r in open_ if r["under_recipe"] != "fixed"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outcomes", nargs="+", required=True, help="run_corpus.py results files (later ones win)")
    ap.add_argument("--results", required=True)
    ap.add_argument("--corpus", choices=("project", "frozen"), default="project",
                    help="which programs: the project corpus (default) or benchmarks/check_frozen/")
    args = ap.parse_args(argv)
    folder, programs = corpus(args.corpus)
    outcomes: dict[str, dict] = {}
    for path in args.outcomes:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        for row in doc["programs"]:
            if row.get("outcome"):
                outcomes[row["program"]] = {"outcome": row["outcome"], "recipe": row["recipe"], "file": path,
                                            "as_written": row.get("as_written_outcome")}
    rows = []
    for name, file, _, _ in programs:
        got = scan(file, folder)
        seen = outcomes.get(name)
        row = {"program": name, "file": f"benchmarks/{folder.name}/{file}", **got}
        if seen:
            row["check_recipe"], row["outcome_file"] = seen["recipe"], seen["file"]
            # the runs that had the scan's recipe: the recipe runs where both recipes are the same,
            # the runs as written where the scan asks for nothing
            if not got["recipe"] and seen["recipe"]:
                row["outcome"], row["compared_with"] = seen["as_written"], "as written (the scan's recipe is empty)"
            else:
                row["outcome"], row["compared_with"] = seen["outcome"], "under the recipe"
                if set(got["recipe"]) != set(seen["recipe"]):
                    row["compared_with"] += f" (recipes differ: scan {sorted(set(got['recipe']))}, check {seen['recipe']})"
            if got["expect"] == row["outcome"]:
                row["agreement"] = "predicts"
            elif any({"raises": "raises", "differs": "differs"}.get(p["under_recipe"]) == seen["outcome"]
                     for p in got["possible"]):  # the finding that decides it, marked with its condition
                row["agreement"] = "possible"
            else:
                row["agreement"] = "miss"
        rows.append(row)
        print(f"{name}: scan {got['predicted']} ({got['expect']}), outcome {row.get('outcome')}, "
              f"{row.get('agreement')}", file=sys.stderr, flush=True)
    doc = {"kind": "check-corpus-scan", "started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": "python benchmarks/check_corpus/scan_corpus.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "corpus": args.corpus, "versions": VERSIONS,
           "counts": {k: sum(1 for r in rows if r.get("agreement") == k) for k in ("predicts", "possible", "miss")},
           "programs": rows}
    path = Path(args.results)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    print(json.dumps(doc["counts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
