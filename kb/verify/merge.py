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

import hashlib
from pathlib import Path
from typing import Any

from kb.verify.cases import applies, label
from kb.verify.runfile import runs_of
from kb.versions import range_at, release_key
from verifiers.outcomes import ENV_ERROR

def case_applies(record, result: dict) -> bool | None:
    """Whether the record's condition covers the case this result measured (kb/verify/cases.py)."""
    try:
        item = range_at(record.status, str(result["version"]))
    except ValueError:
        item = None
    call = result.get("call")
    return applies(record.calls, item.when if item is not None else None, result.get("op"),
                   call if isinstance(call, dict) else None)


def _complementary(result: dict) -> list[str]:
    """A call the record says it does not cover: nothing may differ, nothing may raise."""
    reasons = []
    n = result.get("n")
    where = label(result.get("op"), result.get("call"))
    for mode in result["modes"]:
        codes = mode.get("solutions") or []
        name = "+".join(codes) or "default mode"
        if mode.get("outcome") == "raised":
            reasons.append(f"the record's condition excludes {where}, yet {name} raised: {mode.get('message')}")
        elif mode.get("outcome") == "ok" and isinstance(mode.get("distinct"), int) and mode["distinct"] > 1:
            reasons.append(f"the record's condition excludes {where}, yet {name} gave {mode['distinct']} distinct of {n}")
    return reasons


def _claimed_elsewhere(record, result: dict, others) -> bool:
    """Another record of the same framework applies to this case's call and is not deterministic
    there: the call is outside `record`'s condition but still expected to differ or raise, so
    it is no evidence about `record` either way."""
    op = result.get("op")
    for other in others or ():
        if other is record or other.framework != record.framework or op not in other.ops:
            continue
        if other.device not in ("any", result.get("device")):
            continue
        try:
            item = range_at(other.status, str(result["version"]))
        except ValueError:
            continue
        if item is None or item.deterministic:
            continue
        if case_applies(other, result) is not False:
            return True
    return False


def contradictions(record, result: dict, others=()) -> list[str]:
    """Why `result` contradicts `record` (empty when it does not, or cannot tell). `others`: every
    record, so that a complementary case another record claims is not held against this one."""
    if record.device not in ("any", result.get("device")):
        return []
    try:
        item = range_at(record.status, str(result["version"]))
    except ValueError:
        return []
    if item is None:
        return []
    if case_applies(record, result) is False:
        return [] if _claimed_elsewhere(record, result, others) else _complementary(result)
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
    if item.varies == "configuration" and not limited and not _configuration_changed(result):
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


def _configuration_changed(result: dict) -> bool:
    """Whether any configuration the run changed gave other bits than its defaults: a mode that sets
    an NCCL variable or runs on another rank count, compared with the defaults (`same_as_default`,
    written by verifiers/collectives), or `cross_mode_distinct` above 1 (older NCCL runs). True when
    the run changed no configuration at all (nothing to hold against the record)."""
    modes = [m for m in result["modes"] if m.get("outcome") == "ok"]
    changed = [m for m in modes if m.get("ranks") not in (None, result.get("ranks"))
               or any(str(k).startswith("NCCL_") for k in (m.get("env") or {}))]
    if any(m.get("same_as_default") is False for m in changed):
        return True
    across = result.get("cross_mode_distinct")
    if isinstance(across, int) and across > 1:
        return True
    if any("same_as_default" in m for m in modes):
        return not changed  # the new runs: nothing changed the bits where a configuration changed
    return across is None  # an older NCCL run: cross_mode_distinct is its only measure


def _by_op(targets: list[str], result: dict, records: dict, by_verifier: dict) -> list[str]:
    """A result whose op is not among its named record's ops (a sweep that measured several
    collectives and named one record for all: verifiers/collectives) goes to the records of its
    verifiers that do list the op; a result with no op, or whose record lists it, stays."""
    op = result.get("op")
    if not op:
        return targets
    kept = [t for t in targets if t not in records or op in records[t].ops or op in records[t].aliases]
    if kept:
        return kept
    names = {result.get("verifier")} | {records[t].verify.verifier for t in targets if t in records and records[t].verify}
    return sorted({rid for name in names for rid in by_verifier.get(name, ())
                   if op in records[rid].ops or op in records[rid].aliases})


