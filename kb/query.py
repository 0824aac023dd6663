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

from kb import signatures, versions
from kb.bounds import MAX_NAME, MAX_VERSION, check_text, echo
from kb.errors import UnknownOpError
from kb.model import Evidence, ModeEvidence, Reference, SourceStatus, StaticEvidence, Status

DEVICES = ("gpu", "cpu", "any")
DISTRIBUTIONS = ("ngc",)
_index: dict | None = None  # the whole index: kb/_index.py joined with kb/_details.py, or reset()'s
_core: dict | None = None  # what status() reads: kb/_index.py alone (or the whole index, after reset())
_inventory: dict[str, frozenset[str]] = {}
_cache: dict[tuple, Status] = {}
_keys: dict[str, tuple] = {}
_resolved: dict[tuple, tuple] = {}
_CACHE_LIMIT = 8192
_SUGGEST_POOL = 20_000  # names difflib compares per miss: under 0.1 s


class _Lazy:
    """kb/calls.py, imported on first use: a query whose records have no call conditions and
    that gives no `call=` never needs it (every module costs start-up time)."""

    def __getattr__(self, name: str):
        from kb import calls as module

        globals()["calls"] = module
        return getattr(module, name)


calls = _Lazy()


def index() -> dict:
    """The whole compiled index, as kb/compile.py built it (loads kb/_details.py on first use)."""
    global _index
    if _index is None:
        with _no_gc():
            from kb._details import DETAILS

        _index = join_index(_light(), DETAILS)
    return _index


class _no_gc:
    """The garbage collector paused while a generated module builds its literal: it would
    otherwise walk the growing index again and again (a third of kb/_index.py's load time)."""

    def __enter__(self) -> None:
        import gc

        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was:
            import gc

            gc.enable()


def _light() -> dict:
    """The part of the index every query reads (kb/_index.py): the details module, with the
    run and static evidence, parameters and the records' prose, loads only when a query needs it."""
    global _core
    if _core is None:
        if _index is not None:
            _core = _index
        else:
            with _no_gc():
                from kb._index import INDEX

            _core = INDEX
    return _core


def _detail(idx: dict, name: str, default=None):
    """A part of the index that kb/_index.py (which has `evidence` instead) leaves to kb/_details.py."""
    if name in idx:
        return idx[name]
    return index().get(name, default) if "evidence" in idx else default


# What kb/_index.py keeps of each record (what a Status shows); the rest is in kb/_details.py.
CORE_SOURCE_FIELDS = frozenset((
    "id", "framework", "title", "device", "pass", "mechanism", "summary", "calls", "status", "caused_by",
    "distributions", "disputes", "references",
))
DETAIL_KEYS = frozenset(("params", "runs", "flagged", "reviewed", "static", "static_wheels", "static_disagreements",
                         "static_unclaimed"))


def split_index(idx: dict) -> tuple[dict, dict]:
    """(core, details): the index as kb/_index.py and kb/_details.py hold it; `join_index` undoes it.

    The core adds `evidence`: per record with runs or static evidence, the (release key, device)
    of each run and the release key of each static evidence file, so that a query tells whether
    any evidence matches before loading the details (most queries need none).
    """
    runs, static = idx.get("runs", {}), idx.get("static", {})
    marks = {}
    for sid in idx["sources"]:
        measured = tuple(dict.fromkeys((run["key"], run["device"]) for run in runs.get(sid, ())))
        read = tuple(dict.fromkeys(entry[0] for entry in static.get(sid, ())))
        if measured or read:
            marks[sid] = (measured, read)
    core: dict = {}
    for name, value in idx.items():
        if name == "sources":
            value = {sid: {f: v for f, v in source.items() if f in CORE_SOURCE_FIELDS} for sid, source in value.items()}
        if name not in DETAIL_KEYS:
            core[name] = value
    core["evidence"] = marks
    fields = tuple(dict.fromkeys(f for source in idx["sources"].values() for f in source))
    details = {
        "keys": tuple(idx),
        "source_fields": fields,
        "sources": {sid: {f: v for f, v in source.items() if f not in CORE_SOURCE_FIELDS}
                    for sid, source in idx["sources"].items()},
        **{name: value for name, value in idx.items() if name in DETAIL_KEYS},
    }
    return core, details


