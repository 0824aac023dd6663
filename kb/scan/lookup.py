"""One resolved call -> findings, through `kb.status(op, version, call=...)`.

Literal arguments become call facts, named by the op's parameters (`kb.parameters(op)` maps
positional arguments). An argument that is not a plain literal is left out of the facts:
a record whose condition names it may or may not apply, so it is reported as *possible*,
saying what it depends on. A fix the code base already applies covers a source; if the
source's range says the op raises under the framework's deterministic switch and the code
sets that switch, the finding says the call raises.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any, NamedTuple

import kb
from kb.calls import KINDS as DTYPE_KINDS, value_holds
from kb.query.state import memo
from kb.scan import switches
from kb.scan.rules import NONE, Rules, applies_to
from kb.scan.syntax import ONE_OF, Call, Unknown

LEVELS = {"note": 0, "possible": 1, "nondeterministic": 2, "raises": 3}


class Finding(NamedTuple):
    path: str
    line: int
    col: int
    cell: int | None
    op: str
    text: str
    record: str
    title: str
    framework: str
    version: str
    kind: str  # nondeterministic | raises | unknown | configuration (always a note: repeats run to run)
    certain: bool
    depends_on: tuple[str, ...]
    facts: dict
    answer: str
    fix: str
    codes: tuple[str, ...]
    conditions: tuple[str, ...]
    note: str = ""  # set: not a finding (a record's scan.data_note or unknown_shape), listed as a note with this reason

    @property
    def level(self) -> str:
        if self.note:
            return "note"
        if self.kind == "raises" and self.certain:
            return "raises"
        if self.kind == "nondeterministic" and self.certain:
            return "nondeterministic"
        return "possible"

    def to_dict(self) -> dict:
        out = self._asdict()
        out["level"] = self.level
        out["depends_on"] = list(self.depends_on)
        out["codes"] = list(self.codes)
        out["conditions"] = list(self.conditions)
        return out


def _supports_call() -> bool:
    try:
        return "call" in inspect.signature(kb.status).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


CALLS_SUPPORTED = _supports_call()

COMPILED_FACT = ("compiled", "inductor")
_COMPILED: dict[str, bool] = memo()


def compiled_fact_supported() -> bool:
    """Whether this KB answers the call fact `compiled: inductor` (issue 36's query layer). Until it
    does, a compiled call is answered as an eager one; the scan passes the fact as soon as it is accepted."""
    if "ok" not in _COMPILED:
        ok = False
        if CALLS_SUPPORTED:
            try:
                kb.status("torch.cumsum", "2.11", call={COMPILED_FACT[0]: COMPILED_FACT[1]})
                ok = True
            except (ValueError, TypeError, LookupError):
                ok = False
        _COMPILED["ok"] = ok
    return _COMPILED["ok"]


_PARAMETERS: dict[tuple[str, str], tuple[str, ...] | None] = memo()  # forgotten when kb.query's index changes


def parameters(op: str, framework: str) -> tuple[str, ...] | None:
    """The op's parameter names in order (None: not known to this KB version); memoized."""
    key = (op, framework)
    if key not in _PARAMETERS:
        _PARAMETERS[key] = _parameters(op, framework)
    return _PARAMETERS[key]


def _parameters(op: str, framework: str) -> tuple[str, ...] | None:
    fetch = getattr(kb, "parameters", None)
    if fetch is None:
        return None
    try:
        params = fetch(op, framework=framework)
    except (LookupError, ValueError, KeyError):
        return None
    if params is None:
        return None
    return tuple(p[0] if isinstance(p, (tuple, list)) else str(p) for p in params)


_SIGNATURES: dict[tuple[str, str], tuple[tuple[str, bool], ...] | None] = memo()
_FORMS: dict[tuple[str, str], tuple[tuple[tuple[str, bool], ...], ...]] = memo()


def signature(op: str, framework: str) -> tuple[tuple[str, bool], ...] | None:
    """(parameter, required) in order, as kb.parameters gives them (None: not known); memoized."""
    key = (op, framework)
    if key not in _SIGNATURES:
        found = None
        fetch = getattr(kb, "parameters", None)
        if fetch is not None:
            try:
                params = fetch(op, framework=framework)
            except (LookupError, ValueError, KeyError):
                params = None
            if params is not None:
                missing = getattr(kb, "NO_DEFAULT", None)
                found = tuple((p[0], missing is not None and p[1] is missing) if isinstance(p, (tuple, list))
                              else (str(p), False) for p in params)
        _SIGNATURES[key] = found
    return _SIGNATURES[key]


def _bound(params: tuple, method: bool) -> tuple:
    """A method's parameters without the receiver (`input`/`self` listed first for some Tensor methods)."""
    if method and params and (params[0][0] if isinstance(params[0], tuple) else params[0]) in ("input", "self"):
        return params[1:]
    return params


def forms(op: str, framework: str) -> tuple[tuple[tuple[str, bool], ...], ...] | None:
    """Each form of an overloaded op (`Tensor.scatter_(dim, index, src)` and `(dim, index, value)`) as
    (parameter, required) pairs; one form for most ops; None when the op's signature is not known."""
    sig = signature(op, framework)
    if sig is None:
        return None
    key = (op, framework)
    if key not in _FORMS:
        found = getattr(kb.parameters(op, framework=framework), "forms", ())
        missing = getattr(kb, "NO_DEFAULT", None)
        _FORMS[key] = tuple(tuple((p[0], p[1] is missing) for p in form) for form in found) if len(found) > 1 else (sig,)
    return _FORMS[key]


def _fits(call: Call, sig: tuple[tuple[str, bool], ...]) -> bool:
    """Whether the call's positional count, keywords and required parameters fit one form."""
    sig = _bound(sig, call.method)
    names = [n for n, _ in sig if not n.startswith("*")]
    if len(call.args) > len(names) and not any(n.startswith("*") and not n.startswith("**") for n, _ in sig):
        return False
    given = set(names[: len(call.args)])
    for key, _ in call.kwargs:
        if key not in names and not any(n.startswith("**") for n, _ in sig):
            return False
        given.add(key)
    return all(n in given for n, required in sig if required and not n.startswith("*"))


def can_be(call: Call, framework: str) -> bool:
    """False when the call's arity or keywords fit no form of the framework method's: a one-argument
    `.put(x)` on a queue is not `Tensor.put`, `accelerator.gather(x)` is not `Tensor.gather`."""
    if not call.method or call.star:
        return True
    found = forms(call.op, framework)
    return found is None or any(_fits(call, form) for form in found)


def form_of(call: Call, framework: str, params: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The parameter names a call's positional arguments take: those of the first form it fits (as
    PyTorch's argument parser tries an op's overloads in order), else of the op's first form."""
    found = forms(call.op, framework) if params is not None else None
    if not found or len(found) < 2 or call.star:
        return params
    form = next((f for f in found if _fits(call, f)), found[0])
    return tuple(n for n, _ in form)


def facts_of(call: Call, params: tuple[str, ...] | None) -> tuple[dict, dict[str, str]]:
    """(call facts, unknown parameter -> the source text it depends on)."""
    facts, unknown, _, _ = _facts(call, params)
    return facts, unknown


def _facts(call: Call, params: tuple[str, ...] | None) -> tuple[dict, dict[str, str], frozenset[str], dict[str, str]]:
    """facts_of's two, and the unknown parameters given a visible tensor, and the literal prefix of each
    unknown parameter an f-string gives."""
    if params is not None:
        params = _bound(params, call.method)
    facts: dict[str, object] = {}
    unknown: dict[str, str] = {}
    tensors: set[str] = set()
    prefixes: dict[str, str] = {}
    variadic_kw = params is not None and any(p.startswith("**") for p in params)
    names = [p for p in params if not p.startswith("*")] if params is not None else None
    for position, value in enumerate(call.args):
        if names is None:
            unknown[f"argument {position + 1}"] = value.text if isinstance(value, Unknown) else repr(value)
            continue
        if position >= len(names):
            break
        _put(names[position], value, facts, unknown, tensors, prefixes)
    for name, value in call.kwargs:
        if names is not None and name not in names:
            if not variadic_kw:
                unknown[name] = "not a parameter of this op"
            continue
        _put(name, value, facts, unknown, tensors, prefixes)
    facts.update(call.extra)  # facts the code fixes around the call (the sdpa_kernel backend)
    if getattr(call, "compiled", False) and compiled_fact_supported():
        facts[COMPILED_FACT[0]] = COMPILED_FACT[1]
    if call.star and names is not None:
        for name in names:
            if name not in facts and name not in unknown:
                unknown[name] = "*args/**kwargs"
    return facts, unknown, frozenset(tensors), prefixes


def _put(name: str, value: object, facts: dict, unknown: dict[str, str], tensors: set[str], prefixes: dict[str, str]) -> None:
    if isinstance(value, Unknown):
        unknown[name] = value.text
        if value.kind == "tensor":
            tensors.add(name)
        if value.prefix:
            prefixes[name] = value.prefix
    else:
        facts[name] = value


def _keys(obj: object) -> set[str]:
    """Every mapping key inside a record's structured condition (its `when`)."""
    found: set[str] = set()
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
    return found


def _query(op: str, version: str, framework: str, device: str, call: dict | None) -> kb.Status:
    if call:
        call = {k: v for k, v in call.items() if not isinstance(v, tuple)}  # tuples are the scanner's own facts
    if CALLS_SUPPORTED:
        try:
            return kb.status(op, version, framework=framework, device=device, call=call)
        except ValueError:
            if call:  # a key the op does not take after all: answer for the unknown call
                return kb.status(op, version, framework=framework, device=device, call=None)
            raise
    return kb.status(op, version, framework=framework, device=device)


_CANDIDATES: dict[tuple, list] = memo()


def _contradicted(when: Iterable[object] | None, facts: dict) -> bool:
    """True when every alternative of a record's condition has a key whose value the call
    states and the alternative does not accept (input.ndim=2 against input.ndim: [3, 4, 5, 6]), or whose
    possible values the call lists (`(ONE_OF, "nearest", "bilinear", ...)`) none of which it accepts."""
    alternatives = [w for w in (when or ()) if isinstance(w, dict)]
    if not alternatives:
        return False
    for alternative in alternatives:
        dead = False
        for key, values in alternative.items():
            fact = facts.get(key)
            if isinstance(fact, tuple) and fact[:1] == (ONE_OF,) \
                    and all(value_holds(v, tuple(values or ())) is False for v in fact[1:]):
                dead = True  # the values the code leaves the parameter (kb/scan/rank.py's modes) are none of these
                break
            if key in facts and not isinstance(fact, tuple):
                if value_holds(fact, tuple(values or ())) is False:  # as a query matches (given, exact dtypes)
                    dead = True
                    break
        if not dead:
            return False
    return True


def _prefix_rules_out(when: Iterable[object] | None, prefixes: dict[str, str]) -> bool:
    """True when, in every alternative of a record's condition, some key's accepted values all
    fail to start with the literal prefix the call's f-string gives (f"a{x}" is never "sum")."""
    alternatives = [w for w in (when or ()) if isinstance(w, dict)]
    if not alternatives or not prefixes:
        return False
    for alternative in alternatives:
        if not any(key in prefixes and all(not str(v).startswith(prefixes[key]) for v in (values or ()))
                   for key, values in alternative.items()):
            return False
    return True


def _candidates(op: str, version: str, framework: str, device: str, facts: dict,
                named_unknown: frozenset[str], prefixes: dict[str, str] | None = None
                ) -> list[tuple[kb.SourceStatus, bool | None, set[str]]]:
    """(source, applies, what it depends on) for every record that may apply to this call;
    the same for every call of the op with the same literal facts (memoized by the caller)."""
    known = _query(op, version, framework, device, facts if CALLS_SUPPORTED else None)
    pairs = [(s, True) for s in known.sources]
    if CALLS_SUPPORTED and named_unknown:
        ids = {s.id for s in known.sources}
        loose = _query(op, version, framework, device, None)
        pairs += [(s, False) for s in loose.sources if s.id not in ids and _keys(getattr(s, "when", None)) & named_unknown
                  and not _contradicted(getattr(s, "when", None), facts)]
    out = []
    for source, applies_known in pairs:
        if prefixes and _prefix_rules_out(getattr(source, "when", None), prefixes):
            continue
        mentioned = _keys(getattr(source, "when", None)) & named_unknown
        depends = set(getattr(source, "depends_on", None) or ()) | mentioned
        applies = getattr(source, "applies", True) if applies_known else None
        out.append((source, applies, depends))
    return out


def _as_tensors(op: str, version: str, framework: str, device: str, facts: dict, named_unknown: frozenset[str],
                prefixes: dict[str, str], keys: tuple[str, ...]) -> list[tuple[kb.SourceStatus, bool | None, set[str]]]:
    """Candidates for a call whose arguments `keys` are visibly tensors of an unknown dtype: a call fact of
    a tensor argument is its dtype kind, so the call is answered for each kind. A record that applies for
    every kind applies (`src: [float, int, bool, complex]`: any tensor src); one that applies for some
    depends on the argument's dtype; one that applies for none does not apply."""
    from itertools import product

    rest = named_unknown - set(keys)
    found: dict[str, list] = {}
    combos = list(product(DTYPE_KINDS, repeat=len(keys)))[:16]
    for combo in combos:
        for source, applies, depends in _candidates(op, version, framework, device, {**facts, **dict(zip(keys, combo))},
                                                    rest, prefixes):
            found.setdefault(source.id, []).append((source, applies, depends))
    out = []
    for entries in found.values():
        source, applies, depends = entries[0]
        if len(entries) == len(combos) and all(a is not None and a is not False for _, a, _ in entries):
            out.append((source, applies, set().union(*(d for _, _, d in entries))))
        else:
            out.append((source, None, set().union(*(d for _, _, d in entries)) | (_keys(getattr(source, "when", None)) & set(keys))))
    return out


def _mentions(call: Call, words: tuple[str, ...]) -> bool:
    texts = [call.text, *(str(getattr(a, "text", a)) for a in call.args), *(str(getattr(v, "text", v)) for _, v in call.kwargs)]
    return any(w in t for t in texts for w in words)


def _defaults(op: str, framework: str, method: bool) -> dict[str, object]:
    """The op's literal defaults (a parameter the call leaves out takes its default)."""
    sig = signature(op, framework)
    fetch = getattr(kb, "parameters", None)
    if sig is None or fetch is None:
        return {}
    try:
        params = _bound(tuple(fetch(op, framework=framework)), method)
    except (LookupError, ValueError, KeyError, TypeError):
        return {}
    out: dict[str, object] = {}
    for p in params:
        if isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[1], (int, str, bool, type(None))):
            out[p[0]] = p[1]
    return out


