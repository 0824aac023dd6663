"""Cross-check the static candidates against the GPU sweep's evidence (issue 26 item 2).

Reads ``data/static/pytorch-cuda-atomics.yaml`` (ATen CUDA kernels that add floats with atomics
or scan/reduce them through CUB, curated from the code) and the sweep's evidence files
(``data/sweeps/<env-id>/*-pytorch-eager.json``), and says for each kernel:

- ``confirmed``: some sweep case of an op that reaches it differed (class ``fixed``,
  ``raises`` or ``silent``);
- ``refuted``: the sweep ran such cases and every one was ``same``;
- ``not-covered``: no sweep case of its ops (``error`` and ``skipped`` cases do not count).

A refutation is only as good as the cases: where a kernel has a ``condition`` no call fact
decides (overlapping pooling windows), the report repeats it so a reader can check that the
cases met it. It also says whether what the sweep saw agrees with the static guard: a guarded kernel should
show ``fixed`` or ``raises`` and never ``silent``; an unguarded one is confirmed as a source the
switch does not cover when it shows ``silent``.

A case speaks for a kernel when its ``op`` is one of the kernel's ops (``torch.X`` and
``torch.Tensor.X`` are the same op, and so are ``X`` and ``X_``) and its ``pass`` is the kernel's,
or it is one of the kernel's ``backward_ops`` (ops that reach it in their backward) in pass
``backward``,
and its call facts (``call``) do not contradict the kernel's ``when`` pattern (the semantics of a
record's ``calls: when:``, docs/calls.md: a fact the case does not record leaves it undecided,
and an undecided case still counts). A case's catalog variant (``variant``, op_db's
variant_test_name) is one more fact, named ``variant``. Keys listed in an entry's ``require``
must be recorded by the case (for a kernel only an optional argument reaches: scatter's
``reduce``). A case of the branch sweep records what it reached (``reached.autograd``, the autograd
nodes): a case whose nodes include one of an entry's ``not_reached`` took another branch and does not
count (grid_sample's cuDNN branch, CudnnGridSamplerBackward0, never reaches grid_sampler_2d_backward).

Standard library, PyYAML and the KB's own dtype kinds (kb.verify.sweepfile)::

    python scripts/static_cross_check.py [--static FILE] [--sweep PATH ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from collections import Counter

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from kb.verify import sweepbranches  # noqa: E402
from kb.verify.sweepfile import dtype_kind  # noqa: E402  (the KB's own dtype kinds, docs/calls.md)
DEFAULT_STATIC = os.path.join(ROOT, "data", "static", "pytorch-cuda-atomics.yaml")
SWEEP_SUFFIXES = ("-pytorch-eager.json", "-pytorch-branches.json")  # eager kernels: op_db's samples and the branch units
DEFAULT_SWEEP_GLOB = os.path.join(ROOT, "data", "sweeps", "*", "*-pytorch-*.json")

DIFFERS = ("fixed", "raises", "silent")
COUNTED = ("same",) + DIFFERS
CLASSES = COUNTED + ("error", "skipped")
REQUIRED = ("kernel", "file", "mechanism", "guarded", "ops", "pass")


def op_key(name: str) -> str:
    """One spelling per op (kb.verify.sweepbranches.op_key): ``torch.Tensor.X`` -> ``torch.X``; in-place ``X_`` -> ``X``."""
    return sweepbranches.op_key(name.strip())


def load_static(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        entries = yaml.safe_load(f)
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a list of entries")
    for i, e in enumerate(entries):
        missing = [k for k in REQUIRED if k not in e]
        if missing:
            raise ValueError(f"{path}: entry {i} ({e.get('kernel')!r}) lacks {', '.join(missing)}")
        if not isinstance(e["ops"], list) or not e["ops"]:
            raise ValueError(f"{path}: entry {i} ({e['kernel']!r}) has no ops")
        if e["pass"] not in ("forward", "backward"):
            raise ValueError(f"{path}: entry {i} ({e['kernel']!r}): pass must be forward or backward")
    return entries


def load_cases(paths: list[str]) -> list[dict]:
    """Every case of every sweep file, tagged with the file and its environment folder."""
    cases = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        items = doc.get("cases", []) if isinstance(doc, dict) else doc
        env = os.path.basename(os.path.dirname(os.path.abspath(path)))
        for c in items:
            if not isinstance(c, dict) or "op" not in c or "class" not in c:
                raise ValueError(f"{path}: a case lacks op or class: {c!r}")
            if c["class"] not in CLASSES:
                raise ValueError(f"{path}: unknown class {c['class']!r} (op {c['op']})")
            cases.append({**c, "_file": path, "_env": env})
    return cases




def _norm(key: str, value):
    """A recorded fact in the vocabulary of a `when` pattern: a tensor argument (the sweep writes
    ``{"tensor": shape, "dtype": name}``) and ``input.dtype`` become their dtype kind."""
    if isinstance(value, dict) and "dtype" in value:
        return dtype_kind(str(value["dtype"])) or value["dtype"]
    if key == "input.dtype" and isinstance(value, str):
        return dtype_kind(value) or value.lower()
    return value.lower() if isinstance(value, str) else value


def contradicts(when: dict | None, call: dict | None) -> bool:
    """True when a fact the case recorded is outside the kernel's pattern for that key."""
    if not when or not call:
        return False
    for key, allowed in when.items():
        if key in call and _norm(key, call[key]) not in [_norm(key, v) for v in allowed]:
            return True
    return False


