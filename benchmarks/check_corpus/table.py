"""The table of docs/check.md, made from the committed results files (never typed in):
per program, the prediction under the recipe, the outcome on the GPU, right or wrong, the
time the recipe costs, and what the static scan said.

    PYTHONPATH=. python benchmarks/check_corpus/table.py            # print the table
    PYTHONPATH=. python benchmarks/check_corpus/table.py --write    # replace it in docs/check.md

The first results file is the corpus run; a later file's row for a program is listed beside
the first (a re-run after a change), and the counts are given for the first run and for the
latest row of every program.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ("data/check/h100-80gb-hbm3-x1-220bb9e5/2026-11-27T182028Z-corpus.json",
        "data/check/h100-80gb-hbm3-x1-220bb9e5/2026-11-27T182826Z-corpus.json",
        "data/check/h100-80gb-hbm3-x1-220bb9e5/2026-11-27T202838Z-corpus.json")
SCAN = "data/check/scan/2026-11-27T183121Z-scan.json"
H200 = (  # (corpus, the first call's file, the second call's file, the scan's file), issue 42's measure
    ("project", "data/check/h200-x1-14c028f6/2026-11-27T232431Z-corpus.json",
     "data/check/h200-x1-14c028f6/2026-11-27T233324Z-corpus.json", "data/check/scan/2026-11-28T012044Z-scan.json"),
    ("frozen", "data/check/h200-x1-14c028f6/2026-11-27T232431Z-frozen.json",
     "data/check/h200-x1-14c028f6/2026-11-27T233326Z-frozen.json", "data/check/scan/2026-11-28T012044Z-frozen-scan.json"),
)
H100 = (  # (corpus, the call's file, the scan's file): issue 42's measure on the H100, one call per corpus
    ("project", "data/check/h100-80gb-hbm3-x1-220bb9e5/2026-11-28T005516Z-corpus.json",
     "data/check/scan/2026-11-28T0444Z-h100-scan.json"),
    ("frozen", "data/check/h100-80gb-hbm3-x1-220bb9e5/2026-11-28T005518Z-frozen.json",
     "data/check/scan/2026-11-28T0444Z-h100-frozen-scan.json"),
)
BEGIN, END = "<!-- BEGIN CHECK CORPUS TABLE (benchmarks/check_corpus/table.py) -->", "<!-- END CHECK CORPUS TABLE -->"


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def _predicted(row: dict) -> str:
    ops = row.get("raising") or row.get("differing") or []
    short = ", ".join(o.rsplit(".", 1)[-1] for o in ops)
    return row["predicted"] + (f" ({short})" if short else "")


def _outcome(row: dict) -> str:
    out = row.get("outcome")
    detail = row.get("outcome_detail") or {}
    if out == "raises" and detail.get("kernel"):
        return f"raises ({detail['kernel']})"
    return str(out)


def _time(row: dict) -> str:
    t = row.get("time") or {}
    if t.get("step_ratio") is None:
        return "-"
    return f"{t['step_ratio']}x ({t['as_written_step_s'] * 1000:.3g} → {t['recipe_step_s'] * 1000:.3g} ms); " \
           f"step 1: {t['as_written_first_step_s']} → {t['recipe_first_step_s']} s"


def _row(name: str, r: dict, right: bool | None, s: dict, *extra: str) -> str:
    """One program's row: a run that decided (`right` True or False), or one that did not (None)."""
    scanned = f"{s.get('predicted')}: {s.get('agreement')}" if s else "-"
    tail = "".join(f" {x} |" for x in extra)
    if right is None:
        return f"| {name} | - | - | {r.get('skipped', r.get('error', ''))} | - | - | - | {scanned} |{tail}"
    return (f"| {name} | {' + '.join(r['recipe']) or '-'} | {_predicted(r)} | {_outcome(r)} | "
            f"{'yes' if right else '**no**'} | {r['as_written_predicted']} / {r['as_written_outcome']} | "
            f"{_time(r)} | {scanned} |{tail}")


