"""The run file's results, built from the sweep's launches (verifiers/collectives/aggregate.py).

One result per NCCL collective (framework nccl, keyed by NCCL's version: the records of NCCL
answer by its version), the same measurement again per torch.distributed call (framework
pytorch, keyed by torch's version; its modes point at the NCCL result's cases), one per
framework case (DDP, FSDP2, the mixture-of-experts combine) and one per JAX collective.
"""

from __future__ import annotations

from verifiers.collectives import aggregate
from verifiers.collectives.table import (
    COLLECTIVES, FRAMEWORK_CASES, FRAMEWORK_SETTINGS, JAX_SETTINGS, NCCL_NAMES, REDUCING, SETTINGS, TORCH_NAMES,
)

VERIFIER = "nccl.collectives"
SOURCES = {
    "nccl": {True: "nccl.allreduce-order", False: "nccl.copy-collectives"},
    "pytorch": {True: "torch.distributed-reduction-order", False: "torch.distributed-copy"},
    "jax": {True: "jax.collective-reduction-order", False: "jax.collective-copy"},
}
TWO_RANKS = ("2 ranks reduce the same four virtual ranks' values, each first adding two of them locally; "
             "a + b == b + a, so their own settings cannot change the bits, but the local sums do against 4 ranks")
JAX_REDUCING = ("psum", "psum_scatter")


def _modes(settings, merged: dict, cases: list[str], default: str, timing: str | None, ranks_of=None) -> list[dict]:
    out = []
    for name, world, env, codes in settings:
        got = merged.get(name)
        if got is None:
            continue
        reference = merged.get(default, {}).get("cases", {})
        rows = [aggregate.case_row(case, got["cases"][case], reference.get(case), world)
                for case in cases if case in got["cases"]]
        if not rows:
            continue  # a setting that ran none of these cases (2 ranks: the copying collectives are not run)
        out.append(aggregate.mode(name, codes, env, world, rows, got["launches"], got.get("groups", got["launches"]), timing))
    return out


def collective_results(merged: dict, versions: dict, sizes, dtypes) -> list[dict]:
    results = []
    for collective in COLLECTIVES:
        cases = [f"{collective}:{d}:{s}" for d in dtypes for s in sizes]
        timing = f"{collective}:float32:{max(sizes)}"
        modes = _modes(SETTINGS, merged, cases, "default", timing)
        if not modes:
            continue
        reduces = collective in REDUCING
        runs = next((m["runs"] for m in modes if m["mode"] == "default"), 0)
        base = {"verifier": VERIFIER, "device": "gpu" if versions.get("nccl") else "cpu", "n": runs, "ranks": 4,
                "cross_mode_distinct": aggregate.cross_distinct(modes), "reduces": reduces,
                "summary": summarize(modes)}
        if not reduces:
            base["limits"] = "copies values without arithmetic: no order of additions to change"
        results.append({"source": SOURCES["nccl"][reduces], **base, "framework": "nccl",
                        "version": versions.get("nccl") or "n/a", "torch": versions.get("pytorch"),
                        "op": NCCL_NAMES[collective], "call": None, "modes": modes})
        slim = [{k: v for k, v in m.items() if k != "cases"} | {"cases_in": NCCL_NAMES[collective]} for m in modes]
        results.append({"source": SOURCES["pytorch"][reduces], **base, "verifier": "torch.collectives", "framework": "pytorch",
                        "version": versions.get("pytorch") or "n/a", "nccl": versions.get("nccl"),
                        "op": TORCH_NAMES[collective], "call": None, "modes": slim})
    return results


def _moe_modes(merged: dict) -> list[dict]:
    """The combine by default and under PT_DET (torch.use_deterministic_algorithms) in the default
    launches; then PT_DET under each other setting, against PT_DET by default."""
    out: list[dict] = []
    default = merged.get("default")
    if default is None:
        return out
    for name, world, env, _ in FRAMEWORK_SETTINGS:
        got = merged.get(name)
        if got is None:
            continue
        pairs = (("moe", "default", ()), ("moe:PT_DET", "PT_DET", ("PT_DET",))) if name == "default" else (
            ("moe:PT_DET", f"PT_DET, {name}", ("PT_DET",)),)
        for case, label, codes in pairs:
            if case not in got["cases"]:
                continue
            reference = default["cases"].get(case if name != "default" else "moe")
            row = aggregate.case_row(case, got["cases"][case], reference, world)
            out.append(aggregate.mode(label, codes, env, world, [row], got["launches"], got.get("groups", got["launches"]), case))
    return out