def join_index(core: dict, details: dict) -> dict:
    """The whole index from its two parts, equal to what kb/compile.py built, key order included."""
    more = details["sources"]
    fields = details["source_fields"]
    sources = {
        sid: {f: source[f] if f in source else more[sid][f] for f in fields if f in source or f in more.get(sid, ())}
        for sid, source in core["sources"].items()
    }
    return {name: sources if name == "sources" else core[name] if name in core else details[name]
            for name in details["keys"]}


def reset(new_index: dict | None = None) -> None:
    """Forget every memo (and optionally swap the index), e.g. after `kb build` in-process."""
    global _index, _core
    _index = _core = new_index
    for memo in (_known_frameworks, _pools, _cache, _keys, _resolved, _prepared, _interned, _known_keys, _recipes,
                 _groups, _unions, _evidence, _alternatives, _conditioned, _params, _shown, _statics):
        memo.clear()


def _infer_framework(op: str, idx: dict) -> str | None:
    for framework, prefixes in idx["prefixes"].items():
        if op.startswith(prefixes):
            return framework
    return None


_known_frameworks: list[tuple[str, ...]] = []


def _frameworks() -> tuple[str, ...]:
    """Every framework the index knows (a tuple: `x in` it never hashes caller input)."""
    if not _known_frameworks:
        idx = _light()
        names = {*idx["prefixes"], *idx["names"], *(r for r in idx["registries"] if "-" not in r)}
        _known_frameworks.append(tuple(sorted(names)))
    return _known_frameworks[0]


def inventory(framework: str) -> frozenset[str]:
    """Public names of a framework (data/api/<framework>.txt); read only on a miss.

    The file name is the index's own spelling of a known framework, never the caller's
    string: a name such as '../../tmp/secret' must not select a file (docs/security.md).
    """
    known = _frameworks()
    if framework not in known:
        return frozenset()
    if framework not in _inventory:
        import os.path  # already loaded at start-up; pathlib would pull in `re`

        trusted = known[known.index(framework)]
        here = os.path.dirname(os.path.abspath(__file__))
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


_pools: dict[str | None, tuple] = {}


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


def _suggest(op: str, framework: str | None, idx: dict) -> tuple[str, ...]:
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
                if len(near) <= _SUGGEST_POOL:
                    break
                narrower = head + rest[:cut]
                lo, hi = bisect_left(names, narrower), bisect_left(names, narrower + "\U0010ffff")
                near = names[lo:hi] if hi > lo else near[:0]
            break
    if not near or len(near) > _SUGGEST_POOL:  # fall back to the names records cite
        near = [n for n in near if n in idx["sources"]] or curated
    found = difflib.get_close_matches(op, near, n=5, cutoff=0.6)
    if len(found) < 3:
        found += [n for n in tails.get(parts[-1], ()) if n not in found][:3]
    return tuple(found[:5])


def _resolve(op: str, framework: str | None, idx: dict) -> tuple[str, tuple[str, ...]]:
    """Return (framework, source ids) for an op, or raise UnknownOpError."""
    record = idx["sources"].get(op)
    if record is not None and (framework is None or framework == record["framework"]):
        # A record id that is also an op name (torch.cumsum) answers for the op: every record that
        # lists it (a compiled-kernel record beside the eager one), not the namesake record alone.
        named = idx["names"].get(record["framework"], {}).get(op)
        if named and op in named:
            return record["framework"], named
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


_prepared: dict[str, tuple] = {}
_interned: dict[tuple, Reference] = {}


def _prepare(source: dict) -> tuple:
    """Per source, once: its unknown-answer SourceStatus, one per range, and its references.

    These depend only on the index, so every query shares them; references are interned
    so the same citation from two sources is one object (deduplicated by identity). The
    SourceStatus objects here are for calls the source applies to unconditionally; a
    conditioned answer is made (and memoized) by `_conditioned_status`.
    """
    prepared = _prepared.get(source["id"])
    if prepared is not None:
        return prepared
    per_range = {}
    for ranges in (source["status"], *source["distributions"].values()):
        for entry in ranges:
            per_range[id(entry)] = (_make(source, entry, (), True, ()), frozenset(entry[3]))
    refs = []
    sources = _light()["sources"]
    cited = list(source["references"])
    for cause in source["caused_by"]:  # lint KB013 guarantees they exist; tolerate a stale index
        cited.extend(sources[cause]["references"] if cause in sources else ())
    for ref in cited:
        reference = Reference(**{f: ref.get(f) for f in Reference._fields})
        refs.append(_interned.setdefault(reference._values(), reference))
    prepared = _prepared[source["id"]] = (_make(source, None, (), True, ()), per_range, tuple(refs))
    return prepared