_MISSING = object()


_UNSOURCED: dict[tuple[str, str, str, str], bool] = memo()  # no_known_source's answers: the same for every call of an op


def no_known_source(op: str, framework: str, version: str, device: str) -> bool:
    """Whether kb.status answers the op only with "no known source, not verified": no record range, run or
    code read covers it on this release and device (its records, if any, cover other releases). The
    scan's summary counts such calls: its findings cannot say they are fine. Memoized: asked once per call
    found (a large code base's scan asked kb.status thousands of times for a few hundred ops)."""
    key = (op, framework, version, device)
    found = _UNSOURCED.get(key)
    if found is None:
        try:
            s = kb.status(op, version, framework=framework, device=device)
        except (LookupError, ValueError):
            found = False
        else:
            found = (s.deterministic is None and getattr(s, "basis", None) == "unverified"
                     and all(source.deterministic is None for source in s.sources))
        _UNSOURCED[key] = found
    return found



def _value(name: str, facts: dict, given: set[str], defaults: dict[str, object]) -> object:
    """The call's value of `name`: stated, else the op's default when the call leaves it out, else _MISSING."""
    return facts.get(name, defaults.get(name, _MISSING) if name not in given else _MISSING)


def ruled_out(rules: Rules, op: str, facts: dict, given: set[str], defaults: dict[str, object]) -> str | None:
    """Why the call's facts rule the record out by its `scan.ruled_out` (None: they do not)."""
    for rule in rules.ruled_out:
        if not applies_to(rule, op):
            continue
        value = _value(rule.parameter, facts, given, defaults)
        if value is not _MISSING and value in rule.values:
            return rule.why
    return None


