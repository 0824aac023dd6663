"""Summarize a CPU sweep evidence file (data/sweeps/<env-id>/<stamp>-<suite>.json).

    python scripts/sweep_summary.py data/sweeps/<env-id>/<stamp>-tensorflow-cpu.json

Prints the counts per class (cases and ops), every op that differs across processes without
raising (with the modes that differed and whether a seed fixed it), and every op that raises
with the message of each mode. Reads the file only; never edits it.
"""

from __future__ import annotations

import collections
import json
import sys


def main(path: str) -> int:
    doc = json.load(open(path, encoding="utf-8"))
    cases = doc["cases"]
    print(f"{path}: {doc['suite']}, {len(cases)} cases, wall {doc['wall_s']} s, {doc['processes']} processes per mode")
    print("cases per class:", doc["counts"])
    ops = collections.defaultdict(set)
    for c in cases:
        ops[c["class"]].add((c.get("backend", ""), c["op"]))
    print("ops per class:", {k: len(v) for k, v in ops.items()})
    print("\ndiffers across processes (without raising):")
    for c in cases:
        if c["class"] == "differs-across-processes":
            detail = {m: v["distinct"] for m, v in c["modes"].items()}
            print(f"  {c.get('backend', '')} {c['op']} [{c['pass']}, {c['case']}] distinct per mode: {detail}")
    print("\nraises:")
    for c in cases:
        if c["class"] == "raises":
            detail = {m: (v.get("raised") or "ok")[:90] for m, v in c["modes"].items()}
            print(f"  {c.get('backend', '')} {c['op']} [{c['pass']}] {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