def _make(source: dict, entry: tuple | None, alternatives: tuple, applies: bool | None, depends: tuple) -> SourceStatus:
    matched, codes, deterministic, raises, note, invariant = (
        entry[2:8] if entry else (None, (), None, None, None, None)
    )
    switch = entry[9] if entry is not None and len(entry) > 9 else None
    return SourceStatus(
        id=source["id"], title=source["title"], mechanism=source["mechanism"], pass_=source["pass"],
        summary=source["summary"], versions=matched,
        deterministic=None if entry is None else bool(deterministic),
        solutions=tuple(codes), raises=raises, note=note,
        disputed=tuple(d["claim"] for d in source["disputes"]),
        batch_invariant=invariant, caused_by=source["caused_by"],
        when=calls.as_dicts(alternatives) if alternatives else (), condition=calls.text(alternatives) if alternatives else None,
        applies=applies, depends_on=depends, switch=switch,
    )


_conditioned: dict[tuple, SourceStatus] = {}


def _conditioned_status(source: dict, entry: tuple | None, alternatives: tuple, applies: bool | None,
                        depends: tuple) -> SourceStatus:
    memo = (source["id"], id(entry), alternatives, applies, depends)
    found = _conditioned.get(memo)
    if found is None:
        found = _conditioned[memo] = _make(source, entry, alternatives, applies, depends)
    return found


_alternatives: dict[tuple, tuple] = {}


def _alternatives_for(source: dict, op: str, entry: tuple | None) -> tuple:
    """The record's conditions for this op in this range (kb/calls.py), memoized."""
    extra = entry[8] if entry is not None and len(entry) > 8 else None
    if not source["calls"] and not extra:
        return ()
    memo = (source["id"], op, id(entry))
    found = _alternatives.get(memo)
    if found is None:
        found = _alternatives[memo] = calls.for_op(source["calls"], op, op == source["id"], extra)
    return found


_params: dict[tuple, tuple] = {}


def _parameters(op: str, framework: str, idx: dict) -> tuple | None:
    """The op's parameters (kb/signatures.py): from the index for record ops, else the file."""
    memo = (op, framework)
    if memo in _params:
        return _params[memo]
    fields = _detail(idx, "params", {}).get(framework, {}).get(op)
    if fields is None and framework in idx["prefixes"]:
        fields = signatures.table(framework).get(op)
    found = None if fields is None else signatures.parse(fields)
    if len(_params) < _CACHE_LIMIT:
        _params[memo] = found
    return found


def parameters(op: str, framework: str | None = None) -> tuple | None:
    """The parameters of `op` in order, each `(name, default)`; `default` is a plain literal,
    `kb.NO_DEFAULT` (must be passed) or `kb.UNKNOWN_DEFAULT` (not a plain literal); variadic
    ones keep their stars (`**kwargs`). None when the KB knows the op but not its signature;
    UnknownOpError for an unknown name. Used to map positional arguments to names.
    """
    if not isinstance(op, str) or not op:
        raise ValueError("op must be a non-empty string such as 'torch.nn.functional.interpolate'")
    check_text("op", op, MAX_NAME, example="torch.nn.functional.interpolate")  # bounded as status() is
    if framework is not None and framework not in _frameworks():
        check_text("framework", framework, MAX_NAME, example="pytorch")
        raise ValueError(f"framework must be one of {', '.join(_frameworks())}, not {echo(framework)}")
    idx = _light()
    fw, _ = _resolve(op, framework, idx)
    return _parameters(op, fw, idx)


_known_keys: dict[int, frozenset] = {}


def solution(code: str) -> dict | None:
    """What a solution code means: title, kind, how, snippet (None for a code the KB lacks).

    For people reading an answer: `kb status` prints this under the recipe."""
    found = index()["solutions"].get(code)
    return dict(found) if found is not None else None


def _known(registry: dict) -> frozenset:
    """Release keys of a registry plus every series prefix ('2.1' for 2.1.4)."""
    known = _known_keys.get(id(registry))
    if known is None:
        series = {k[:end] for k in registry["keys"] for end in range(3, len(k) + 1)}
        # a bare major version ('2') is a series only where it has a release: 2.0 or 2.0.x
        majors = {k[:2] for k in series if len(k) >= 3 and k[2] == 0}
        known = _known_keys[id(registry)] = frozenset(series | majors)
    return known