def case_facts(case: dict) -> dict:
    """The call facts a case recorded, plus its catalog variant (op_db's variant_test_name,
    e.g. interpolate's 'bilinear' or pad's 'reflect') as the fact ``variant`` when it has one."""
    facts = dict(case.get("call") or case.get("facts") or {})
    if case.get("variant"):
        facts.setdefault("variant", case["variant"])
    return facts


def _token(kernel: str) -> str:
    """The kernel's own name, as a profiler prints it: `atomicadaptivemaxgradinput`, `DeviceScan`, `DeviceSegmentedReduce`."""
    first = kernel.split()[0]
    return first.split("::")[1] if first.startswith("cub::") and "::" in first else first.split("::")[-1]


def settling_case(entry: dict, matched: list[dict], outcome: str) -> dict | None:
    """The case that settles a kernel: for a confirmed one a case that differed, for a refuted one a case
    that did not; a case that recorded the kernels it reached (the branch sweep's `reached`) and names
    this kernel is preferred, and its kernel names are given."""
    want = DIFFERS if outcome == "confirmed" else ("same",) if outcome == "refuted" else ()
    pool = [c for c in matched if c["class"] in want]
    if not pool:
        return None
    token = _token(entry["kernel"]).lower()

    def hits(c):
        return [k for k in (c.get("reached") or {}).get("kernels", []) if token in k.lower()]
    best = sorted(pool, key=lambda c: (not hits(c), not c.get("reached"), c["_file"]))[0]
    return {"case": best.get("case", best["op"]), "file": os.path.basename(best["_file"]), "env": best["_env"], "class": best["class"],
            "reached": hits(best)[:2], "addends": (best.get("call") or {}).get("inputs.addends")}


