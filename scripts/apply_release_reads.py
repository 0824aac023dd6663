"""Write the ranges that scripts/release_reads.py found into the sweep-made records, as `basis: static`
ranges beside the swept one, each citing the first and last release read (tag, file, lines).

The claim of each new range is the swept range's (its solutions, switch effect, raises) unless the
probes' `claim_fields` say otherwise (a part whose code changed: under the switch, what it does then).
Ranges already written are left alone; run `python -m kb fix` and `python -m kb validate --strict` after.

    python scripts/apply_release_reads.py torch.cumprod torch.logcumsumexp ...
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import yaml  # noqa: E402

from kb import atomic  # noqa: E402
from kb.versions import compile_range  # noqa: E402

CLAIM = ("solutions", "deterministic", "raises", "switch", "when", "batch_invariant")


def _note(result: dict, proposal: dict, measured: str, extra: str) -> str:
    releases = proposal["releases"]
    where = (f"at every release read from {releases[0]} to {releases[-1]} ({len(releases)} releases"
             if len(releases) > 1 else f"at {releases[0]} (1 release")
    kind = {"pytorch": "the code in each release's wheel and the alerts of its libraries",
            "jax": "the code at each release's tag and the flags of its jaxlib",
            "keras": "the code at each release's tag"}[result["framework"]]
    text = f"Read, not run: {result['claim']}, {where}: {kind}); the read cites the first and last."
    if measured:
        text += " " + measured
    if extra:
        text += " " + extra
    return text


def _pieces(result: dict, proposal: dict, taken: list, specs: dict) -> list[dict]:
    """The proposal less the releases a range already there covers (curated, or written before), as
    contiguous pieces, each citing its own first and last release."""
    from release_reads import _minor, _reads

    from kb.versions import release_key

    def free(release: str) -> bool:
        k = release_key(release)
        return not any((a is None or a <= k) and (b is None or k < b) for a, b in taken)

    releases = proposal["releases"]
    if all(free(r) for r in releases):
        return [proposal]
    by_release = {item["release"]: item for item in result["releases"]}
    spec = specs[(result["record"], result.get("part"))]
    out, group = [], []
    for release in releases + [None]:
        if release is not None and free(release):
            group.append(release)
            continue
        if group:
            first = _minor(group[0]) if result["framework"] == "pytorch" else group[0]
            if release is not None:
                hi = "<" + (_minor(release) if result["framework"] == "pytorch" else release)
            else:
                hi = proposal["versions"].split(",")[1]
            reads = _reads(result["framework"], by_release[group[0]], spec["probes"])
            if group[-1] != group[0]:
                reads += _reads(result["framework"], by_release[group[-1]], spec["probes"])
            out.append({"versions": f">={first},{hi}", "releases": group, "read": reads})
            group = []
    return out


def apply(record_id: str, results: list[dict], fields: dict, specs: dict) -> bool:
    folder = ROOT / "data/sources"
    path = next(folder.rglob(f"{record_id}.yaml"))
    header, body = path.read_text(encoding="utf-8").split("\n", 1)
    data = yaml.safe_load(body)
    status = data["status"]
    swept = next(r for r in status if r["versions"] == results[0]["swept_range"])
    taken = [compile_range(r["versions"]) for r in status]
    added = False
    for result in results:
        extra = fields.get((record_id, result.get("part")), {})
        for proposal in [piece for p in result["proposed"] for piece in _pieces(result, p, taken, specs)]:
            lo, hi = compile_range(proposal["versions"])
            claim = {k: swept[k] for k in CLAIM if k in swept}
            claim.update(extra.get("claim", {}))
            claim = {k: v for k, v in claim.items() if v is not None}
            entry = {"versions": proposal["versions"], **claim, "basis": "static",
                     "note": _note(result, proposal, extra.get("measured", ""), extra.get("note", "")),
                     "read": proposal["read"]}
            status.append(entry)
            taken.append((lo, hi))
            added = True
    if not added:
        return False
    status.sort(key=lambda r: (compile_range(r["versions"])[0] or ()))

    class _NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True

    text = header + "\n" + yaml.dump(data, Dumper=_NoAliases, sort_keys=False, width=110, allow_unicode=True)
    atomic.write_atomic(path, text)
    return True


def main() -> int:
    reads = yaml.safe_load((ROOT / "data/static/release-reads.yaml").read_text(encoding="utf-8"))
    specs = yaml.safe_load((ROOT / "data/static/release-probes.yaml").read_text(encoding="utf-8"))
    fields = {(s["record"], s.get("part")): s.get("apply", {}) for s in specs}
    by_spec = {(s["record"], s.get("part")): s for s in specs}
    ranges = {(s["record"], s.get("part")): s["swept_range"] for s in specs}
    wanted = set(sys.argv[1:])
    by_record: dict[str, list[dict]] = {}
    for result in reads["records"]:
        if wanted and result["record"] not in wanted:
            continue
        result["swept_range"] = ranges[(result["record"], result.get("part"))]
        by_record.setdefault(result["record"], []).append(result)
    for record_id, results in sorted(by_record.items()):
        print(f"{record_id}: {'ranges added' if apply(record_id, results, fields, by_spec) else 'nothing to add'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
