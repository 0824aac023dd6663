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


def api_folders() -> tuple[tuple[str, str], ...]:
    """Where inventories may be, first found wins: (folder, the folder a file there must stay
    in). An installed wheel carries them in kb/api/, a checkout in data/api/ (pyproject.toml)."""
    import os.path  # already loaded at start-up; pathlib would pull in `re`

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # kb/
    data = os.path.join(os.path.dirname(here), "data")
    return ((os.path.join(here, "api"), here), (os.path.join(data, "api"), data))


def inventory(framework: str) -> frozenset[str]:
    """Public names of a framework (data/api/<framework>.txt.gz); read only on a miss.

    The file name is the index's own spelling of a known framework, never the caller's
    string: a name such as '../../tmp/secret' must not select a file (docs/security.md).
    Raises OSError naming the file when it is there but cannot be read (a link out of its
    folder, a device, a FIFO, unreadable, too large, corrupt gzip, not UTF-8): read as "no
    inventory", every name of the framework would be called a typo (R4-L14). kb/apinames.py
    reads it (`kb validate` reports the same refusals as KB012).
    """
    known = frameworks()
    if framework not in known:
        return frozenset()
    if framework not in _inventory:
        import os

        from kb import apinames

        trusted = known[known.index(framework)]
        names: frozenset[str] = frozenset()
        for folder, within in api_folders():
            candidate = apinames.path_of(folder, trusted)
            if not os.path.lexists(candidate):
                continue
            try:
                names = apinames.read(candidate, within)
            except ValueError as exc:
                raise _unreadable(os.path.relpath(candidate, os.path.dirname(within)), str(exc)) from None
            break
        _inventory[framework] = names
    return _inventory[framework]


def _unreadable(shown: str, why: str) -> OSError:
    return OSError(f"the API inventory {shown} could not be read: {why}; a name no record lists cannot be told from "
                   "a typo until it is restored (`kb validate` names the problem)")


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
    prefixed = infer_framework(op, idx)
    owner = record["framework"] if record is not None else prefixed
    if framework is not None and owner is not None and owner != framework:
        # A name of another framework: "did you mean" would offer the very name asked (R4-L15).
        whose = f"a {owner} name" if prefixed == owner else f"a {owner} record"
        raise UnknownOpError(op, framework, (), reason=(
            f"{op!r} is {whose}, not {framework}'s: ask with framework {owner}, or with none (the name says it)"))
    if inferred not in idx["names"] and not inventory(inferred):
        raise UnknownOpError(op, inferred, (), reason=f"the KB has no records or API inventory for {inferred} yet")
    raise UnknownOpError(op, inferred, tuple(n for n in suggest(op, inferred, idx) if n != op))


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