def _time_ratio(modes: list[dict]) -> dict[int, float | None]:
    base = next((m.get("median_s") for m in modes if not m.get("solutions") and m.get("outcome") == "ok"), None)
    out = {}
    for i, mode in enumerate(modes):
        t = mode.get("median_s")
        out[i] = round(t / base, 2) if base and t and mode.get("outcome") == "ok" else None
    return out


def merged_runs(catalog) -> dict[str, Any]:
    """{"runs": {source id: (evidence, ...)}, "flagged": (...)} for the compiled index.

    The newest evidence is kept per environment, version, device and case (op and call): a
    run of one call says nothing about another call of the same record."""
    records = {r.id: r for r in catalog.sources.values() if r.withdrawn is None}
    reviews = {(r.id, review.run): review.note for r in records.values() if r.verify for review in r.verify.reviewed}
    by_verifier: dict[str, list[str]] = {}
    for record in records.values():
        if record.verify and record.verify.verifier:
            by_verifier.setdefault(record.verify.verifier, []).append(record.id)
    newest: dict[tuple[str, str, str, str, tuple[str, ...]], dict] = {}  # (source, env, version, device, case)
    for run in runs_of(catalog):
        if run.problems:
            continue
        data = run.data
        env = data["environment"]
        for result in data["results"]:
            # A mode the environment failed (env-error, also a recorded raise that was one:
            # kb/verify/runfile.py) is no evidence: it is left out, and a result with nothing
            # else is no evidence at all (nor may it shadow an older real run).
            measured = [m for m in result["modes"] if m.get("outcome") != ENV_ERROR]
            if not measured:
                continue
            result = {**result, "modes": measured}
            targets = [result["source"]] if result.get("source") else by_verifier.get(result["verifier"], [])
            targets = _by_op(targets, result, records, by_verifier)
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
                            "same_as_default": m.get("same_as_default"),
                        }
                        for i, m in enumerate(result["modes"])
                    ),
                    "contradicts": tuple(contradictions(record, result, records.values())),
                    "reviewed": reviews.get((source, run.rel)),
                    "op": result.get("op"),
                    "call": dict(result["call"]) if isinstance(result.get("call"), dict) else None,
                    "applies": case_applies(record, result),
                    "sweep": None,
                }
                case: tuple[str, ...] = (evidence["op"] or "", repr(sorted((evidence["call"] or {}).items(), key=lambda kv: kv[0])))
                slot = (source, env["env_id"], evidence["version"], evidence["device"], case)
                if slot not in newest or newest[slot]["date"] <= evidence["date"]:
                    newest[slot] = evidence
    for evidence in sweep_evidence(catalog, records):
        case = (evidence["op"] or "", repr(sorted((evidence["call"] or {}).items(), key=lambda kv: kv[0])),
                evidence["sweep"]["case"])
        slot = (evidence["source"], evidence["env_id"], evidence["version"], evidence["device"], case)
        if slot not in newest or newest[slot]["date"] <= evidence["date"]:
            newest[slot] = evidence
    runs: dict[str, list] = {}
    for (source, *_), evidence in sorted(newest.items()):
        runs.setdefault(source, []).append(evidence)
    def flag(e: dict) -> dict:
        return {"source": e["source"], "env_id": e["env_id"], "file": e["file"], "version": e["version"],
                "device": e["device"], "reasons": e["contradicts"], "op": e["op"], "call": e["call"]}

    every = [e for evs in runs.values() for e in evs if e["contradicts"] and not e.get("sweep")]
    return {
        "runs": {s: tuple(sorted(evs, key=lambda e: e["date"], reverse=True)) for s, evs in sorted(runs.items())},
        "flagged": tuple(flag(e) for e in every if not e["reviewed"]),
        "reviewed": tuple(flag(e) | {"note": e["reviewed"]} for e in every if e["reviewed"]),
    }