def framework_results(merged: dict, versions: dict) -> list[dict]:
    results = []
    default_cases = merged.get("default", {}).get("cases", {})
    for case in FRAMEWORK_CASES:
        name = case["name"]
        if name == "moe":
            modes, source = _moe_modes(merged), "torch.index-add"
        else:
            modes, source = _modes(FRAMEWORK_SETTINGS, merged, [name], "default", name), SOURCES["pytorch"][True]
        if not modes:
            continue
        result = {"source": source, "verifier": f"torch.{name.split('-')[0]}_collectives", "framework": "pytorch",
                  "version": versions.get("pytorch") or "n/a", "nccl": versions.get("nccl"),
                  "device": "gpu" if versions.get("nccl") else "cpu", "op": case["op"], "call": dict(case["call"]),
                  "n": next((m["runs"] for m in modes if m["mode"] == "default"), 0), "ranks": 4,
                  "cross_mode_distinct": aggregate.cross_distinct(modes),
                  "modes": modes, "summary": summarize(modes)}
        first = FRAMEWORK_CASES[0]["name"]
        if name.startswith("ddp") and name != first and default_cases.get(name) and default_cases.get(first):
            mine, ref = default_cases[name], default_cases[first]
            result["same_bits_as_call"] = {
                "call": dict(FRAMEWORK_CASES[0]["call"]),
                "same": mine["outcome"] == "ok" and ref["outcome"] == "ok" and len(set(mine["prints"])) == 1
                and set(mine["prints"]) == set(ref["prints"])}
        results.append(result)
    return results


def jax_results(merged: dict, versions: dict, dtypes) -> list[dict]:
    from verifiers.collectives.table import JAX_OPS, JAX_SIZES

    results = []
    settings = [(n, 1, e, c) for n, e, c in JAX_SETTINGS]
    for op in JAX_OPS:
        cases = [f"{op}:{d}:{s}" for d in dtypes for s in JAX_SIZES]
        modes = _modes(settings, merged, cases, "default", f"{op}:float32:{max(JAX_SIZES)}")
        if not modes:
            continue
        for m in modes:
            m["ranks"] = merged.get(m["mode"], {}).get("devices")
        reduces = op in JAX_REDUCING
        results.append({"source": SOURCES["jax"][reduces], "verifier": "jax.collectives", "framework": "jax",
                        "version": versions.get("jax") or "n/a", "nccl": versions.get("nccl"),
                        "device": "gpu" if versions.get("nccl") else "cpu", "op": f"jax.lax.{op}", "call": None,
                        "n": next((m["runs"] for m in modes if m["mode"] == "default"), 0),
                        "ranks": merged.get("default", {}).get("devices"),
                        "cross_mode_distinct": _jax_cross(modes),
                        "reduces": reduces, "modes": modes, "summary": summarize(modes)})
    return results


def _jax_cross(modes: list[dict]) -> int | None:
    per_case: dict[str, set] = {}
    for m in modes:
        if m["outcome"] != "ok":
            continue
        for row in m["cases"]:
            if row["outcome"] == "ok" and row.get("distinct") == 1:
                per_case.setdefault(row["case"], set()).add(row["bits"])
    return max((len(v) for v in per_case.values()), default=None)


def summarize(modes: list[dict]) -> dict:
    """The two answers in short: which settings repeated run to run, which gave other bits than the
    defaults, and which failed (with the error)."""
    return {
        "repeats_run_to_run": {m["mode"]: m["distinct"] == 1 for m in modes if m["outcome"] == "ok"},
        "same_as_default": {m["mode"]: m.get("same_as_default") for m in modes if m["outcome"] == "ok" and m["mode"] != "default"},
        "failed": {m["mode"]: m.get("message") for m in modes if m["outcome"] != "ok"},
    }
