"""`kb check`'s report as text: the calls the knowledge base knows a source in, the recipe,
prediction and outcome side by side, the recipe's cost, and the call that split first.

Text from the program (messages, file names, op names) is shown with control characters
escaped (kb.untrusted.shown), so a program's output cannot rewrite the terminal.
"""

from __future__ import annotations

from kb.untrusted import shown

WORDS = {"raises": "raises", "differs": "differs", "fixed": "repeats (fixed by the recipe)",
         "unknown": "repeats if no call without a record differs (no known source, not verified)",
         "repeats": "repeats (every call answered deterministic on evidence)",
         "identical": "identical", "failed": "failed"}


def _result(result: dict) -> str:
    kind = result.get("result")
    if kind == "identical":
        return f"identical ({result.get('steps')} steps, {result.get('compared')} records, every bit)"
    if kind == "differs":
        first = result.get("first") or {}
        return f"differs (step {first.get('step')}, {first.get('kind')} {shown(str(first.get('name')))})"
    if kind == "raises":
        raised = result["raised"]
        text = f"raises {raised.get('type')}: {shown(str(raised.get('message', '')))[:160]}"
        if raised.get("line"):
            text += f" (at {shown(str(raised['line']))[:160]})"
        return text
    return f"failed: {shown(str(result.get('why')))}"


def _predicted(prediction: dict, which: str) -> str:
    if which == "as_written":
        verdict, ops = prediction["as_written"], prediction["as_written_ops"]
        words = {"differs": "may differ", "raises": "raises", "unknown": "no known source (not verified)",
                 "repeats": "repeats"}.get(verdict, verdict)
    else:
        verdict = prediction["under_recipe"]
        ops = prediction["raising"] or prediction["differing"]
        words = WORDS.get(verdict, verdict)
    return words + (": " + ", ".join(shown(o) for o in ops[:3]) if ops else "")


def lines(report: dict) -> list[str]:
    p = report["prediction"]
    versions = ", ".join(f"{k} {v}" for k, v in sorted(report.get("frameworks", {}).items()))
    out = [f"kb check: {shown(' '.join(report['command']))} ({report['steps']} steps, {report.get('device')}, {versions})"]
    out.append(f"calls seen: {p['calls']} distinct; a known source of non-determinism applies to "
               f"{len({f['op'] for f in p['findings']})} of them:")
    for f in p["findings"]:
        source = f["source"]
        where = f" in {', '.join(f['modules'][:2])}" if f.get("modules") else ""
        fix = " or ".join(source["solutions"]) or "no known fix"
        cond = f" (if {source['condition']})" if source.get("applies") is None and source.get("condition") else ""
        out.append(f"  {shown(f['shown'])}{shown(where)} on {f.get('device')}: {source['id']}{cond}; as written "
                   f"{f['as_written']}, under the recipe {f['under_recipe']}; fix: {fix}")
    if p["unknown"]:
        out.append(f"  {len(p['unknown'])} call(s) with records that do not cover this version (unknown): "
                   + ", ".join(shown(x) for x in p["unknown"][:6]))
    if p["unverified"]:
        out.append(f"  {len(p['unverified'])} call(s) with no known source (not verified): "
                   + ", ".join(shown(x) for x in p["unverified"][:8]) + (" ..." if len(p["unverified"]) > 8 else ""))
    out.append("recipe: " + (" + ".join(p["recipe"]) or "nothing to apply")
               + (f" (applied without editing the program: {' + '.join(p['applied'])})" if p["applied"] else "")
               + (f"; not applied (a code change): {' + '.join(p['not_applied'])}" if p["not_applied"] else ""))
    for op, fixes in p["fixes_for_differing"].items():
        names = ", ".join(f["code"] + ("" if f["applied_by_check"] else " (a code change)") for f in fixes) or "no known fix"
        out.append(f"  still differs under the recipe: {shown(op)}; what fixes it: {names}")
    if "under_recipe" not in report:
        out.append(f"predicted under the recipe: {_predicted(p, 'recipe')}")
        return out
    width = 18
    out.append("")
    out.append(f"{'':{width}}predicted | outcome")
    out.append(f"{'as written':{width}}{_predicted(p, 'as_written')} | {_result(report['as_written'])}")
    out.append(f"{'under the recipe':{width}}{_predicted(p, 'recipe')} | {_result(report['under_recipe'])}")
    agree = report["agreement"]
    right = {True: "right", False: "WRONG", None: "not decided (a run failed)"}[agree["right"]]
    out.append(f"prediction under the recipe: {right}")
    t = report.get("time") or {}
    if t.get("step_ratio") is not None:
        out.append(f"time: {t['as_written_step_s'] * 1000:.3g} ms a step as written, {t['recipe_step_s'] * 1000:.3g} ms "
                   f"under the recipe ({t['step_ratio']}x); start-up to the end of step 1 {t['as_written_first_step_s']} s "
                   f"vs {t['recipe_first_step_s']} s; whole run {t['as_written_wall_s']} s vs {t['recipe_wall_s']} s")
    for run in report["runs"]["recipe"][:1]:
        for note in run.get("notes", []):
            out.append(f"note: {shown(note['text'])}")
        for failed in (run.get("recipe") or {}).get("failed", []):
            out.append(f"note: {failed['code']} could not be applied: {shown(failed['why'])}")
    for label, found in (report.get("blame") or {}).items():
        title = label.replace("_", " ")
        if found.get("result") != "differs":
            out.append(f"first split ({title}): {shown(str(found.get('note') or found.get('why')))}")
            continue
        out.append(f"first split ({title}): {shown(str(found.get('message')))}")
        for call in found.get("calls", [])[:5]:
            out.append(f"  {shown(str(call['call']))} in {shown(str(call.get('place')))}: {shown(call['kb'])}")
    return out


def render(report: dict) -> str:
    return "\n".join(lines(report)) + "\n"