def known_release(registry: dict, version: str) -> bool:
    """Whether `version` is a release (or a release series: '2.1', '2') of a compiled registry;
    the rule of the "not a known release" note. Raises ValueError for a version that is not one."""
    return versions.release_key(version) in _known(registry)


_recipes: dict[tuple, tuple[str, ...]] = {}


def _recipe(needs: list[frozenset[str]], idx: dict) -> tuple[str, ...]:
    memo = tuple(needs)
    found = _recipes.get(memo)
    if found is None:
        found = _recipes[memo] = _smallest_cover(needs, idx)
    return found


MAX_EXACT = 12
"""Exhaustive search over at most this many candidate codes (2^12 subsets); beyond it (a whole
code base's findings, `kb scan`) the cover is greedy: most needs covered first."""


def _smallest_cover(needs: list[frozenset[str]], idx: dict) -> tuple[str, ...]:
    return smallest_cover(needs, idx["solutions"], idx["order"])


def _combinations(items: list, size: int):
    """itertools.combinations(items, size), in its order (itertools costs start-up time)."""
    n = len(items)
    if size > n:
        return
    indices = list(range(size))
    yield tuple(items[i] for i in indices)
    while True:
        for i in reversed(range(size)):
            if indices[i] != i + n - size:
                break
        else:
            return
        indices[i] += 1
        for j in range(i + 1, size):
            indices[j] = indices[j - 1] + 1
        yield tuple(items[i] for i in indices)


def smallest_cover(needs: list[frozenset[str]], solutions: dict, order: tuple[str, ...]) -> tuple[str, ...]:
    """Fewest codes such that every need holds one of them or one they imply; ties go to the
    lower total preference; the codes come in the order a user applies them."""
    codes = sorted(set().union(*needs)) if needs else []
    if len(codes) > MAX_EXACT:
        chosen: list[str] = []
        left = list(needs)
        while left:
            best_code = max(codes, key=lambda c: (sum(1 for n in left if c in n or n & set(solutions[c]["implies"])),
                                                  -solutions[c]["preference"]))
            chosen.append(best_code)
            covered = {best_code, *solutions[best_code]["implies"]}
            left = [n for n in left if not n & covered]
        return tuple(sorted(chosen, key=order.index))
    for size in range(0, len(codes) + 1):
        best = None
        for combo in _combinations(codes, size):
            covered = set(combo)
            for code in combo:
                covered.update(solutions[code]["implies"])
            if all(need & covered for need in needs):
                rank = (sum(solutions[c]["preference"] for c in combo), combo)
                if best is None or rank < best:
                    best = rank
        if best is not None:
            return tuple(sorted(best[1], key=order.index))
    return ()  # unreachable: every need is non-empty, so all codes together cover them