def check(entries: list[dict], cases: list[dict]) -> dict:
    by_op: dict[str, list[dict]] = {}
    for c in cases:
        by_op.setdefault(op_key(c["op"]), []).append(c)
    results = []
    for e in entries:
        # (op, pass) pairs: `ops` reach the kernel in the kernel's own pass; `backward_ops`
        # reach it in their backward (index_select's backward is index_add_).
        wanted = {(op_key(o), e["pass"]) for o in e["ops"]}
        wanted |= {(op_key(o), "backward") for o in e.get("backward_ops", ())}
        matched = [
            c for k, pass_ in sorted(wanted) for c in by_op.get(k, [])
            if c.get("pass", pass_) == pass_
            and not contradicts(e.get("when"), case_facts(c))
            and all(f in case_facts(c) for f in e.get("require", ()))
            # a case that recorded reaching another branch (the autograd node of cuDNN's grid sampler) is not this kernel's
            and not set(e.get("not_reached", ())) & set((c.get("reached") or {}).get("autograd", ()))
        ]
        seen = Counter(c["class"] for c in matched)
        counted = sum(seen[k] for k in COUNTED)
        if counted == 0:
            outcome = "not-covered"
        elif any(seen[k] for k in DIFFERS):
            outcome = "confirmed"
        else:
            outcome = "refuted"
        settled = settling_case(e, matched, outcome)
        agrees = None
        if outcome == "confirmed":
            agrees = (not seen["silent"]) if e["guarded"] else bool(seen["silent"])
        results.append({
            "kernel": e["kernel"],
            "file": e["file"],
            "guarded": bool(e["guarded"]),
            "mechanism": e["mechanism"],
            "pass": e["pass"],
            "ops": e["ops"],
            "backward_ops": e.get("backward_ops", []),
            "condition": e.get("condition"),
            "outcome": outcome,
            "classes": {k: seen[k] for k in CLASSES if seen[k]},
            "cases": len(matched),
            "silent_ops": sorted({c["op"] for c in matched if c["class"] == "silent"}),
            "agrees_with_guard": agrees,
            "envs": sorted({c["_env"] for c in matched}),
            "settled_by": settled,
        })
    counts: dict = {"kernels": len(results)}
    for group, pick in (("candidates", False), ("guarded", True)):
        sub = [r for r in results if r["guarded"] is pick]
        counts[group] = {"total": len(sub), **Counter(r["outcome"] for r in sub)}
        for o in ("confirmed", "refuted", "not-covered"):
            counts[group].setdefault(o, 0)
    counts["disagree_with_guard"] = sum(1 for r in results if r["agrees_with_guard"] is False)
    return {"counts": counts, "results": results}


def render(report: dict, sweep_files: list[str]) -> str:
    lines = [f"sweep files: {len(sweep_files)}"]
    for r in report["results"]:
        tag = "guarded  " if r["guarded"] else "candidate"
        cls = ", ".join(f"{k}={v}" for k, v in r["classes"].items()) or "-"
        flag = "" if r["agrees_with_guard"] is not False else "  (disagrees with the static guard)"
        lines.append(f"{r['outcome']:<12} {tag} {r['kernel']} [{cls}]{flag}")
        if not r["guarded"] and r["settled_by"]:
            sb = r["settled_by"]
            lines.append(f"{'':<12} {'':<9} settled by {sb['case']} ({sb['class']}, {sb['file']})"
                         + (f", reached {'; '.join(k[:90] for k in sb['reached'])}" if sb["reached"] else ", no kernel name recorded"))
        if r["outcome"] == "refuted" and r["condition"]:
            # a condition no call fact decides (overlapping windows, 1-D shape): the cases that
            # ran may not have taken the kernel's path, so a refutation needs a reader's check
            lines.append(f"{'':<12} {'':<9} only if the cases met: {r['condition']}")
    c = report["counts"]
    for group in ("candidates", "guarded"):
        g = c[group]
        lines.append(f"{group}: {g['total']} (confirmed {g['confirmed']}, refuted {g['refuted']}, "
                     f"not covered {g['not-covered']})")
    lines.append(f"disagreeing with the static guard: {c['disagree_with_guard']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--static", default=DEFAULT_STATIC, help="curated candidates (YAML)")
    ap.add_argument("--sweep", nargs="*", default=None,
                    help="sweep evidence files or folders (default: data/sweeps/*/*-pytorch-eager.json and *-pytorch-branches.json)")
    ap.add_argument("--out", help="write the report as JSON here")
    args = ap.parse_args(argv)

    if args.sweep is None:
        files = sorted(f for f in glob.glob(DEFAULT_SWEEP_GLOB) if f.endswith(SWEEP_SUFFIXES))
    else:
        files = []
        for p in args.sweep:
            if os.path.isdir(p):
                files += sorted(f for f in glob.glob(os.path.join(p, "**", "*-pytorch-*.json"), recursive=True)
                                if f.endswith(SWEEP_SUFFIXES))
            else:
                files.append(p)
    report = check(load_static(args.static), load_cases(files))
    report["sweep_files"] = [os.path.relpath(f, ROOT) if f.startswith(ROOT) else f for f in files]
    report["static"] = os.path.relpath(args.static, ROOT) if args.static.startswith(ROOT) else args.static
    print(render(report, files))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
