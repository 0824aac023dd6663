"""`kb.status()`: answer from the compiled index with the standard library only.

How an answer is formed (docs/api.md has the user-facing version):

1. The op resolves to source records: a record id names one record; otherwise the name
   (or alias) is looked up in the framework's table. A name with no record but present in
   the framework's API inventory (data/api/) has no known source: deterministic.
2. Records for another device drop out (a record with device `any` always applies).
3. Each remaining record is evaluated at the version's release key (kb/versions.py):
   the one range containing it gives that record's answer; no range means unknown.
4. deterministic = False if any record is non-deterministic there; otherwise None if any
   is unknown; otherwise True. solutions = the union of the codes that fix at least one
   non-deterministic record; recipe = a smallest set of codes covering every
   non-deterministic record (ties: lower preference, then code), ordered by the phase in
   which a user applies them; None when a record has no solution or any is unknown.
"""

from __future__ import annotations

from itertools import combinations

from kb import versions
from kb.errors import UnknownOpError
from kb.model import Reference, SourceStatus, Status

DEVICES = ("gpu", "cpu", "any")
DISTRIBUTIONS = ("ngc",)
_index: dict | None = None
_inventory: dict[str, frozenset[str]] = {}
_cache: dict[tuple, Status] = {}
_CACHE_LIMIT = 8192


def index() -> dict:
    global _index
    if _index is None:
        from kb._index import INDEX

        _index = INDEX
    return _index


def _infer_framework(op: str, idx: dict) -> str | None:
    for framework, prefixes in idx["prefixes"].items():
        if op.startswith(prefixes):
            return framework
    return None


def inventory(framework: str) -> frozenset[str]:
    """Public names of a framework (data/api/<framework>.txt); read only on a miss."""
    if framework not in _inventory:
        from pathlib import Path

        here = Path(__file__).resolve().parent
        names: frozenset[str] = frozenset()
        for candidate in (here / "api" / f"{framework}.txt", here.parent / "data" / "api" / f"{framework}.txt"):
            if candidate.is_file():
                with open(candidate, encoding="utf-8") as handle:
                    names = frozenset(line.rstrip("\n") for line in handle if not line.startswith("#"))
                break
        _inventory[framework] = names
    return _inventory[framework]


def _suggest(op: str, framework: str | None, idx: dict) -> tuple[str, ...]:
    import difflib

    frameworks = [framework] if framework else list(idx["names"])
    pool: set[str] = set(idx["sources"])
    for fw in frameworks:
        pool.update(idx["names"].get(fw, ()))
        pool.update(inventory(fw))
    head = op.rsplit(".", 1)[0] + "."
    near = [n for n in pool if n.startswith(head)] or list(pool)
    found = difflib.get_close_matches(op, near, n=5, cutoff=0.6)
    if len(found) < 3 and near is not pool:
        tail = op.rsplit(".", 1)[-1]
        found += [n for n in difflib.get_close_matches(op, list(pool), n=5, cutoff=0.75) if n not in found]
        found += sorted(n for n in pool if n.endswith("." + tail) and n not in found)[:3]
    return tuple(found[:5])


def _resolve(op: str, framework: str | None, idx: dict) -> tuple[str, tuple[str, ...]]:
    """Return (framework, source ids) for an op, or raise UnknownOpError."""
    record = idx["sources"].get(op)
    if record is not None and (framework is None or framework == record["framework"]):
        return record["framework"], (op,)
    inferred = framework or _infer_framework(op, idx)
    if inferred is None:
        raise UnknownOpError(
            op, None, _suggest(op, None, idx),
            reason=f"cannot tell the framework of {op!r}: names start with "
            + ", ".join(p for ps in idx["prefixes"].values() for p in ps)
            + "; or pass framework=",
        )
    ids = idx["names"].get(inferred, {}).get(op)
    if ids:
        return inferred, ids
    if op in inventory(inferred):
        return inferred, ()
    if inferred not in idx["names"] and not inventory(inferred):
        raise UnknownOpError(op, inferred, (), reason=f"the KB has no records or API inventory for {inferred} yet")
    raise UnknownOpError(op, inferred, _suggest(op, inferred, idx))


