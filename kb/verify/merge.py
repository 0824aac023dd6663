"""Merge run files into the compiled index, and find runs that contradict their records.

`kb build` calls `merged_runs(catalog)`: per source record, the newest evidence per
environment (a run file's results, linked by `source`, or for an unlinked result by the
verifier a record names), each with the release key of the version it was measured on so
that `kb.status` shows it only for that version and device. A contradiction (the run
differs under a solution; shows nothing where the record claims non-determinism; differs
where the record says deterministic; does not raise where the record says the solution
raises) is never turned into the record's answer: it is listed under `flagged` in the
index (for the docs' verification page) and reported by `kb validate` as KB015, until a
person's note in the record's `verify.reviewed` names the run file; then it is listed under
`reviewed` with that note instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.verify.runfile import RUNS_DIR
from kb.versions import compile_range, release_key

MODE_KEYS = ("mode", "solutions", "outcome", "distinct")
RESULT_KEYS = ("verifier", "framework", "version", "device", "n", "modes")


class RunFile:
    __slots__ = ("path", "rel", "data", "problems")

    def __init__(self, path: Path, rel: str, data: Any, problems: list[tuple[int, str]]) -> None:
        self.path, self.rel, self.data, self.problems = path, rel, data, problems


def _problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["a run file is a mapping with schema_version, created, environment, results"]
    out = []
    if data.get("schema_version") != 1:
        out.append("schema_version: expected 1")
    if not isinstance(data.get("created"), str):
        out.append("created: expected a UTC timestamp string")
    env = data.get("environment")
    if not isinstance(env, dict) or not isinstance(env.get("env_id"), str):
        out.append("environment.env_id: missing")
    results = data.get("results")
    if not isinstance(results, list):
        return out + ["results: expected a list"]
    for i, result in enumerate(results):
        if not isinstance(result, dict) or any(k not in result for k in RESULT_KEYS):
            out.append(f"results.{i}: needs fields {', '.join(RESULT_KEYS)}")
            continue
        if not isinstance(result["modes"], list):
            out.append(f"results.{i}.modes: expected a list")
            continue
        for j, mode in enumerate(result["modes"]):
            if not isinstance(mode, dict) or any(k not in mode for k in MODE_KEYS):
                out.append(f"results.{i}.modes.{j}: needs fields {', '.join(MODE_KEYS)}")
    return out


def load_runs(root: Path) -> list[RunFile]:
    """Every run file under data/runs/, parsed with the project's safe loader."""
    from kb.findings import rel
    from kb.yamlio import YamlError, read

    runs = []
    for path in sorted((root / RUNS_DIR).rglob("*.yaml")):
        if path.parent.name.startswith("static-"):
            continue  # static evidence from released wheels: kb/verify/static/load.py reads it
        try:
            data = read(path).data
        except YamlError as exc:
            runs.append(RunFile(path, rel(path, root), None, [(exc.line, exc.message)]))
            continue
        except OSError as exc:
            runs.append(RunFile(path, rel(path, root), None, [(1, f"cannot read the file: {exc.strerror}")]))
            continue
        runs.append(RunFile(path, rel(path, root), data, [(1, p) for p in _problems(data)]))
    return runs


def runs_of(catalog) -> list[RunFile]:
    cached = catalog.__dict__.get("_runs")
    if cached is None:
        cached = catalog.__dict__["_runs"] = load_runs(catalog.root)
    return cached


def _status_at(record, version: str):
    """The record's range containing `version`, or None."""
    key = release_key(version)
    for item in record.status:
        lo, hi = compile_range(item.versions)
        if (lo is None or lo <= key) and (hi is None or key < hi):
            return item
    return None


