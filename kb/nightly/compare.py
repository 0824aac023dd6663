"""Compare run files (data/runs/<env-id>/<stamp>.yaml, CONTRACTS.md) with their predecessors.

Each environment is compared only with itself: the newest run file against the one before it
of the same `environment.env_id`. Evidence is asymmetric (DESIGN.md): one differing run proves
non-determinism, `distinct: 1` is only "0 of n differed". So:
- regression: a mode that applies solutions gave more than one distinct output (the fix no
  longer holds, or never did on this environment), or a mode whose outcome became `error` or
  `raised` where the previous run of this environment had it `ok`;
- newly shown to differ: the default mode differs now and did not in the previous run (an
  environment's first run has no previous one: its counts go on its `compared` entry);
- newly confirmed: default differs AND every solution mode ran ok with 0 of n differing, and
  that was not so in the previous run.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.verify.runfile import RUNS_DIR  # noqa: F401  (kb/nightly/run.py reads it from here)
from kb.yamlio import YamlError, read


@dataclass
class RunFile:
    path: Path
    env_id: str
    created: str
    results: list[dict[str, Any]]


@dataclass
class Comparison:
    regressions: list[dict[str, Any]] = field(default_factory=list)
    newly_differ: list[dict[str, Any]] = field(default_factory=list)
    newly_confirmed: list[dict[str, Any]] = field(default_factory=list)
    first_outcomes: list[dict[str, Any]] = field(default_factory=list)   # error/raised with nothing before
    compared: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)                   # unreadable run files


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def load_runs(root: Path, runs_dir: Path | None = None) -> tuple[dict[str, list[RunFile]], list[str]]:
    """Every readable run file, grouped by environment, oldest first; and the unreadable ones.

    Read and validated by kb/verify/runfile.py, the reader `kb build` and `kb validate` use
    (static evidence under static-* folders is not a run file).
    """
    from kb.verify import runfile

    by_env: dict[str, list[RunFile]] = {}
    problems = []
    for run in runfile.load_runs(root, runs_dir):
        if run.problems:
            line, message = run.problems[0]
            problems.append(f"{run.rel}:{line}: {message}")
            continue
        data = run.data
        env, results = data["environment"], data["results"]
        # Each kind of run (verify, e2e, nccl) is compared only with the previous run of its kind.
        kind = str(data.get("kind") or "verify")
        group = str(env["env_id"]) if kind == "verify" else f"{env['env_id']} ({kind})"
        by_env.setdefault(group, []).append(RunFile(run.path, group, str(data.get("created") or run.path.stem), results))
    for runs in by_env.values():
        runs.sort(key=lambda r: (r.created, r.path.name))
    return by_env, problems


def _case(result: dict[str, Any]) -> str:
    """The case a result measured (one op called one way), empty for a result of no particular call."""
    call = result.get("call")
    if not result.get("op"):
        return ""
    args = ", ".join(f"{k}={v!r}" for k, v in call.items()) if isinstance(call, dict) else ""
    return f"{result['op']}({args})"


def _key(result: dict[str, Any]) -> tuple:
    return (result.get("source"), result.get("verifier"), result.get("framework"), result.get("device"), _case(result))


def _modes(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(m.get("mode")): m for m in result.get("modes") or [] if isinstance(m, dict)}


def _distinct(mode: dict[str, Any] | None) -> int:
    try:
        return int((mode or {}).get("distinct") or 0)
    except (TypeError, ValueError):
        return 0


def differs_by_default(result: dict[str, Any]) -> bool:
    default = _modes(result).get("default")
    return default is not None and default.get("outcome") == "ok" and _distinct(default) > 1


def confirmed(result: dict[str, Any]) -> bool:
    modes = _modes(result)
    fixes = [m for name, m in modes.items() if name != "default" and m.get("solutions")]
    return differs_by_default(result) and bool(fixes) and all(
        m.get("outcome") == "ok" and _distinct(m) == 1 for m in fixes
    )


def compare(new: RunFile, previous: RunFile | None, root: Path, out: Comparison) -> None:
    before = {_key(r): r for r in previous.results} if previous else {}
    where = {"env": new.env_id, "run": _rel(new.path, root),
             "previous": _rel(previous.path, root) if previous else None}
    out.compared.append(dict(where))
    for result in new.results:
        old = before.get(_key(result))
        old_modes = _modes(old) if old else {}
        # A verifier no record names yet ("unlinked") is reported under its verifier's name.
        case = f" [{_case(result)}]" if _case(result) else ""
        base = {"source": (result.get("source") or f"(unlinked) {result.get('verifier')}") + case,
                "verifier": result.get("verifier"), "framework": result.get("framework"),
                "version": result.get("version"), "device": result.get("device"), "n": result.get("n"), **where}
        for name, mode in _modes(result).items():
            outcome, solutions = mode.get("outcome"), mode.get("solutions") or []
            was = old_modes.get(name)
            if solutions and outcome == "ok" and _distinct(mode) > 1:
                again = was is not None and was.get("outcome") == "ok" and _distinct(was) > 1
                out.regressions.append({**base, "mode": name, "kind": "solution-differs", "persisting": again,
                                        "detail": f"{'+'.join(solutions)}: {_distinct(mode)} distinct outputs of "
                                                  f"{result.get('n')} runs (max_abs_diff {mode.get('max_abs_diff')})"})
            elif outcome in ("error", "env-error", "raised"):
                if was is not None and was.get("outcome") == "ok":
                    out.regressions.append({**base, "mode": name, "kind": f"new-{'raise' if outcome == 'raised' else 'error'}",
                                            "persisting": False, "detail": f"{outcome}: {mode.get('message')}"})
                elif was is None and previous is not None:
                    out.first_outcomes.append({**base, "mode": name, "outcome": outcome, "detail": mode.get("message")})
                elif previous is None:
                    out.compared[-1][outcome] = out.compared[-1].get(outcome, 0) + 1
        if previous is None:
            # An environment's first run is news once, not every night: it is counted on its
            # `compared` entry instead of being listed as "newly" anything.
            first = out.compared[-1]
            first["differ"] = first.get("differ", 0) + differs_by_default(result)
            first["confirmed"] = first.get("confirmed", 0) + confirmed(result)
            continue
        if differs_by_default(result) and not (old and differs_by_default(old)):
            default = _modes(result)["default"]
            out.newly_differ.append({**base, "detail": f"{_distinct(default)} distinct outputs of {result.get('n')} runs"})
        if confirmed(result) and not (old and confirmed(old)):
            out.newly_confirmed.append({**base, "detail": "differs by default; "
                                        + ", ".join(sorted(n for n, m in _modes(result).items() if n != "default" and m.get("solutions")))
                                        + ": 0 of n differed"})


def compare_all(by_env: dict[str, list[RunFile]], root: Path) -> Comparison:
    out = Comparison()
    for env_id in sorted(by_env):
        runs = by_env[env_id]
        compare(runs[-1], runs[-2] if len(runs) > 1 else None, root, out)
    return out


def _parse_created(value: str) -> _dt.datetime | None:
    try:
        stamp = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=_dt.UTC)


def evidence_age(by_env: dict[str, list[RunFile]], root: Path, now: _dt.datetime, days: int) -> tuple[list[dict], list[str]]:
    """Records whose newest run (any environment) is older than `days`; records with `verify:` and no run."""
    newest: dict[str, _dt.datetime] = {}
    for runs in by_env.values():
        for run in runs:
            stamp = _parse_created(run.created)
            for result in run.results:
                if not result.get("source"):
                    continue
                if stamp and (result["source"] not in newest or stamp > newest[result["source"]]):
                    newest[result["source"]] = stamp
    old = [
        {"source": source, "newest": stamp.strftime("%Y-%m-%d"), "age_days": (now - stamp).days}
        for source, stamp in sorted(newest.items()) if (now - stamp).days > days
    ]
    never = []
    from kb.untrusted import files_under

    for path in (p for p in files_under(root / "data" / "sources") if p.suffix == ".yaml"):
        try:
            data = read(path).data
        except (YamlError, OSError):
            continue
        verify = data.get("verify") if isinstance(data, dict) else None
        if isinstance(verify, dict) and verify.get("verifier") and data.get("id") not in newest and not data.get("withdrawn"):
            never.append(str(data.get("id")))
    return old, never