def status(
    op: str,
    version: str,
    *,
    framework: str | None = None,
    device: str = "gpu",
    distribution: str | None = None,
    call: dict | None = None,
) -> Status:
    """Is `op` run-to-run reproducible in `version`, and what makes it so?

    `distribution="ngc"` reads `version` as an NGC container version (e.g. "20.03").
    `call` describes how the op is called (docs/calls.md): parameter names with literal
    values, `input.ndim`, `input.dtype`, `backend`; None means unknown.
    Raises UnknownOpError (a LookupError) for an unknown name and ValueError for a
    version that is not a version, an unknown device/distribution or a bad call.
    """
    # Only arguments that passed the checks below are ever cached, so a hit needs no check.
    # The key holds only plain values with their types (4.0 == 4 and True == 1 hash alike, so
    # a key of values alone would let an answer for 4 answer a call the checks refuse for
    # 4.0); anything else (a subclass, an object whose __hash__ raises) is never cached.
    cache_key = hit = None
    if (type(op) is str and type(version) is str and type(device) is str
            and (framework is None or type(framework) is str) and (distribution is None or type(distribution) is str)):
        if call is None:
            cache_key = (op, version, framework, device, distribution, None)
        elif type(call) is dict and all(type(k) is str and type(v) in _PLAIN for k, v in call.items()):
            cache_key = (op, version, framework, device, distribution,
                         tuple((k, type(v), v) for k, v in call.items()))
        if cache_key is not None:
            hit = _cache.get(cache_key)
    if hit is not None:
        return hit
    # Checked before anything reads a file: a framework name selects data/api/<framework>.txt,
    # so it must be a known one.
    if not (type(op) is str and type(version) is str and 0 < len(op) <= MAX_NAME and 0 < len(version) <= MAX_VERSION
            and op.isascii() and version.isascii()):
        check_text("op", op, MAX_NAME, example="tf.nn.bias_add")
        check_text("version", version, MAX_VERSION, example="2.1")
    if framework is not None and framework not in _frameworks():
        check_text("framework", framework, MAX_NAME, example="tensorflow")
        raise ValueError(f"framework must be one of {', '.join(_frameworks())}, not {echo(framework)}")
    if device not in DEVICES:
        check_text("device", device, MAX_NAME, example="gpu")
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {echo(device)}")
    if distribution is not None and distribution not in DISTRIBUTIONS:
        check_text("distribution", distribution, MAX_NAME, example="ngc")
        raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)} or None, not {echo(distribution)}")
    given = None if call is None else calls.normalize(call)
    key = _keys.get(version)
    if key is None:
        key = versions.release_key(version)
        if len(_keys) < _CACHE_LIMIT:
            _keys[version] = key
    idx = _light()
    resolved = _resolved.get((op, framework))
    if resolved is None:
        resolved = _resolve(op, framework, idx)
        if len(_resolved) < _CACHE_LIMIT:
            _resolved[(op, framework)] = resolved
    framework, ids = resolved
    params = None
    if given is not None:
        params = _parameters(op, framework, idx)
        params = calls.check_keys(op, given, params)  # the form the call is of (kb/calls.py, bind)
    result = answer(op, version, key, framework, device, distribution, ids, idx, given, params)
    if cache_key is not None:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[cache_key] = result
    return result


_groups: dict[tuple, tuple] = {}
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _group(ids: tuple[str, ...], device: str, idx: dict) -> tuple:
    """The sources that apply on `device`, prepared, with their deduplicated references."""
    memo = (ids, device)
    group = _groups.get(memo)
    if group is None:
        applying = [idx["sources"][i] for i in ids]
        applying = [s for s in applying if device == "any" or s["device"] in (device, "any")]
        prepared = [(s, _prepare(s)) for s in applying]
        references: dict[int, Reference] = {}
        for _, (_, _, refs) in prepared:
            for reference in refs:
                references[id(reference)] = reference
        group = _groups[memo] = (tuple(prepared), tuple(references.values()), tuple(s["id"] for s, _ in prepared))
    return group