def _evaluate(ranges: tuple, key: tuple) -> tuple | None:
    for entry in ranges:
        if versions.contains(entry[0], entry[1], key):
            return entry
    return None


def _recipe(needs: list[frozenset[str]], idx: dict) -> tuple[str, ...]:
    codes = sorted(set().union(*needs)) if needs else []
    solutions = idx["solutions"]
    for size in range(0, len(codes) + 1):
        best = None
        for combo in combinations(codes, size):
            chosen = set(combo)
            if all(need & chosen for need in needs):
                rank = (sum(solutions[c]["preference"] for c in combo), combo)
                if best is None or rank < best:
                    best = rank
        if best is not None:
            order = idx["order"]
            return tuple(sorted(best[1], key=order.index))
    return ()  # unreachable: every need is non-empty, so all codes together cover them


def status(
    op: str,
    version: str,
    *,
    framework: str | None = None,
    device: str = "gpu",
    distribution: str | None = None,
) -> Status:
    """Is `op` run-to-run reproducible in `version`, and what makes it so?

    `distribution="ngc"` reads `version` as an NGC container version (e.g. "20.03").
    Raises UnknownOpError (a LookupError) for an unknown name and ValueError for a
    version that is not a version or an unknown device/distribution.
    """
    cache_key = (op, version, framework, device, distribution)
    hit = _cache.get(cache_key)
    if hit is not None:
        return hit
    if not isinstance(op, str) or not op:
        raise ValueError("op must be a non-empty string such as 'tf.nn.bias_add'")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if distribution is not None and distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)} or None, not {distribution!r}")
    key = versions.release_key(version)
    idx = index()
    framework, ids = _resolve(op, framework, idx)
    result = _answer(op, version, key, framework, device, distribution, ids, idx)
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[cache_key] = result
    return result


def _answer(op, version, key, framework, device, distribution, ids, idx) -> Status:
    notes: list[str] = []
    registry = idx["registries"].get(f"{distribution}-{framework}" if distribution else framework)
    if registry is not None and key not in registry["keys"] and not any(k[: len(key)] == key for k in registry["keys"]):
        notes.append(f"{version} is not a known {distribution or framework} release (latest known: {registry['latest']})")
    applying = [idx["sources"][i] for i in ids]
    applying = [s for s in applying if device == "any" or s["device"] in (device, "any")]
    if ids and not applying:
        notes.append(f"the records for {op} concern another device than {device}")

    per_source = []
    needs: list[frozenset[str]] = []
    union: set[str] = set()
    any_false = any_unknown = any_unsolved = False
    references: dict[tuple, Reference] = {}
    for source in applying:
        ranges = source["distributions"].get(distribution, ()) if distribution else source["status"]
        entry = _evaluate(ranges, key)
        if entry is None:
            state, codes, raises, note, matched = None, (), None, None, None
            any_unknown = True
        else:
            _, _, matched, codes, deterministic, raises, note = entry
            state = bool(deterministic)
            if not state:
                any_false = True
                union.update(codes)
                if codes:
                    needs.append(frozenset(codes))
                else:
                    any_unsolved = True
        disputed = tuple(d["claim"] for d in source["disputes"])
        per_source.append(
            SourceStatus(
                id=source["id"], title=source["title"], mechanism=source["mechanism"], pass_=source["pass"],
                summary=source["summary"], versions=matched, deterministic=state, solutions=tuple(codes),
                raises=raises, note=note, disputed=disputed,
            )
        )
        for ref in source["references"]:
            reference = Reference(**{f: ref.get(f) for f in Reference._fields})
            references.setdefault(reference._values(), reference)

    if any_false:
        deterministic = False
    elif any_unknown:
        deterministic = None
    else:
        deterministic = True
    order = idx["order"]
    solutions = tuple(sorted(union, key=order.index))
    recipe = None if (any_unsolved or any_unknown) else _recipe(needs, idx)
    return Status(
        op=op, framework=framework, version=version, device=device, distribution=distribution,
        deterministic=deterministic, solutions=solutions, recipe=recipe, sources=tuple(per_source),
        references=tuple(references.values()), verified=(), notes=tuple(notes),
    )
