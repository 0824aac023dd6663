"""Measure `kb scan` once on the frozen corpus (issue 45): precision and recall against labels.yaml.

    python benchmarks/scan_frozen/measure.py --mirrors /work/.mirror            # the table
    python benchmarks/scan_frozen/measure.py --mirrors /work/.mirror --json OUT  # every finding, matched

The corpus (corpus.yaml) and its labels (labels.yaml) were chosen and written by a reader who did
not change, read or run the scanner, under RULES.md; this script only applies RULES.md's M section.
Each repository is extracted at its commit as benchmarks/scan_corpus/measure.py does (its Python
files and notebooks, under `folder`, less `excluded`), scanned whole with the corpus's versions, and
each finding is matched to the entries of its file (RULES.md L2: same path, same record or `*`, a
line within `line`..`end_line`):

- precision = findings on `risky` entries / findings on `risky` or `safe` entries (by level too);
- recall = `risky` entries some finding matches / `risky` entries;
- `unsure` entries count in neither (U2); findings that match no entry are listed for judging by
  RULES.md afterwards (M), never counted silently.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "scan_corpus"))

from measure import extract, run_scan  # noqa: E402  (benchmarks/scan_corpus/measure.py)
from labelfiles import load_labels  # noqa: E402  (this folder)


def load(corpus_dir: Path = HERE) -> tuple[dict, dict]:
    """corpus.yaml and labels.yaml of a frozen corpus's folder (this one, or another made the same way)."""
    corpus = yaml.safe_load((corpus_dir / "corpus.yaml").read_text(encoding="utf-8"))
    return corpus, load_labels(corpus_dir)


def scan_repo(kb_root: Path, mirrors: Path, entry: dict, versions: str, into: Path) -> dict:
    folder = None if entry["folder"] == "whole" else entry["folder"]
    where = extract(mirrors, entry["repo"], entry["commit"], folder, into)
    for rel in entry.get("excluded") or ():
        target = where / (rel[len(folder) + 1:] if folder and rel.startswith(folder + "/") else rel)
        if target.is_file():
            target.unlink()
    return run_scan(kb_root, where, versions)


def matches(site: dict, path: str, line: int, record: str) -> bool:
    if site["path"] != path or site["record"] not in (record, "*"):
        return False
    return site["line"] <= line <= site.get("end_line", site["line"])


def measure(kb_root: Path, mirrors: Path, corpus_dir: Path = HERE) -> dict:
    corpus, labels = load(corpus_dir)
    versions = corpus["versions"]
    out: dict = {"findings": [], "notes": [], "risky_missed": [], "per_repo": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for entry in corpus["repositories"]:
            repo = entry["repo"]
            sites = labels["repositories"][repo]["sites"]
            doc = scan_repo(kb_root, mirrors, entry, versions, Path(tmp))
            # L1 names paths from the scanned folder; a label file that names every path from the repository's
            # root (the seventeenth corpus's E1-2) is matched with the folder put in front of each finding's path
            folder = entry["folder"]
            prefix = f"{folder}/" if folder != "whole" and sites and all(s["path"].startswith(f"{folder}/") for s in sites) else ""
            hit: set[int] = set()
            for f in doc["findings"]:
                path = prefix + f["path"] + (f"#cell{f['cell']}" if f.get("cell") else "")
                found = [i for i, s in enumerate(sites) if matches(s, path, f["line"], f["record"])]
                label = None
                if found:
                    kinds = {sites[i]["label"] for i in found}
                    label = "risky" if "risky" in kinds else "safe" if "safe" in kinds else "unsure"
                    hit.update(i for i in found if sites[i]["label"] == "risky")
                out["findings"].append({"repo": repo, "path": path, "line": f["line"], "record": f["record"],
                                        "level": f["level"], "label": label,
                                        "why": "; ".join(sites[i]["why"] for i in found)})
            for n in doc.get("notes", ()):
                path = prefix + n["path"] + (f"#cell{n['cell']}" if n.get("cell") else "")
                on = [s["label"] for s in sites if matches(s, path, n["line"], n["record"])]
                out["notes"].append({"repo": repo, "path": path, "line": n["line"], "record": n["record"],
                                     "label": on[0] if on else None})
            for i, s in enumerate(sites):
                if s["label"] == "risky" and i not in hit:
                    out["risky_missed"].append({"repo": repo, **s})
            risky = sum(1 for s in sites if s["label"] == "risky")
            out["per_repo"][repo] = {"risky": risky, "found": len(hit & {i for i, s in enumerate(sites) if s["label"] == "risky"}),
                                     "unsure": sum(1 for s in sites if s["label"] == "unsure")}
    return out


def table(result: dict) -> str:
    per_level: dict = collections.defaultdict(lambda: [0, 0])
    per_record: dict = collections.defaultdict(lambda: [0, 0])
    unmatched = [f for f in result["findings"] if f["label"] is None]
    unsure = [f for f in result["findings"] if f["label"] == "unsure"]
    for f in result["findings"]:
        if f["label"] in ("risky", "safe"):
            good = f["label"] == "risky"
            per_level[f["level"]][0 if good else 1] += 1
            per_level["all"][0 if good else 1] += 1
            per_record[f["record"]][0 if good else 1] += 1
    risky = sum(r["risky"] for r in result["per_repo"].values())
    found = sum(r["found"] for r in result["per_repo"].values())

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f}% ({a} of {b})" if b else "-"

    lines = ["| level | precision |", "| --- | --- |"]
    for level in ("all", "nondeterministic", "possible"):
        tp, fp = per_level[level]
        lines.append(f"| {level} | {pct(tp, tp + fp)} |")
    lines += ["", f"recall: {pct(found, risky)}", f"findings on unsure sites (not counted): {len(unsure)}",
              f"findings no entry matches (judged afterwards by RULES.md): {len(unmatched)}",
              f"notes: {len(result['notes'])} ({sum(1 for n in result['notes'] if n['label'] == 'risky')} on risky sites)", "",
              "| repository | risky | reported |", "| --- | --- | --- |"]
    for repo, r in result["per_repo"].items():
        lines.append(f"| {repo} | {r['risky']} | {r['found']} |")
    lines += ["", "| record | right | false alarms |", "| --- | --- | --- |"]
    for record, (tp, fp) in sorted(per_record.items()):
        lines.append(f"| `{record}` | {tp} | {fp} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="folder of git directories (owner+name)")
    ap.add_argument("--kb", type=Path, default=ROOT, help="the checkout of kb to measure (default: this one)")
    ap.add_argument("--json", type=Path, help="write every finding, note and missed site here")
    ap.add_argument("--corpus", type=Path, default=HERE,
                    help="folder of the frozen corpus to measure: its corpus.yaml and labels.yaml "
                         "(default: this folder; benchmarks/scan_frozen3 is the third corpus)")
    args = ap.parse_args()
    result = measure(args.kb, args.mirrors, args.corpus)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