def answer(op, version, key, framework, device, distribution, ids, idx, call=None, params=None) -> Status:
    """The Status for sources already resolved to `ids`: the core of `status()`, and of the site's
    whole-stack answer (every source of a framework at once)."""
    notes: list[str] = []
    registry = idx["registries"].get(f"{distribution}-{framework}" if distribution else framework)
    if registry is not None and key not in _known(registry):
        notes.append(f"{version} is not a known {distribution or framework} release (latest known: {registry['latest']})")
    prepared, references, prepared_ids = _group(ids, device, idx)
    if ids and not prepared:
        notes.append(f"the records for {op} concern another device than {device}")
    if call is not None and params is None and ids:
        notes.append(f"the KB does not know the parameters of {op}: parameters left out of the call are unknown")
    defaults = None if params is None else dict(params)

    per_source = []
    needs: list[frozenset[str]] = []
    any_false = any_unknown = any_unsolved = False
    variant = unclaimed = depends = False
    excluded: list[str] = []
    named: list[tuple] = []  # every record's conditions, for calls.unnamed
    for source, (unknown, per_range, _) in prepared:
        ranges = source["distributions"].get(distribution, ()) if distribution else source["status"]
        for entry in ranges:  # the evaluator of kb/versions.py, inlined: lo <= key < hi
            if (entry[0] is None or entry[0] <= key) and (entry[1] is None or key < entry[1]):
                break
        else:
            entry = None
        alternatives = _alternatives_for(source, op, entry)
        named.append(alternatives)
        if alternatives:
            applies, missing = calls.evaluate(alternatives, call, defaults)
            if applies is False:
                excluded.append(source["id"])
                notes.append(f"{source['id']} does not apply to this call: {calls.why_not(alternatives, call, defaults)}"
                             f" (it applies when {calls.text(alternatives)})")
                continue
            if applies is None:
                depends = True
            made = _conditioned_status(source, entry, alternatives, applies, missing)
        else:
            made = None
        if entry is None:
            if made is not None and made.applies is None and call is None and _compiled_only(alternatives):
                # A record of compiled kernels with nothing known for this version: listed (it may
                # apply under torch.compile), but an eager answer is not made unknown by it.
                notes.append(f"{source['id']} (calls under torch.compile only) has no range for {version}: unknown "
                             "for compiled calls; ask with call={'compiled': 'inductor'}")
                per_source.append(made)
                continue
            any_unknown = unclaimed = True
            per_source.append(made or unknown)
        else:
            source_status, need = per_range[id(entry)]
            per_source.append(made or source_status)
            if entry[7] is False:
                variant = True
            elif entry[7] is None:
                unclaimed = True
            if not entry[4]:
                any_false = True
                if need:
                    needs.append(need)
                else:
                    any_unsolved = True

    if call:
        notes.extend(calls.unnamed(call, named, params))
    if any_false:
        deterministic = False
    elif any_unknown:
        deterministic = None
    else:
        deterministic = True
    solutions = _union(needs, idx)
    recipe = None if (any_unsolved or any_unknown) else _recipe(needs, idx)
    kept = prepared if not excluded else tuple(p for p in prepared if p[0]["id"] not in excluded)
    silent = tuple(s.id for s in per_source if s.deterministic is False and s.switch == "silent")
    if silent:
        notes.extend(_silent_notes(per_source, framework, idx))
    verified = _verified(kept, key, device, idx, call, defaults, None if excluded else prepared_ids)
    static = () if distribution else _static(prepared, key, version, idx, prepared_ids)
    basis = "verified" if verified else "static" if static else "documented" if ids else "unverified"
    return Status(
        op=op, framework=framework, version=version, device=device, distribution=distribution,
        deterministic=deterministic, solutions=solutions, recipe=recipe, sources=tuple(per_source),
        references=references, verified=verified,
        notes=tuple(notes),
        batch_invariant=False if variant else (None if unclaimed else True),
        call=None if call is None else dict(call), depends_on_call=depends, excluded=tuple(excluded),
        static=static, silent=silent, basis=basis,
    )


def _silent_notes(per_source: list, framework: str, idx: dict) -> list[str]:
    """One line per source the determinism switch does not fix (docs/records.md, `switch`)."""
    switch = " / ".join(idx.get("switches", {}).get(framework, ())[:1]) or "the determinism switch"
    out = []
    for s in per_source:
        if s.deterministic is False and s.switch == "silent":
            fix = ("what does: " + " or ".join(s.solutions)) if s.solutions else "no known fix (NS)"
            out.append(f"{s.id} is NOT fixed by the deterministic switch ({switch}): results still differ under it, "
                       f"with no error; {fix}")
    return out


def _compiled_only(alternatives: tuple) -> bool:
    """Every alternative requires a compiled call (`compiled` without None among its values)."""
    return all(any(key == "compiled" and None not in values for key, values in alt) for alt in alternatives)


_evidence: dict[str, tuple] = {}


def _evidence_of(source_id: str, idx: dict) -> tuple:
    """(release key, device, Evidence) per run of a source, built once from the index."""
    found = _evidence.get(source_id)
    if found is None:
        idx = {"runs": _detail(idx, "runs", {})}
        found = _evidence[source_id] = tuple(
            (
                run["key"], run["device"],
                Evidence(**{
                    **{f: run.get(f) for f in Evidence._fields if f not in ("modes", "contradicts")},
                    "modes": tuple(ModeEvidence(**m) for m in run["modes"]),
                    "contradicts": tuple(run["contradicts"]),
                }),
            )
            for run in idx.get("runs", {}).get(source_id, ())
        )
    return found


