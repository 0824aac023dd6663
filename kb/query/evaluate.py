"""Evaluating resolved records at a release: each record's range, its call conditions, and the
answer they make together (`answer`: steps 2-4 of kb/query/__init__.py's docstring)."""

from kb import versions
from kb.entries import (
    BASIS, BATCH_INVARIANT, DETERMINISTIC, HI, LO, NOTE, RAISES, READ, SOLUTIONS, SWITCH, VARIES, VARIES_WITH,
    VERSIONS, WHEN,
)
from kb.model import Reference, SourceStatus, Status
from kb.query.cover import recipe, union
from kb.query.headline import headline
from kb.query.names import op_parameters
from kb.query.state import Lazy, light, memo

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers treat it as True)
if TYPE_CHECKING:
    # The shapes below are for the checker and readers: on the query path they stay plain tuples
    # (kb/entries.py: `import kb` may not import collections or typing).
    #
    # What `_prepare` makes of one source, once: (its answer where no range matches, per range
    # entry (by id) its answer and the codes that fix it there, its references interned).
    Prepared = tuple[SourceStatus, dict[int, tuple[SourceStatus, frozenset[str]]], tuple[Reference, ...]]
    # What `_group` makes of the sources that apply on a device: ((source, prepared), ...), their
    # references deduplicated by identity, their ids.
    Group = tuple[tuple[tuple[dict, Prepared], ...], tuple[Reference, ...], tuple[str, ...]]

calls = Lazy("calls", globals())  # a query whose records have no call conditions never needs it
evidence = Lazy("query.evidence", globals())  # only an answer whose records have runs or static evidence needs it
norecord = Lazy("query.norecord", globals())  # only an op no record covers, or a range read in the code, needs it
tfkeras = Lazy("query.tfkeras", globals())  # only a tf.keras.* answer at Keras 3 needs it

_prepared: "dict[str, Prepared]" = memo()
_interned: dict[tuple, Reference] = memo()
_conditioned: dict[tuple, SourceStatus] = memo()
_alternatives: dict[tuple, tuple] = memo()
_groups: "dict[tuple, Group]" = memo()
_known_keys: dict[int, frozenset] = memo()


def _prepare(source: dict) -> "Prepared":
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
            per_range[id(entry)] = (_make(source, entry), frozenset(entry[SOLUTIONS]))
    refs = []
    sources = light()["sources"]
    cited = list(source["references"])
    for cause in source["caused_by"]:  # lint KB013 guarantees they exist; tolerate a stale index
        cited.extend(sources[cause]["references"] if cause in sources else ())
    for ref in cited:
        reference = Reference(**{f: ref.get(f) for f in Reference._fields})
        refs.append(_interned.setdefault(reference._values(), reference))
    prepared = _prepared[source["id"]] = (_make(source, None), per_range, tuple(refs))
    return prepared


def _make(source: dict, entry: tuple | None, *, alternatives: tuple = (), applies: bool | None = True,
          depends: tuple = ()) -> SourceStatus:
    return SourceStatus(
        id=source["id"], title=source["title"], mechanism=source["mechanism"], pass_=source["pass"],
        summary=source["summary"], versions=entry[VERSIONS] if entry is not None else None,
        deterministic=bool(entry[DETERMINISTIC]) if entry is not None else None,
        solutions=tuple(entry[SOLUTIONS]) if entry is not None else (), raises=entry[RAISES] if entry is not None else None,
        note=entry[NOTE] if entry is not None else None,
        disputed=tuple(d["claim"] for d in source["disputes"]),
        batch_invariant=entry[BATCH_INVARIANT] if entry is not None else None, caused_by=source["caused_by"],
        when=calls.as_dicts(alternatives) if alternatives else (), condition=calls.text(alternatives) if alternatives else None,
        applies=applies, depends_on=depends, switch=entry[SWITCH] if entry is not None else None,
        varies=entry[VARIES] if entry is not None else None, varies_with=entry[VARIES_WITH] if entry is not None else (),
        basis=(entry[BASIS] or "documented") if entry is not None else None,
        read=norecord.code_reads(entry[READ]) if entry is not None and entry[READ] else (),
    )