def findings(call: Call, path: str, cell: tuple[int | None, int], framework: str, version: str, device: str,
             applied: frozenset[str], where: dict[str, str], record_conditions: dict[str, tuple[str, ...]],
             conditional: frozenset[str] = frozenset(), passes: dict[str, str] | None = None,
             backward: bool = True, rules: dict[str, Rules] | None = None) -> list[Finding]:
    """The findings of one call: one per source record that applies and is not covered. With
    `backward` False (no run that executes this file runs a backward pass) or a call under
    `torch.no_grad()`, records of the backward pass are not reported. `rules`: the records' scan
    rules (kb/scan/rules.py; default: those of the index kb.query answers from)."""
    if not can_be(call, framework):
        return []
    if rules is None:
        from kb.query import scan_index as index  # kb/_seen.py unloaded (kb/query/state.py)
        from kb.scan.rules import of

        rules = of(index())
    params = form_of(call, framework, parameters(call.op, framework) if CALLS_SUPPORTED else None)
    if dict(call.extra).get("device") == ("cpu",):
        device = "cpu"  # the scan saw the input made on the host (resolve: a factory without device=)
    facts, unknown, tensors, prefixes = _facts(call, params)
    if framework == "jax" and params is not None and "backend" in params and "backend" not in facts \
            and "backend" not in unknown and not call.star:
        facts["backend"] = None  # jax.jit/pmap's own `backend` argument left out: the default backend (the GPU)
    named_unknown = frozenset(k for k in unknown if not k.startswith("argument "))
    try:
        typed = frozenset((k, type(v).__name__, v) for k, v in facts.items())  # True is not 1 here
        memo = (call.op, version, framework, device, typed, named_unknown, tuple(sorted(prefixes.items())), tensors)
        hash(memo)
    except TypeError:  # pragma: no cover - facts are scalars
        memo = None
    candidates = _CANDIDATES.get(memo) if memo is not None else None
    if candidates is None:
        candidates = _candidates(call.op, version, framework, device, facts, named_unknown, prefixes)
        named = set().union(*(_keys(getattr(s, "when", None)) for s, _, _ in candidates)) & tensors & named_unknown
        if named:
            candidates = _as_tensors(call.op, version, framework, device, facts, named_unknown, prefixes,
                                     tuple(sorted(named)))
        if memo is not None and len(_CANDIDATES) < 65536:
            _CANDIDATES[memo] = candidates
    out = []
    given = {k for k in facts} | set(unknown)
    defaults = _defaults(call.op, framework, call.method) if not call.star else {}
    held = {name for name, _ in call.ruled_out}
    for source, applies, depends in candidates:
        if (call.no_grad or not backward) and (passes or {}).get(source.id) == "backward":
            continue
        rule = rules.get(source.id, NONE)
        if ruled_out(rule, call.op, facts, given, defaults):
            continue
        if rule.needs_word and not _mentions(call, rule.needs_word):
            continue
        if held.intersection(rule.resolvers):
            continue
        note = rule.data_note or ""
        shape = rule.unknown_shape
        if shape is not None and shape.fact in depends and shape.fact not in facts:
            least = dict(call.extra).get("input.min_ndim")  # (n,): kb/scan/rank.py
            if isinstance(least, tuple) and least and least[0] >= shape.at_least:
                depends = set(depends) - {shape.fact}  # the call names a dimension only such an input has
            elif shape.level == "note":
                note = shape.why
            else:  # a possible finding that names the condition
                depends = (set(depends) - {shape.fact}) | {shape.why}
        for hint in rule.only_if:
            if not applies_to(hint, call.op) or any(facts.get(p) is not None or p in unknown for p in hint.unless):
                continue
            value = _value(hint.parameter, facts, given, defaults)
            if value is not _MISSING and value in hint.values:
                depends = set(depends) | {hint.depends_on}
        finding = _classify(call, path, cell, framework, version, source, applies, depends, facts, unknown, applied, where,
                            record_conditions.get(source.id, ()), conditional)
        if finding is not None:
            out.append(finding._replace(note=note) if note else finding)
    return out