def _verified(prepared: tuple, key: tuple, device: str, idx: dict, call: dict | None = None,
              defaults: dict | None = None, ids: tuple | None = None) -> tuple:
    """Evidence measured on the queried release (same key, or a patch of the queried
    series: 2.11 shows runs of 2.11.0 and 2.11.1) and on the queried device, for the
    queried call: a case whose call disagrees with it is left out (docs/calls.md)."""
    marks = idx.get("evidence")
    if not (idx.get("runs") if marks is None else marks):
        return ()
    memo = (tuple(source["id"] for source, _ in prepared) if ids is None else ids, key, device)
    found = _shown.get(memo)
    if found is None:
        found = []
        for source, _ in prepared:
            if marks is not None and not any(  # kb/_index.py's marks: no run here, no details to load
                    (device == "any" or run_device == device) and _same_release(run_key, key)
                    for run_key, run_device in marks.get(source["id"], ((), ()))[0]):
                continue
            for run_key, run_device, evidence in _evidence_of(source["id"], idx):
                if (device == "any" or run_device == device) and _same_release(run_key, key):
                    found.append(evidence)
        found = tuple(found)
        if len(_shown) < _CACHE_LIMIT:
            _shown[memo] = found
    if call is None:
        return found
    return tuple(e for e in found if _case_agrees(e, call, defaults))


_shown: dict[tuple, tuple] = {}


def _same_release(run_key: tuple, key: tuple) -> bool:
    """A series query (2.0, 2.11) matches its own patches (2.11.0, 2.11.1), not 2.0 -> 2.11:
    keys drop trailing zeros, so compare (epoch, major, minor) padded; a patch query matches
    that patch only."""
    if len(key) > 3:
        return run_key == key
    return (run_key + (0, 0, 0))[:3] == (key + (0, 0, 0))[:3]


def _case_agrees(evidence: Evidence, call: dict, defaults: dict | None) -> bool:
    """A case speaks for a call when no fact the call states (or defaults) differs from it."""
    case = evidence.call
    if case is None:
        return call.get("compiled") is None  # runs before cases: eager calls
    if case.get("compiled") != call.get("compiled"):  # absent = eager, on both sides
        return False
    for key, value in case.items():
        if key in call:
            if not calls.same(call[key], value):
                return False
        elif defaults is not None and key in defaults and not calls.same(defaults[key], value):
            default = defaults[key]
            if default is not signatures.NO_DEFAULT and default is not signatures.UNKNOWN_DEFAULT:
                return False
    return True


def _static(prepared: tuple, key: tuple, version: str, idx: dict, ids: tuple | None = None) -> tuple:
    """Static evidence (`kb verify --static`) of the queried release: the same release, or every
    release read in the queried series (2.4 shows what the 2.4.0 and 2.4.1 wheels hold; 2.0 only
    2.0.x, although keys drop trailing zeros)."""
    marks = idx.get("evidence")
    if not (idx.get("static") if marks is None else marks):
        return ()
    width = 1 + max(len(key) - 1, version.strip().count(".") + 1)
    key = (key + (0,) * width)[:width]
    memo = (tuple(source["id"] for source, _ in prepared) if ids is None else ids, key)
    found = _statics.get(memo)
    if found is None:
        if marks is not None:  # kb/_index.py's marks: the details load only when a release matches
            prepared = tuple(p for p in prepared if any(
                (read + (0,) * width)[:width] == key for read in marks.get(p[0]["id"], ((), ()))[1]))
        found = _static_uncached(prepared, key, width, _detail(idx, "static", {}), idx) if prepared else ()
        if len(_statics) < _CACHE_LIMIT:
            _statics[memo] = found
    return found


_statics: dict[tuple, tuple] = {}


def _static_uncached(prepared: tuple, key: tuple, width: int, table: dict, idx: dict) -> tuple:
    wheels = _detail(idx, "static_wheels", {})
    out = []
    for source, _ in prepared:
        for key_, release, file, found, missing, bypassed in table.get(source["id"], ()):
            if (key_ + (0,) * width)[:width] == key:
                wheel, digest = (wheels.get(file) or (("", ""),))[0]
                out.append(StaticEvidence(
                    source=source["id"], framework=source["framework"], release=release, file=file,
                    found=tuple((name, wheel, digest, members) for name, members in found),
                    missing=missing, bypassed_by=bypassed,
                ))
    return tuple(out)


_unions: dict[tuple, tuple[str, ...]] = {}


def _union(needs: list[frozenset[str]], idx: dict) -> tuple[str, ...]:
    """Every code that fixes at least one source, in the order a user applies them."""
    memo = tuple(needs)
    found = _unions.get(memo)
    if found is None:
        order = idx["order"]
        found = _unions[memo] = tuple(sorted(set().union(*needs), key=order.index))
    return found
