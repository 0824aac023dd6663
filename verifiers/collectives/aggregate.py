"""From launches to a run file's results: run to run per setting, and each setting against the defaults.

Two questions, kept apart in every result:
- `distinct` (per mode, and per case in `cases`): how many different results one setting gave
  over all its launches and calls (1: every repeat gave the same bits);
- `same_as_default` (per mode and case): whether that setting's bits equal those of the
  defaults at 4 ranks (the defaults being themselves repeatable); `cross_mode_distinct` counts
  the different results over every setting that ran.
A setting that NCCL refused is `raised` with NCCL's message; a launch that died or hung is `error`.
"""

from __future__ import annotations

import statistics
from collections import Counter

from verifiers.collectives import bits
from verifiers.collectives.table import REDUCING

PIECES = ("reduce_scatter", "all_to_all", "moe")
ROOT = ("reduce",)
BUS = {"all_reduce": lambda n: 2 * (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
       "all_gather": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n, "reduce": lambda n: 1.0}
ITEM = {"float32": 4, "bfloat16": 2}


def _kind(case: str) -> str:
    return case.split(":")[0].split("-")[0]


def launch_cases(launch: dict) -> dict[str, dict]:
    """Per case of one launch: the whole result's fingerprint per call, rank agreement, times,
    rank 0's sample, or why there is none."""
    by_case: dict[str, dict[int, dict]] = {}
    crashed = [line for line in launch["lines"] if line.get("event") == "crash"]
    for line in launch["lines"]:
        if "case" in line:
            by_case.setdefault(line["case"], {})[line["rank"]] = line
    out = {}
    for case, ranks in by_case.items():
        errors = [r.get("error") for r in ranks.values() if r.get("error")]
        skipped = [r.get("skipped") for r in ranks.values() if r.get("skipped")]
        if errors:
            out[case] = {"outcome": "raised", "message": errors[0]}
            continue
        if skipped:
            out[case] = {"outcome": "skipped", "message": skipped[0]}
            continue
        if len(ranks) < launch["world"] or 0 not in ranks:  # a rank died or the launch was killed
            out[case] = {"outcome": "error", "message": _why_missing(launch, crashed)}
            continue
        kind = _kind(case)
        first = ranks[0]
        calls = len(first["prints"])
        agree = None
        if kind in PIECES and launch["world"] > 1 and len(ranks) == launch["world"]:
            prints = [bits.text(bits.combine([_parse(ranks[r]["prints"][i]) for r in ranks])) for i in range(calls)]
        else:
            prints = list(first["prints"])
            if kind not in ROOT and kind not in PIECES and len(ranks) > 1:
                agree = all(ranks[r]["prints"] == first["prints"] for r in ranks)
        out[case] = {"outcome": "ok", "prints": prints, "agree": agree, "times": first.get("times") or [],
                     "sample": first.get("sample")}
    return out


def _parse(text: str) -> tuple[int, int]:
    return int(text[:16], 16), int(text[16:], 16)


def _why_missing(launch: dict, crashed: list) -> str:
    if crashed:
        return f"rank {crashed[0]['rank']} crashed: {crashed[0]['error']}"
    if launch["timed_out"]:
        return f"the launch was killed at its deadline ({launch['wall_s']} s) before this case finished"
    codes = launch["exitcodes"]
    tail = next(iter(launch.get("stderr", {}).values()), "")
    return f"the launch ended (exit codes {codes}) before this case finished" + (f": {tail}" if tail else "")


RANK = {"skipped": 0, "error": 1, "raised": 2}
"""Which failure a case keeps when its process groups failed differently: NCCL's own refusal
(raised) over a dead launch (error) over "not tried after the refusal" (skipped)."""


def by_group(launch: dict) -> list[dict]:
    """A launch of several fresh process groups, as one launch per group (a crash counts for each)."""
    count = launch.get("groups") or 1
    if count == 1:
        return [launch]
    out = []
    for group in range(count):
        lines = [line for line in launch["lines"] if line.get("group", 0) == group or line.get("event") == "crash"]
        out.append({**launch, "lines": lines, "trace": launch.get("trace", []) if group == 0 else []})
    return out


def per_setting(launches: list[dict]) -> dict[str, dict]:
    """Every launch (every process group of it) of one setting, merged per case; `launches`
    counts the process groups whose case ran."""
    merged: dict[str, dict] = {}
    for launch in (part for whole in launches for part in by_group(whole)):
        traced = {(f, b): (a, p, c) for f, b, a, p, c in launch.get("trace", [])}
        for case, got in launch_cases(launch).items():
            entry = merged.setdefault(case, {"prints": [], "groups": 0, "times": [], "agree": None, "sample": None,
                                             "outcome": None, "message": None, "chosen": None})
            if got["outcome"] != "ok":
                if entry["outcome"] != "ok" and RANK[got["outcome"]] > RANK.get(entry["outcome"], -1):
                    entry["outcome"], entry["message"] = got["outcome"], got["message"]
                elif entry["outcome"] == "ok":
                    entry["message"] = entry["message"] or got["message"]
                continue
            entry["outcome"] = "ok"
            entry["prints"].extend(got["prints"])
            entry["groups"] += 1
            entry["times"].extend(got["times"])
            if got["agree"] is not None:
                entry["agree"] = got["agree"] if entry["agree"] is None else entry["agree"] and got["agree"]
            if entry["sample"] is None:
                entry["sample"] = got["sample"]
            key = _trace_key(case, launch["world"])
            if key in traced and entry["chosen"] is None:
                algo, proto, channels = traced[key]
                entry["chosen"] = f"{algo}/{proto}/{channels}ch"
    refusals = {case.split(":")[0]: e["message"] for case, e in merged.items() if e["outcome"] == "raised"}
    for case, entry in merged.items():
        if entry["outcome"] == "skipped" and case.split(":")[0] in refusals:
            entry["outcome"] = "raised"
            entry["message"] = f"not tried after NCCL refused this collective in the same setting: {refusals[case.split(':')[0]]}"
    return merged


FUNCS = {"all_reduce": "AllReduce", "reduce_scatter": "ReduceScatter", "all_gather": "AllGather", "reduce": "Reduce"}


def _trace_key(case: str, world: int):
    parts = case.split(":")
    if len(parts) != 3 or parts[0] not in FUNCS:
        return None
    coll, dtype, size = parts[0], parts[1], int(parts[2])
    count = size // world if coll in ("reduce_scatter", "all_gather") else size
    return FUNCS[coll], count * ITEM[dtype]


def case_row(case: str, entry: dict, reference: dict | None, world: int) -> dict:
    """One case of one setting, for a mode's `cases`."""
    parts = case.split(":")
    row = {"case": case, "outcome": entry["outcome"], "groups": entry["groups"], "runs": len(entry["prints"])}
    if entry["outcome"] != "ok":
        row["message"] = entry["message"]
        return row
    counts = Counter(entry["prints"])
    row["distinct"] = len(counts)
    row["bits"] = counts.most_common(1)[0][0]
    if entry["agree"] is not None:
        row["ranks_agree"] = entry["agree"]
    if reference is not None and reference.get("outcome") == "ok" and reference["prints"]:
        ref_counts = Counter(reference["prints"])
        # Comparable only where both repeat; otherwise None (the run-to-run answer says why).
        row["same_as_default"] = set(counts) == set(ref_counts) if len(ref_counts) == 1 and len(counts) == 1 else None
        dtype = parts[1] if len(parts) == 3 else "float32"
        diff = bits.compare(reference.get("sample"), entry.get("sample"), dtype)
        if diff is not None and not row["same_as_default"]:
            row["sample_diff"] = diff
    if entry["times"]:
        median = statistics.median(entry["times"])
        row["median_s"] = round(median, 7)
        if len(parts) == 3 and parts[0] in BUS and parts[2].isdigit() and median > 0:
            size = int(parts[2]) * ITEM.get(parts[1], 4)
            row["busbw_gbs"] = round(size / median * BUS[parts[0]](world) / 1e9, 2)
    if entry["chosen"]:
        row["nccl_chose"] = entry["chosen"]
    return row


def mode(name: str, codes: tuple, env: dict, world: int, rows: list[dict], launches: int, groups: int,
         timing_case: str | None) -> dict:
    """A mode of a result: the merge reads mode, solutions, outcome, distinct, median_s, message.
    `launches` counts fresh sets of processes, `groups` the fresh process groups in them."""
    ok = [r for r in rows if r["outcome"] == "ok"]
    failed = [r for r in rows if r["outcome"] in ("raised", "error")]
    entry = {"mode": name, "solutions": list(codes), "env": dict(env), "ranks": world, "launches": launches,
             "groups": groups}
    if not ok:
        first = failed[0] if failed else (rows[0] if rows else {"outcome": "error", "message": "not run"})
        entry.update({"outcome": first["outcome"] if first["outcome"] != "skipped" else "error", "distinct": None,
                      "max_abs_diff": None, "max_ulp_diff": None, "median_s": None, "message": first.get("message")})
    else:
        diffs = [r["sample_diff"] for r in ok if r.get("sample_diff")]
        timed = next((r for r in ok if r["case"] == timing_case), None) or ok[-1]
        sames = [r.get("same_as_default") for r in ok]
        entry.update({
            "outcome": "ok", "distinct": max(r["distinct"] for r in ok),
            "max_abs_diff": max((d["max_abs_diff"] for d in diffs), default=0.0),
            "max_ulp_diff": max((d["max_ulp_diff"] for d in diffs), default=0),
            "median_s": timed.get("median_s"), "timed_case": timed["case"],
            "message": ("; ".join(f"{r['case']}: {r.get('message')}" for r in failed[:3]) or None),
            "same_as_default": None if any(s is None for s in sames) else all(sames),
            "cases_same_as_default": sum(1 for s in sames if s is True),
            "cases_differ_from_default": sum(1 for s in sames if s is False),
        })
    entry["runs"] = max((r["runs"] for r in ok), default=0)
    entry["cases"] = rows
    return entry


def cross_distinct(modes: list[dict], world: int = 4) -> int | None:
    """Most different results any one case gave over the settings at `world` ranks that ran."""
    per_case: dict[str, set] = {}
    for m in modes:
        if m.get("ranks") != world or m["outcome"] != "ok":
            continue
        for row in m["cases"]:
            if row["outcome"] == "ok" and row.get("distinct") == 1:
                per_case.setdefault(row["case"], set()).add(row["bits"])
    return max((len(v) for v in per_case.values()), default=None)


def reducing(collective: str) -> bool:
    return collective in REDUCING