def table() -> str:
    runs = [_load(r) for r in RUNS]
    scan = {r["program"]: r for r in _load(SCAN)["programs"]}
    first = {r["program"]: r for r in runs[0]["programs"]}
    later: list[dict] = []  # the second and later runs, each by program
    for doc in runs[1:]:
        later.append({r["program"]: r for r in doc["programs"] if "outcome" in r})
    lines = ["| program | recipe | predicted under the recipe | outcome on the H100 | right | as written: predicted / outcome | "
             "recipe's cost (median step after the first; start-up to the end of step 1) | kb scan |",
             "|---|---|---|---|---|---|---|---|"]
    latest_right = latest_n = 0
    for name, row in first.items():
        cells = []
        ordinal = ("2nd", "3rd", "4th")
        for label, r in (("", row), *((f" ({ordinal[i]} run)", run.get(name)) for i, run in enumerate(later))):
            if r is None:
                continue
            if "outcome" not in r:
                cells.append((label, r, None))
                continue
            cells.append((label, r, r["right"]))
        final = cells[-1][1] if cells else row
        if "outcome" in final:
            latest_n += 1
            latest_right += bool(final["right"])
        for label, r, right in cells:
            lines.append(_row(f"{name}{label}", r, right, scan.get(name, {})))
    c = runs[0]["counts"]
    counts = _load(SCAN)["counts"]
    lines.append("")
    lines.append(f"First run: {c['right']} of {c['decided']} programs predicted right under the recipe "
                 f"({100 * c['right'] / c['decided']:.0f}%), {c['skipped']} not run (the run's time budget); "
                 f"latest row of each program: {latest_right} of {latest_n} "
                 f"({100 * latest_right / latest_n:.0f}%). The static scan: {counts['predicts']} predicted the outcome, "
                 f"{counts['possible']} marked the deciding finding possible with its condition, {counts['miss']} missed.")
    return ("\n".join(lines) + "\n" + "".join(call_table(c, "H100", None, f, sc) for c, f, sc in H100)
            + "".join(call_table(c, "H200", first, second, sc) for c, first, second, sc in H200))


def call_table(corpus: str, gpu: str, first_rel: str | None, second_rel: str, scan_rel: str) -> str:
    """One corpus on one GPU: every program of the (last) call, with an earlier call's outcome beside it
    where it differs (the H200's first call counted a run out of GPU memory as raising)."""
    first = {r["program"]: r for r in _load(first_rel)["programs"]} if first_rel else {}
    doc = _load(second_rel)
    scan_doc = _load(scan_rel)
    scan = {r["program"]: r for r in scan_doc["programs"]}
    name = "the project corpus" if corpus == "project" else "the frozen corpus (written before this round's tuning)"
    extra = " first call's outcome |" if first_rel else ""
    lines = ["", f"#### {name[0].upper()}{name[1:]}, {gpu} ({doc['started'][:10]})", "",
             "| program | recipe | predicted under the recipe | outcome | right | as written: predicted / outcome | "
             f"recipe's cost | kb scan |{extra}", "|---|---|---|---|---|---|---|---|" + ("---|" if first_rel else "")]
    for r in doc["programs"]:
        cells: tuple[str, ...] = ()
        if first_rel:
            f = first.get(r["program"], {})
            cells = ("" if f.get("outcome") == r.get("outcome")
                     else f"{_outcome(f)} ({(f.get('outcome_detail') or {}).get('type', '')})",)
        lines.append(_row(r["program"], r, r.get("right") if "outcome" in r else None, scan.get(r["program"], {}), *cells))
    c, sc = doc["counts"], scan_doc["counts"]
    said = (f"{c['right']} of {c['decided']} predicted right under the recipe ({100 * c['right'] / c['decided']:.0f}%), "
            f"{c['as_written_right']} of {c['decided']} as written.")
    if first_rel:
        c1 = _load(first_rel)["counts"]
        said = f"Second call: {said} First call: {c1['right']} of {c1['decided']}."
    lines += ["", f"{said} The static scan: {sc['predicts']} predicted the outcome, "
              f"{sc['possible']} marked the deciding finding possible with its condition, {sc['miss']} missed.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    text = table()
    if not args.write:
        sys.stdout.write(text)
        return 0
    doc = ROOT / "docs" / "check.md"
    body = doc.read_text(encoding="utf-8")
    head, _, rest = body.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