def _conditioned_status(source: dict, entry: tuple | None, alternatives: tuple, applies: bool | None,
                        depends: tuple) -> SourceStatus:
    memo_key = (source["id"], id(entry), alternatives, applies, depends)
    found = _conditioned.get(memo_key)
    if found is None:
        found = _conditioned[memo_key] = _make(source, entry, alternatives=alternatives, applies=applies, depends=depends)
    return found


def _alternatives_for(source: dict, op: str, entry: tuple | None) -> tuple:
    """The record's conditions for this op in this range (kb/calls.py), memoized."""
    extra = entry[WHEN] if entry is not None else None
    if not extra and (not source["calls"] or op != source["id"] and all(
            ops and op not in ops for ops, _ in source["calls"])):
        return ()  # no pattern is about this op: every call (kb/calls.py for_op's rule, without importing it)
    memo_key = (source["id"], op, id(entry))
    found = _alternatives.get(memo_key)
    if found is None:
        found = _alternatives[memo_key] = calls.for_op(source["calls"], op, op == source["id"], extra)
    return found


def known(registry: dict) -> frozenset:
    """Release keys of a registry plus every series prefix ('2.1' for 2.1.4)."""
    found = _known_keys.get(id(registry))
    if found is None:
        series = {k[:end] for k in registry["keys"] for end in range(3, len(k) + 1)}
        # a bare major version ('2') is a series only where it has a release: 2.0 or 2.0.x
        majors = {k[:2] for k in series if len(k) >= 3 and k[2] == 0}
        found = _known_keys[id(registry)] = frozenset(series | majors)
    return found


def known_release(registry: dict, version: str) -> bool:
    """Whether `version` is a release (or a release series: '2.1', '2') of a compiled registry;
    the rule of the "not a known release" note. Raises ValueError for a version that is not one."""
    return versions.release_key(version) in known(registry)


def _group(ids: tuple[str, ...], device: str, idx: dict) -> "Group":
    """The sources that apply on `device`, prepared, with their deduplicated references."""
    memo_key = (ids, device)
    group = _groups.get(memo_key)
    if group is None:
        applying = [idx["sources"][i] for i in ids]
        applying = [s for s in applying if device == "any" or s["device"] in (device, "any")]
        prepared = [(s, _prepare(s)) for s in applying]
        references: dict[int, Reference] = {}
        for _, (_, _, refs) in prepared:
            for reference in refs:
                references[id(reference)] = reference
        group = _groups[memo_key] = (tuple(prepared), tuple(references.values()), tuple(s["id"] for s, _ in prepared))
    return group