def sweep_evidence(catalog, records: dict) -> list[dict]:
    """Evidence from the sweep files (data/sweeps/, kb/verify/sweepfile.py): each case that is
    evidence (`same`, `fixed`, `raises`, `silent`; never `error` or `skipped`) attached to every
    record whose op, device, pass, version range and call condition cover exactly the call that
    ran, for the version and device measured. Where the record says otherwise than the sweep
    found, `contradicts` says so (lint KB021 reports it); sweep evidence is never `flagged` for
    KB015, which is about the verifiers' run files.

    A sweep file's evidence is a pure function of its bytes, the records of its framework and
    the framework's signatures: it is remembered under .cache/kb/ by all three (kb/memo.py), so
    an unchanged tree does not match its ~10,000 cases to records again on every command."""
    from kb.memo import MISS
    from kb.verify import sweepfile

    out: list[dict[str, Any]] = []
    params: dict[str, tuple | None] = {}
    memo = _evidence_memo(catalog.root)
    inputs: dict[str, bytes] = {}
    for sweep in sweepfile.sweeps_of(catalog):
        data = sweep.data
        if data is None:
            continue
        if data["framework"] not in inputs:
            inputs[data["framework"]] = _framework_inputs(catalog, data["framework"])
        try:
            with open(sweep.path, "rb") as handle:
                remembered = memo.key(sweep.rel, hashlib.file_digest(handle, "sha256").digest(), inputs[data["framework"]])
        except OSError:
            remembered = b""
        cached: Any = memo.get(remembered) if remembered else MISS
        if cached is not MISS:
            out.extend(cached)
            continue
        first = len(out)
        env = data["environment"]
        version, device = sweepfile.version_of(data), sweepfile.device_of(data)
        try:
            key = release_key(version)
        except ValueError:
            continue
        candidates = [r for r in records.values() if r.framework == data["framework"]]
        for case in data["cases"]:
            if case["class"] not in sweepfile.EVIDENCE:
                continue
            op = sweepfile.kb_op(case["op"])
            if op not in params:
                params[op] = sweepfile.params_for(data["framework"], op, catalog.root)
            call = sweepfile.case_call(case, data["suite"], params[op])
            for record, item in sweepfile.covering(candidates, data, case, call,
                                                    sweepfile.defaults_for(data["framework"], op, params[op], catalog.root)):
                reason = sweepfile.disagreement(case, [item])
                out.append({
                    "source": record.id, "verifier": f"sweep:{data['suite']}", "env_id": env["env_id"],
                    "date": data["started"], "file": sweep.rel,
                    "gpu": (env.get("gpu") or {}).get("name"), "gpu_count": (env.get("gpu") or {}).get("count", 0),
                    "driver": env.get("driver"), "cuda": env.get("cuda"), "cudnn": env.get("cudnn"),
                    "framework": data["framework"], "version": version, "key": key, "device": device,
                    "n": data["runs_per_mode"], "modes": sweepfile.modes_as_evidence(data, case),
                    "contradicts": (reason,) if reason else (), "reviewed": None, "op": op, "call": call,
                    "applies": True,
                    "sweep": {"suite": data["suite"], "case": case["case"], "class": case["class"],
                              "pass": case.get("pass"), "dtype": case.get("dtype"),
                              "fixes": tuple({"fix": f["fix"], "distinct": f.get("distinct"), "runs": f.get("runs"),
                                              "time_ratio": f.get("time_ratio")} for f in case.get("fixes") or ())},
                })
        if remembered:
            memo.put(remembered, out[first:])
    memo.save()
    return out


def _evidence_memo(root: Path):
    """The memo of sweep evidence, keyed also by the code that makes it (kb/memo.py)."""
    from kb import calls, signatures, versions
    from kb.memo import Memo
    from kb.verify import cases, sweepfile

    return Memo(root, "sweep-evidence", Path(__file__), *(Path(str(m.__file__)) for m in (sweepfile, cases, calls, signatures, versions)))


def _framework_inputs(catalog, framework: str) -> bytes:
    """What a sweep's evidence reads besides the sweep: the text of every record of its framework
    (withdrawn ones too: the text says so) and the framework's signatures."""
    digest = hashlib.sha256()
    for path, record in sorted(catalog.sources.items()):
        if record.framework == framework:
            digest.update(path.name.encode() + b"\0" + catalog.documents[path].text.encode("utf-8", "surrogatepass") + b"\0")
    try:
        digest.update((catalog.root / "data" / "api" / f"{framework}.signatures.txt").read_bytes())
    except OSError:
        digest.update(b"no signatures")
    return digest.digest()
