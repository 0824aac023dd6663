"""`kb verify --coverage`: every record, its verifier and evidence, or why it has none."""

from __future__ import annotations

from kb.query import index
from kb.verify.cases import label


def coverage(found: dict) -> list[dict]:
    idx = index()
    rows = []
    for source in idx["sources"].values():
        name = source.get("verify")
        runs = idx.get("runs", {}).get(source["id"], ())
        devices = sorted({r["device"] for r in runs})
        if name is None:
            why = source.get("unverifiable")
            state = f"unverifiable: {why}" if why else "no verifier yet (add verify: to the record)"
        elif name not in found:
            state = f"verifier {name} is not registered (KB014)"
        elif source["device"] in ("gpu", "any") and "gpu" not in devices:
            state = "not yet verified on GPU" + (" (CPU runs only)" if devices else "")
        elif not runs:
            state = "not yet verified"
        else:
            newest = runs[0]
            state = f"verified on {newest['gpu'] or 'CPU'} ({newest['framework']} {newest['version']}, {newest['date'][:10]})"
        entry = found.get(name) if name else None
        cases = [c for c in (getattr(entry, "cases", ()) or ()) if c.op]
        measured = {(r.get("op"), repr(sorted((r.get("call") or {}).items()))) for r in runs if r.get("op")}
        rows.append({
            "source": source["id"], "framework": source["framework"], "device": source["device"],
            "verifier": name, "state": state, "runs": len(runs),
            "contradicted": any(r["contradicts"] for r in runs),
            "cases": [label(c.op, c.call) for c in cases],
            "cases_measured": sum(1 for c in cases if (c.op, repr(sorted(c.call.items()))) in measured),
        })
    for name, entry in sorted(found.items()):
        if entry.framework != "synthetic" and not any(r["verifier"] == name for r in rows):
            rows.append({"source": None, "framework": entry.framework, "device": entry.device, "verifier": name,
                         "state": "registered; no record names it yet (unlinked)", "runs": 0, "contradicted": False,
                         "cases": [label(c.op, c.call) for c in entry.cases if c.op], "cases_measured": 0})
    return rows


def print_coverage(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.markup import escape as e
    from rich.table import Table

    table = Table("record", "device", "verifier", "cases (measured)", "state")
    for row in rows:
        flag = " [red](contradicted)[/]" if row["contradicted"] else ""
        cases = f"{len(row['cases'])} ({row['cases_measured']})" if row["cases"] else "-"
        table.add_row(e(row["source"] or "-"), row["device"], e(row["verifier"] or "-"), cases, e(row["state"]) + flag)
    console = Console(highlight=False, soft_wrap=True)
    console.print(table)
    with_verifier = sum(1 for r in rows if r["source"] and r["verifier"])
    records = sum(1 for r in rows if r["source"])
    console.print(f"{with_verifier} of {records} records name a verifier; "
                  f"{sum(len(r['cases']) for r in rows if r['source'])} cases (one call each) in their verifiers")


def static_rows() -> dict[str, list[dict]]:
    """The static evidence's two lists, from the index: ranges it contradicts (KB017) and
    alerts found in a release that no record claims (KB018)."""
    idx = index()
    return {"disagreements": list(idx.get("static_disagreements", ())), "unclaimed": list(idx.get("static_unclaimed", ()))}


def print_static(rows: dict[str, list[dict]]) -> None:
    from rich.console import Console
    from rich.markup import escape as e

    console = Console(highlight=False, soft_wrap=True)
    console.print(f"static evidence (kb verify --static): {len(rows['disagreements'])} range(s) disagree, "
                  f"{len(rows['unclaimed'])} alert(s) no record claims")
    for row in rows["disagreements"]:
        console.print(f"  KB017 {e(row['source'])}: {e(row['reason'])}")
    for row in rows["unclaimed"]:
        span = row["releases"][0] if len(row["releases"]) == 1 else f"{row['releases'][0]} .. {row['releases'][-1]}"
        console.print(f"  KB018 {row['framework']} {e(repr(row['signal']))}: in {len(row['releases'])} release(s), {span}")