def answer(op: str, version: str, *, key: tuple, framework: str, device: str, distribution: str | None,
           ids: tuple[str, ...], idx: dict, call: dict | None = None, params: tuple | None = None,
           keras: tuple | None = None) -> Status:
    """The Status for sources already resolved to `ids`: the core of `status()`, and of the site's
    whole-stack answer (every source of a framework at once). `key` is `version`'s release key
    (kb/versions.py); `call` is normalized and `params` are the op's parameters, when known.
    `keras` (kb/query/tfkeras.py `basis`): a `tf.keras.*` op that is Keras 3 at this release, whose
    Keras records are evaluated beside the TensorFlow ones, at the Keras release it names."""
    notes: list[str] = []
    registry = idx["registries"].get(f"{distribution}-{framework}" if distribution else framework)
    if registry is not None and key not in known(registry):
        notes.append(f"{version} is not a known {distribution or framework} release (latest known: {registry['latest']})")
    prepared, references, prepared_ids = _group(ids, device, idx)
    if keras is not None:
        notes.append(tfkeras.note(op, version, keras))
    keras_ids = keras[5] if keras is not None else ()
    if (ids or keras_ids) and not prepared and not (keras_ids and _group(keras_ids, device, idx)[0]):
        notes.append(f"the records for {op} concern another device than {device}")
    if call is not None and params is None and ids:
        notes.append(f"the KB does not know the parameters of {op}: parameters left out of the call are unknown")
    defaults = None if params is None else dict(params)
    groups = [(op, key, version, prepared, defaults, prepared_ids)]
    if keras is not None:
        keras_op, keras_version, keras_key = keras[:3]
        keras_prepared, _, keras_prepared_ids = _group(keras_ids, device, idx)
        keras_params = op_parameters(keras_op, "keras", idx) if call is not None and keras_ids else None
        groups.append((keras_op, keras_key, keras_version, keras_prepared,
                       None if keras_params is None else dict(keras_params), keras_prepared_ids))

    per_source = []
    needs: list[frozenset[str]] = []
    any_false = any_unknown = any_unsolved = False
    variant = unclaimed = depends = False
    excluded: list[str] = []
    named: list[tuple] = []  # every record's conditions, for calls.unnamed
    dropped: list[str] = []  # records whose op_versions leave this op out at this release
    for at_op, at_key, at_version, group_prepared, at_defaults, _ in groups:
        for source, (unknown, per_range, _) in group_prepared:
            limit = source["op_versions"].get(at_op) if source["op_versions"] else None
            if limit is not None and at_key is not None and not (
                    (limit[0] is None or limit[0] <= at_key) and (limit[1] is None or at_key < limit[1])):
                notes.append(f"{source['id']} does not apply to {at_op} in {at_version}: it does only in {limit[2]} ({limit[3]})")
                dropped.append(source["id"])
                continue
            ranges = source["distributions"].get(distribution, ()) if distribution else source["status"]
            if at_key is None:  # the Keras release of a TensorFlow release whose wheel was not read
                ranges = ()
            for entry in ranges:  # the evaluator of kb/versions.py, inlined: lo <= key < hi
                if (entry[LO] is None or entry[LO] <= at_key) and (entry[HI] is None or at_key < entry[HI]):
                    break
            else:
                entry = None
            alternatives = _alternatives_for(source, at_op, entry)
            named.append(alternatives)
            if alternatives:
                applies, missing = calls.evaluate(alternatives, call, at_defaults)
                if applies is False:
                    excluded.append(source["id"])
                    notes.append(f"{source['id']} does not apply to this call: {calls.why_not(alternatives, call, at_defaults)}"
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
                    notes.append(f"{source['id']} (calls under torch.compile only) has no range for {at_version}: unknown "
                                 "for compiled calls; ask with call={'compiled': 'inductor'}")
                    per_source.append(made)
                    continue
                any_unknown = unclaimed = True
                per_source.append(made or unknown)
            else:
                source_status, need = per_range[id(entry)]
                per_source.append(made or source_status)
                if entry[BATCH_INVARIANT] is False:
                    variant = True
                elif entry[BATCH_INVARIANT] is None:
                    unclaimed = True
                if not entry[DETERMINISTIC]:
                    any_false = True
                    if need:
                        needs.append(need)
                    else:
                        any_unsolved = True

    if dropped or len(groups) > 1:  # the references of the records that answer, deduplicated by identity
        references = tuple({id(ref): ref for _, _, _, group_prepared, _, _ in groups
                            for source, (_, _, refs) in group_prepared if source["id"] not in dropped
                            for ref in refs}.values())
    if call:
        notes.extend(calls.unnamed(call, named, params))
    if any_false:
        deterministic = False
    elif any_unknown:
        deterministic = None
    else:
        deterministic = True
    solutions = union(needs, idx)
    chosen = None if (any_unsolved or any_unknown) else recipe(needs, idx)
    silent = tuple(s.id for s in per_source if s.deterministic is False and s.switch == "silent")
    if silent:
        notes.extend(_silent_notes(per_source, framework, idx))
    shown: tuple = ()
    read: tuple = ()
    left_out = (*excluded, *dropped)
    marks = idx.get("evidence")
    for _, at_key, at_version, group_prepared, at_defaults, group_ids in groups:
        if at_key is None:  # a Keras release not known: no evidence can be of it
            continue
        if marks is not None and not any(p[0]["id"] in marks for p in group_prepared):
            continue  # kb/_index.py's marks: none of these records has evidence (kb/query/evidence.py unneeded)
        kept = group_prepared if not left_out else tuple(p for p in group_prepared if p[0]["id"] not in left_out)
        shown += evidence.verified(kept, at_key, device, idx, call=call, defaults=at_defaults, ids=None if left_out else group_ids)
        if not distribution:  # static evidence stays shown for a call a record excludes, not for a dropped op
            listed = group_prepared if not dropped else tuple(p for p in group_prepared if p[0]["id"] not in dropped)
            read += evidence.static(listed, at_key, at_version, idx, tuple(p[0]["id"] for p in listed))
    # How it is known (docs/api.md "basis"): a run of this call; code or a binary read at this release;
    # a record range that covers the release (or a record whose condition the call rules out); else nothing.
    # A "not deterministic" answer is known as well as the sources that make it so: a run of another,
    # deterministic source (a collective's reduction order that repeats) does not verify an NVLS record.
    deciding = {s.id for s in per_source if s.deterministic is False} if deterministic is False else None
    if deciding is not None:
        shown_for, read_for = tuple(e for e in shown if e.source in deciding), tuple(e for e in read if e.source in deciding)
    else:
        shown_for, read_for = shown, read
    matched = by_run = by_code = False
    code: tuple = ()
    for s in per_source:  # one pass: this runs for every answer
        if s.deterministic is None or (deciding is not None and s.id not in deciding):
            continue
        matched = True
        if s.basis == "verified":
            by_run = True
        elif s.basis == "static":
            by_code = True
            code += s.read
    if len(code) > 1:
        code = tuple({id(r): r for r in code}.values())
    basis = ("verified" if shown_for or by_run else "static" if read_for or by_code
             else "documented" if matched or excluded else "unverified")
    seen: tuple = ()
    guarantee = None
    if not per_source and not excluded and not distribution:
        # Nothing covers the op on this release and device: a sweep of the call, the kernel class read in
        # the code, or the framework's documented guarantee may still say something (kb/query/norecord.py).
        deterministic, basis, shown, code, seen, guarantee, depends = _no_record(
            op, framework, key, version, device, call, idx, notes, shown, depends)
        if deterministic is False:
            chosen = None  # a difference no record explains: no known fix (with no source at all, () as before)
    elif not per_source and excluded and not distribution and not shown and not read:
        # Every record's condition rules this call out (a dense torch.add, where a record covers a sparse
        # operand): the op's kernel class or a sweep of this call says more than "documented" if it can.
        spoken = _run_or_code(op, framework, key, version, device, call, idx, shown, depends)
        if spoken is not None:
            (deterministic, basis, shown, code, seen, guarantee, depends), said = spoken
            notes.extend(said)
            if deterministic is False:
                chosen = None
    elif deterministic is None and not distribution and _unknown_for_some_calls(per_source):
        # Only records about some calls (a sparse operand of torch.add) apply, and none has a range for
        # this release: the other calls are answered by the op's kernel class or its sweep where one
        # speaks, and the answer depends on the call (those calls stay unknown, said in a note).
        spoken = _run_or_code(op, framework, key, version, device, call, idx, shown, depends)
        if spoken is not None and spoken[0][0] is True:
            (deterministic, basis, shown, code, seen, guarantee, _), said = spoken
            depends = True
            notes.extend(said)
            notes.extend(f"{s.id} has no range for {version}: calls where {s.condition} are not known"
                         for s in per_source)
    elif deterministic is True and basis == "unverified":
        deterministic = None  # nothing says so: never "deterministic" without a basis
        chosen = None
    text = headline(deterministic=deterministic, basis=basis, sources=tuple(per_source), depends_on_call=depends,
                    seen=seen, guarantee=guarantee, call_given=call is not None, version=version)
    varies_with = tuple(dict.fromkeys(k for s in per_source if s.varies == "configuration" for k in s.varies_with))
    return Status(
        op=op, framework=framework, version=version, device=device, distribution=distribution,
        deterministic=deterministic, solutions=solutions, recipe=chosen, sources=tuple(per_source),
        references=references, verified=shown,
        notes=tuple(notes),
        batch_invariant=False if variant else (None if (unclaimed or deterministic is None or seen) else True),
        call=None if call is None else dict(call), depends_on_call=depends, excluded=tuple(excluded),
        static=read, silent=silent, basis=basis, varies_with=varies_with, headline=text, read=code,
    )


def _no_record(op: str, framework: str, key: tuple, version: str, device: str, call: dict | None, idx: dict,
               notes: list, shown: tuple, depends: bool) -> tuple:
    """(deterministic, basis, verified, read, seen, guarantee, depends_on_call) for an op that no record
    covers here: a sweep case that saw this call differ (False), the op's elementwise kernel class read
    in the code (True, static), sweep cases of this call that saw no difference (True, verified: a run,
    weaker than a code read), else None: "no known source, not verified", with the framework's
    documented guarantee under its switch noted where one covers the release."""
    same, differ, other = norecord.seen(op, framework, key, device, call, idx)
    classes = norecord.elementwise(op, framework, key, device, idx)
    guarantee = norecord.guarantee(framework, key, device, idx)
    if differ:
        notes.append(f"an operator sweep saw {op} differ from run to run for this call ({differ[0].file}); "
                     "no record describes it yet")
        return False, "verified", (*differ, *same), (), (), None, depends
    if classes:
        for title, what, listed_from, _ in classes:
            notes.append(f"{op} is {title}: {what} (listed from {listed_from})")
        reads = tuple({id(r): r for _, _, _, found in classes for r in found}.values())
        return True, "static", (*shown, *same), reads, (), None, depends
    if same:
        notes.append(f"no record names {op}: an operator sweep ran {'this call' if call is not None else 'it'} and "
                     "saw no difference; that covers only the calls, inputs, device and release that ran "
                     "(listed under verified), and is weaker than a code read")
        return True, "verified", same, (), same, None, depends or call is None
    if other:
        ran = "; ".join(dict.fromkeys(", ".join(f"{k}={v!r}" for k, v in (e.call or {}).items()) for e in other[:4]))
        notes.append(f"an operator sweep ran {op} on {version} for other calls only ({ran}): this call is not covered")
    if guarantee is not None:
        notes.append(f"{framework} documents for {guarantee['versions']}: {guarantee['claim']}"
                     + (f"; an op without a deterministic kernel raises {guarantee['raises']}" if guarantee["raises"] else "")
                     + f" (solution {guarantee['code']})")
        return None, "documented", shown, (), (), guarantee, depends
    return None, "unverified", shown, (), (), None, depends


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


def _run_or_code(op: str, framework: str, key: tuple, version: str, device: str, call: dict | None, idx: dict,
                 shown: tuple, depends: bool) -> tuple[tuple, list[str]] | None:
    """_no_record's answer and its notes where a sweep of the call or the kernel class read in the code
    speaks (basis verified or static); None where only a guarantee or nothing does."""
    said: list[str] = []
    found = _no_record(op, framework, key, version, device, call, idx, said, shown, depends)
    if found[0] is None or found[1] not in ("static", "verified"):
        return None
    return found, said


def _unknown_for_some_calls(per_source: list) -> bool:
    """Whether every applying record is unknown at this release and applies only to some calls that
    the question leaves open (its condition neither met nor ruled out)."""
    return bool(per_source) and all(s.deterministic is None and s.condition and s.applies is None for s in per_source)