def _classify(call: Call, path: str, cell: tuple[int | None, int], framework: str, version: str,
              source: kb.SourceStatus, applies: bool | None, depends: set[str], facts: dict, unknown: dict[str, str],
              applied: frozenset[str], where: dict[str, str], conditions: tuple[str, ...],
              conditional: frozenset[str]) -> Finding | None:
    """One source's finding for one call, or None when it is deterministic there or a fix
    the code applies covers it."""
    line_in_cell = cell[1] if cell[0] is not None else call.line
    base: dict[str, Any] = dict(path=path, line=line_in_cell, col=call.col, cell=cell[0], op=call.op, text=call.text, record=source.id,
                title=source.title, framework=framework, version=version, facts=dict(facts), conditions=conditions)
    certain = call.certain and applies is not False and applies is not None and not depends
    hedge = []
    why = getattr(call, "why", None)
    if not call.certain and call.method:
        hedge.append(f"if the receiver is a {call.op.rsplit('.', 1)[0]}: {why}" if why
                     else "if the receiver is a " + call.op.rsplit(".", 1)[0])
    elif not call.certain and why:
        hedge.append(why)
    if depends:
        hedge.append("depending on " + ", ".join(f"{d}={unknown[d]}" if d in unknown else d for d in sorted(depends)))
    suffix = f" ({'; '.join(hedge)})" if hedge else ""
    where_fw = f"{framework} {version}"
    if source.deterministic is None:
        return Finding(**base, kind="unknown", certain=False, depends_on=tuple(sorted(depends)),
                       answer=f"unknown: the KB has no status for {source.id} in {where_fw}{suffix}",
                       fix="nothing known to apply", codes=())
    if source.deterministic:
        if getattr(source, "varies", None) == "configuration" and not set(source.solutions) & applied:
            # Repeats run to run, but other jobs' settings change the bits: a note, not a finding.
            keep = " or ".join(source.solutions) or "nothing known"
            return Finding(**base, kind="configuration", certain=certain, depends_on=tuple(sorted(depends)),
                           answer=f"repeats run to run on {where_fw}{suffix}",
                           fix=f"to keep the bits across configurations: {keep}", codes=tuple(source.solutions),
                           note=f"repeats run to run, but the bits change with {', '.join(source.varies_with)} "
                                f"between jobs; to keep them across those: {keep}")
        return None
    codes = tuple(source.solutions)
    if set(codes) & applied:
        return None  # covered by a fix the code base applies
    raising = sorted(switches.RAISING.get(framework, frozenset()) & applied)
    if source.raises and raising:
        switch = raising[0]
        return Finding(**base, kind="raises", certain=certain, depends_on=tuple(sorted(depends)),
                       answer=f"raises {source.raises} under {switch}, which this code sets ({where.get(switch, '?')}){suffix}",
                       fix=f"no deterministic implementation known in {where_fw}", codes=())
    if codes:
        fix = "fix: " + " or ".join(codes)
        partly = [c for c in codes if c in conditional]
        if partly:
            fix += f"; {partly[0]} does not hold here ({where.get(partly[0], '?')})"
    else:
        fix = f"no known solution in {where_fw}" + (f" (under a deterministic switch it raises {source.raises})" if source.raises else "")
    return Finding(**base, kind="nondeterministic", certain=certain, depends_on=tuple(sorted(depends)),
                   answer=f"not deterministic on {where_fw}{suffix}", fix=fix, codes=codes)
