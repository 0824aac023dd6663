"""From a name to source records: the framework of a name, the records that list it, the
framework's inventory of public names (data/api/), close names for a miss, an op's parameters."""

from kb.errors import UnknownOpError
from kb.query.state import LIMIT, Lazy, detail, light, memo

signatures = Lazy("signatures", globals())  # parameters only: a query without `call=` never needs them

SUGGEST_POOL = 20_000  # names difflib compares per miss: under 0.1 s
_known_frameworks = memo()
_inventory: dict[str, frozenset[str]] = memo()
_pools: dict[str | None, tuple] = memo()
_params: dict[tuple, tuple | None] = memo()


def infer_framework(op: str, idx: dict) -> str | None:
    for framework, prefixes in idx["prefixes"].items():
        if op.startswith(prefixes):
            return framework
    return None


def frameworks() -> tuple[str, ...]:
    """Every framework the index knows (a tuple: `x in` it never hashes caller input)."""
    found = _known_frameworks.get(None)
    if found is None:
        idx = light()
        names = {*idx["prefixes"], *idx["names"], *(r for r in idx["registries"] if "-" not in r)}
        found = _known_frameworks[None] = tuple(sorted(names))
    return found


def inventory(framework: str) -> frozenset[str]:
    """Public names of a framework (data/api/<framework>.txt); read only on a miss.

    The file name is the index's own spelling of a known framework, never the caller's
    string: a name such as '../../tmp/secret' must not select a file (docs/security.md).
    """
    known = frameworks()
    if framework not in known:
        return frozenset()
    if framework not in _inventory:
        import os.path  # already loaded at start-up; pathlib would pull in `re`

        trusted = known[known.index(framework)]
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # kb/
        names: frozenset[str] = frozenset()
        wheel = os.path.join(here, "api", f"{trusted}.txt")
        checkout = os.path.join(os.path.dirname(here), "data", "api", f"{trusted}.txt")
        for candidate in (wheel, checkout):
            if os.path.isfile(candidate):
                with open(candidate, encoding="utf-8") as handle:
                    names = frozenset(line.rstrip("\n") for line in handle if not line.startswith("#"))
                break
        _inventory[framework] = names
    return _inventory[framework]


def _pool(framework: str | None, idx: dict) -> tuple:
    """(sorted names, names by last segment, curated names) to suggest from; built once per framework.

    Only a known framework's inventory joins; with no framework the pool is the records'
    names alone (every inventory together is ~270k names: seconds of difflib per miss).
    """
    found = _pools.get(framework)
    if found is None:
        curated = set(idx["sources"]).union(*(idx["names"].get(fw, ()) for fw in ([framework] if framework else idx["names"])))
        names = sorted(curated | (inventory(framework) if framework else frozenset()))
        tails: dict[str, list[str]] = {}
        for name in names:
            tails.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        found = _pools[framework] = (names, tails, sorted(curated))
    return found


def suggest(op: str, framework: str | None, idx: dict) -> tuple[str, ...]:
    """Close names, in well under a second: the name is at most MAX_NAME characters (status()
    checks it), difflib compares it with one dotted family (found by bisection), and names
    sharing its last segment come from a table."""
    import difflib
    from bisect import bisect_left

    names, tails, curated = _pool(framework, idx)
    parts = op.split(".")
    near: list[str] = []
    for depth in range(len(parts) - 1, 0, -1):  # the longest dotted parent that has names
        head = ".".join(parts[:depth]) + "."
        lo, hi = bisect_left(names, head), bisect_left(names, head[:-1] + "/")  # "/" sorts right after "."
        if hi > lo:
            near = names[lo:hi]
            rest = op[len(head):]
            for cut in range(1, min(len(rest), 3) + 1):  # a huge family (torch.*): same first letters
                if len(near) <= SUGGEST_POOL:
                    break
                narrower = head + rest[:cut]
                lo, hi = bisect_left(names, narrower), bisect_left(names, narrower + "\U0010ffff")
                near = names[lo:hi] if hi > lo else near[:0]
            break
    if not near or len(near) > SUGGEST_POOL:  # fall back to the names records cite
        near = [n for n in near if n in idx["sources"]] or curated
    found = difflib.get_close_matches(op, near, n=5, cutoff=0.6)
    if len(found) < 3:
        found += [n for n in tails.get(parts[-1], ()) if n not in found][:3]
    return tuple(found[:5])


def resolve(op: str, framework: str | None, idx: dict) -> tuple[str, tuple[str, ...]]:
    """Return (framework, source ids) for an op, or raise UnknownOpError."""
    record = idx["sources"].get(op)
    if record is not None and (framework is None or framework == record["framework"]):
        # A record id that is also an op name (torch.cumsum) answers for the op: every record that
        # lists it (a compiled-kernel record beside the eager one), not the namesake record alone.
        named = idx["names"].get(record["framework"], {}).get(op)
        if named and op in named:
            return record["framework"], named
        return record["framework"], (op,)
    inferred = framework or infer_framework(op, idx)
    if inferred is None:
        raise UnknownOpError(
            op, None, suggest(op, None, idx),
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
    raise UnknownOpError(op, inferred, suggest(op, inferred, idx))


def op_parameters(op: str, framework: str, idx: dict) -> tuple | None:
    """The op's parameters (kb/signatures.py): from the index for record ops, else the file."""
    memo_key = (op, framework)
    if memo_key in _params:
        return _params[memo_key]
    fields = detail(idx, "params", {}).get(framework, {}).get(op)
    if fields is None and framework in idx["prefixes"]:
        fields = signatures.table(framework).get(op)
    found = None if fields is None else signatures.parse(fields)
    if len(_params) < LIMIT:
        _params[memo_key] = found
    return found