def contradictions(record, result: dict) -> list[str]:
    """Why `result` contradicts `record` (empty when it does not, or cannot tell)."""
    if record.device not in ("any", result.get("device")):
        return []
    try:
        item = _status_at(record, str(result["version"]))
    except ValueError:
        return []
    if item is None:
        return []
    reasons = []
    n = result.get("n")
    across = result.get("cross_mode_distinct")
    for mode in result["modes"]:
        codes = mode.get("solutions") or []
        distinct = mode.get("distinct")
        if codes and mode.get("outcome") == "raised" and not item.raises:
            reasons.append(f"{'+'.join(codes)} raised, and the record does not say it raises: {mode.get('message')}")
        if mode.get("outcome") != "ok" or not isinstance(distinct, int):
            continue
        if codes and distinct > 1:
            reasons.append(f"differs under {'+'.join(codes)}: {distinct} distinct of {n}")
        if not codes and item.deterministic and distinct > 1:
            reasons.append(f"the record says deterministic; default mode gave {distinct} distinct of {n}")
        if not codes and not item.deterministic and distinct == 1 and across is None:
            reasons.append(f"the record claims non-determinism; 0 of {n} runs differed by default")
    # A result with `cross_mode_distinct` (NCCL) shows its mechanism between configurations, not
    # between repeats of one; `limits` says when the run could not show it at all (two ranks).
    ranks = result.get("ranks")
    limited = isinstance(ranks, int) and ranks < 3  # a + b == b + a; the run says so in `limits`
    if across == 1 and not limited and not item.deterministic:
        reasons.append("the record says the result follows the configuration; every configuration gave the same bits")
    if item.raises:
        # `raises` means requesting determinism raises. A mode of the range's own solutions that
        # ran contradicts nothing (tf.random-seeds: SEED is what avoids the raise); a mode of the
        # determinism switch planned to check the raise (kb/verify/plan.py) must raise.
        fixes = set(item.solutions)
        for mode in result["modes"]:
            codes = mode.get("solutions") or []
            if codes and mode.get("outcome") == "ok" and not set(codes) <= fixes:
                reasons.append(f"the record says {item.raises} under the solution; {'+'.join(codes)} did not raise")
    return reasons


def _time_ratio(modes: list[dict]) -> dict[int, float | None]:
    base = next((m.get("median_s") for m in modes if not m.get("solutions") and m.get("outcome") == "ok"), None)
    out = {}
    for i, mode in enumerate(modes):
        t = mode.get("median_s")
        out[i] = round(t / base, 2) if base and t and mode.get("outcome") == "ok" else None
    return out


def merged_runs(catalog) -> dict[str, Any]:
    """{"runs": {source id: (evidence, ...)}, "flagged": (...)} for the compiled index."""
    records = {r.id: r for r in catalog.sources.values() if r.withdrawn is None}
    reviews = {(r.id, review.run): review.note for r in records.values() if r.verify for review in r.verify.reviewed}
    by_verifier: dict[str, list[str]] = {}
    for record in records.values():
        if record.verify and record.verify.verifier:
            by_verifier.setdefault(record.verify.verifier, []).append(record.id)
    newest: dict[tuple[str, str], dict] = {}
    for run in runs_of(catalog):
        if run.problems:
            continue
        data = run.data
        env = data["environment"]
        for result in data["results"]:
            targets = [result["source"]] if result.get("source") else by_verifier.get(result["verifier"], [])
            for source in targets:
                record = records.get(source)
                if record is None:
                    continue
                try:
                    key = release_key(str(result["version"]))
                except ValueError:
                    continue
                ratios = _time_ratio(result["modes"])
                evidence = {
                    "source": source,
                    "verifier": result["verifier"],
                    "env_id": env["env_id"],
                    "date": data["created"],
                    "file": run.rel,
                    "gpu": (env.get("gpu") or {}).get("name"),
                    "gpu_count": (env.get("gpu") or {}).get("count", 0),
                    "driver": env.get("driver"),
                    "cuda": env.get("cuda"),
                    "cudnn": env.get("cudnn"),
                    "framework": result["framework"],
                    "version": str(result["version"]),
                    "key": key,
                    "device": result["device"],
                    "n": result["n"],
                    "modes": tuple(
                        {
                            "mode": m["mode"], "solutions": tuple(m.get("solutions") or ()), "outcome": m["outcome"],
                            "distinct": m.get("distinct"), "max_abs_diff": m.get("max_abs_diff"),
                            "max_ulp_diff": m.get("max_ulp_diff"), "median_s": m.get("median_s"),
                            "time_ratio": ratios[i], "message": m.get("message"),
                        }
                        for i, m in enumerate(result["modes"])
                    ),
                    "contradicts": tuple(contradictions(record, result)),
                    "reviewed": reviews.get((source, run.rel)),
                }
                slot = (source, env["env_id"], evidence["version"], evidence["device"])
                if slot not in newest or newest[slot]["date"] <= evidence["date"]:
                    newest[slot] = evidence
    runs: dict[str, list] = {}
    for (source, *_), evidence in sorted(newest.items()):
        runs.setdefault(source, []).append(evidence)
    def flag(e: dict) -> dict:
        return {"source": e["source"], "env_id": e["env_id"], "file": e["file"], "version": e["version"],
                "device": e["device"], "reasons": e["contradicts"]}

    every = [e for evs in runs.values() for e in evs if e["contradicts"]]
    return {
        "runs": {s: tuple(sorted(evs, key=lambda e: e["date"], reverse=True)) for s, evs in sorted(runs.items())},
        "flagged": tuple(flag(e) for e in every if not e["reviewed"]),
        "reviewed": tuple(flag(e) | {"note": e["reviewed"]} for e in every if e["reviewed"]),
    }
