"""Why each inventory branch has no sweep evidence yet, and which sweep units would give it some
(docs/sweep.md, "Branches without evidence").

A branch has evidence when a GPU case of its op, in its pass, states every fact the branch names and
they hold (kb/verify/sweepbranches.py). For each branch without, the first cause that applies:

  no-case            no sweep of the release has a case of the op at all (no unit calls it)
  budget             every case of the op was `skipped`: the sweep's time budget ran out first
  skipped            every case was `skipped` for another reason (the message is kept)
  error              every case of the op is an `error` (inputs not built, a worker that died)
  no-backward-case   a gradient branch, and no case of the op ran its backward
  dtype-not-swept    a dtype branch, and no case of the op ran that dtype (its group: int, bool,
                     complex, float16, ...)
  fact-not-stated    no case of the op states a fact the branch names (the key)
  value-not-run      cases state the fact, never with the branch's value (key=value)

A branch with a stated reason it cannot run on the device (data/branches/<inventory>.reasons.yaml)
is `unrunnable` and not missing.

    python scripts/branch_inventory.py coverage --missing              # counts by framework, kind, cause
    python scripts/branch_inventory.py coverage --missing --detail F   # one JSON line per missing branch
    python scripts/branch_inventory.py coverage --units pytorch-eager:int,bool,complex
    python scripts/branch_inventory.py coverage --units jax:float16,float64
    python scripts/branch_inventory.py coverage --units jax-branches
    python scripts/branch_gap.py --estimate OUT/sweeps       # what a (dry) run's files would add
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kb.verify import sweepbranches, sweepfile  # noqa: E402

CAUSES = ("no-case", "budget", "skipped", "error", "no-backward-case", "dtype-not-swept", "fact-not-stated",
          "value-not-run")
DTYPE_GROUP = {"int": "int", "bool": "bool", "complex": "complex"}


def inventories(root: Path = Path(ROOT)) -> list[tuple[str, dict, dict, list[dict]]]:
    """(file name, inventory, reasons, GPU sweeps of its release) for each committed inventory."""
    sweeps = [s.data for s in sweepfile.load_sweeps(root) if s.data and s.data.get("device") != "cpu"]
    out = []
    folder = root / "data/branches"
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        inv = sweepbranches.load(folder / name)
        reasons = sweepbranches.load_reasons(sweepbranches.reasons_path(folder / name), inv)
        mine = [d for d in sweeps if d["framework"] == inv["framework"]
                and sweepfile.version_of(d).split("+")[0] == inv["version"]]
        out.append((name, inv, reasons, mine))
    return out


def _group(value: object) -> str:
    return DTYPE_GROUP.get(str(value), str(value))


def cause(b: dict, evidence: list[tuple[dict, dict]], every: list[tuple[dict, dict]]) -> tuple[str, str]:
    """(cause, detail) for a branch with no evidence: the first of CAUSES that applies."""
    if not every:
        return "no-case", ""
    if not evidence:
        classes = Counter(c["class"] for c, _ in every)
        if classes.get("skipped") and "error" not in classes:
            why = [str(c.get("skipped") or "") for c, _ in every]
            if all("budget" in w for w in why):
                return "budget", ""
            return "skipped", next(w for w in why if "budget" not in w)[:120]
        if "skipped" in classes and any("budget" in str(c.get("skipped")) for c, _ in every):
            return "budget", "some cases errored"
        return "error", next((str(c.get("error") or "")[:120] for c, _ in every if c["class"] == "error"), "")
    in_pass = [(c, call) for c, call in evidence if sweepfile.passes(b["pass"], c.get("pass", ""))]
    if not in_pass:
        return "no-backward-case", ""
    when = b.get("when", {})
    if b["kind"] == "dtype" and "input.dtype" in when:
        return "dtype-not-swept", _group(when["input.dtype"])
    for key in when:
        if not any(key in call or (key == "input.layout") for _, call in in_pass):
            return "fact-not-stated", key
    for key, value in when.items():
        if not any(sweepbranches.states({key: value}, call) for _, call in in_pass):
            return "value-not-run", f"{key}={value}"
    return "value-not-run", "facts hold one by one, never together"


def missing(inv: dict, reasons: dict, sweeps: list[dict], root: Path = Path(ROOT)) -> list[dict]:
    """One row per branch without evidence (and without a stated reason)."""
    evidence = sweepbranches.Cases(inv["framework"], sweeps, root)
    every = sweepbranches.Cases(inv["framework"], sweeps, root, classes=tuple(sweepfile.CLASSES))
    rows = []
    for op in inv["ops"]:
        ev, all_cases = evidence.cases_for(op), every.cases_for(op)
        for b in op["branches"]:
            key = f"{op['op']}|{op.get('catalog')}|{b['id']}"
            if key in reasons or sweepbranches.ran(b, ev):
                continue
            why, detail = cause(b, ev, all_cases)
            rows.append({"op": op["op"], "catalog": op.get("catalog"), "id": b["id"], "kind": b["kind"], "pass": b["pass"],
                         "when": b.get("when", {}), "cause": why, "detail": detail})
    return rows


def report(detail: str | None = None) -> int:
    """Counts of the branches without evidence by kind and cause (and the stated reasons by reason)."""
    lines = []
    for name, inv, reasons, sweeps in inventories():
        rows = missing(inv, reasons, sweeps)
        print(f"{name}: {len(rows)} branches without evidence, {len(reasons)} with a stated reason they cannot run")
        by_reason = Counter(r for r, _ in reasons.values())
        for r, n in sorted(by_reason.items()):
            print(f"  unrunnable {r:22} {n:5}")
        by = Counter((r["kind"], r["cause"], r["detail"] if r["cause"] in ("dtype-not-swept", "fact-not-stated") else "")
                     for r in rows)
        for (kind, why, det), n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {kind:14} {why:17} {det:24} {n:5}")
        lines += [json.dumps(dict(r, inventory=name), sort_keys=True) for r in rows]
    if detail:
        Path(detail).write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {detail}: {len(lines)} rows")
    return 0


def units(spec: str, targets: list | None = None) -> list[str]:
    """Catalog units whose run would give missing branches evidence.

    pytorch-eager:G1,G2  op_db / module_db units with a dtype branch of group G (int, bool, complex,
                         float16, float64, bfloat16, float32) and no case in it (or cut by the budget)
    jax:G1,G2            JAX catalog functions likewise (float16, float64 ...); the word `backward` adds those with a
                         gradient branch and no backward case (no-backward-case)
    jax-branches         JAX branch units (name|b:variant) with a branch that has no evidence
    pytorch-eager:errors op_db / module_db units with a branch whose every case errored or was cut by the budget
                         after some errored (inputs the harness could not build then: run again once it can), or
                         whose dtype branch in float32 has no case (a unit whose worker died)
    """
    suite, _, groups = spec.partition(":")
    want = {g for g in groups.split(",") if g}
    framework = "jax" if suite.startswith("jax") else "pytorch"
    out: dict[str, None] = {}
    for _, inv, reasons, sweeps in inventories():
        if inv["framework"] != framework:
            continue
        for r in missing(inv, reasons, sweeps):
            cat = r["catalog"]
            if not cat:
                continue
            if suite == "jax-branches":
                if "|b:" in cat and r["cause"] != "skipped":
                    out[cat] = None
                    if targets is not None:
                        targets.append(r)
                continue
            if "backward" in want and framework == "jax" and "|b:" not in cat and r["cause"] == "no-backward-case":
                out[cat.split("|")[0]] = None
                if targets is not None:
                    targets.append(r)
                continue
            if "errors" in want and "|b:" not in cat and not cat.startswith("branch:") and (
                    r["cause"] == "error" or (r["cause"] == "budget" and r["detail"] == "some cases errored")
                    or (r["cause"] == "dtype-not-swept" and r["detail"] == "float32")):
                out[cat] = None
                if targets is not None:
                    targets.append(r)
                continue
            if "|b:" in cat or r["kind"] != "dtype" or _group(r["when"].get("input.dtype")) not in want:
                continue
            # a unit skipped only for its dtypes (op_db's bitwise ops have no float32) runs in the others
            by_dtype = r["cause"] == "skipped" and r["detail"].startswith(("no float32", "none of"))
            if r["cause"] in ("dtype-not-swept", "budget", "no-case") or by_dtype:
                out[cat.split("|")[0] if framework == "jax" else cat] = None
                if targets is not None:
                    targets.append(r)
    return list(out)


def estimate(folder: str) -> int:
    """How many branches without evidence the sweep files under `folder` would give evidence to, read as
    if they were GPU files of the inventory's release (a CPU dry run of the GPU scripts: an estimate)."""
    extra = [s.data for s in sweepfile.load_sweeps(Path(ROOT), Path(folder)) if s.data]
    for name, inv, reasons, sweeps in inventories():
        mine = [d for d in extra if d["framework"] == inv["framework"]]
        before = {(r["op"], r["catalog"], r["id"]) for r in missing(inv, reasons, sweeps)}
        after = {(r["op"], r["catalog"], r["id"]) for r in missing(inv, reasons, sweeps + mine)}
        gained = Counter(r[2].split("|")[1] for r in before - after)
        print(f"{name}: {len(before - after)} of {len(before)} branches without evidence would have some from "
              f"{len(mine)} file(s) under {folder}: {dict(sorted(gained.items()))}")
    return 0


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missing", action="store_true")
    ap.add_argument("--detail", metavar="FILE", help="with --missing: one JSON line per branch without evidence")
    ap.add_argument("--units", metavar="SPEC", help="print the units to sweep, one a line (see units())")
    ap.add_argument("--estimate", metavar="DIR", help="the branches the sweep files under DIR would give evidence to")
    args = ap.parse_args(argv)
    if args.estimate:
        return estimate(args.estimate)
    if args.units:
        targets: list[dict] = []
        found = units(args.units, targets)
        for u in found:
            print(u)
        print(f"{args.units}: {len(found)} units for {len(targets)} branches without evidence", file=sys.stderr)
        return 0
    return report(args.detail)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
