"""Call conditions: does a record apply to this call of this op? (docs/calls.md)

Standard library only: `kb.status(..., call=...)` runs this on the query path. A condition
is compiled into the index as a tuple of `(key, values)` pairs (every key must hold; a key
holds when the call's value is one of `values`); a record's conditions for one op are a
tuple of such alternatives (any one suffices), `()` when the record applies to every call.

Three answers, because a call may not decide: True (the call satisfies a condition), False
(it contradicts every one), None (some fact the condition needs is unknown: `call=None`, or
a fact such as `input.ndim` left out, or a parameter whose default is not a plain literal).
"""

from kb.signatures import NO_DEFAULT, UNKNOWN_DEFAULT, names, open_ended

FACTS = ("input.ndim", "input.dtype", "backend", "compiled")
KINDS = ("float", "int", "bool", "complex")
COMPILERS = ("inductor",)
EAGER_FACTS = ("compiled",)
"""Facts whose absence from a call is a value, not an unknown: a call that does not say
`compiled` runs eagerly (None), as a parameter left out takes its default."""
MAX_KEYS = 64
MAX_TEXT = 200

Condition = tuple  # ((key, values), ...)


def normalize(call: object) -> dict[str, object]:
    """Check a caller's `call=` and return it as a plain dict; ValueError says what is wrong."""
    if not isinstance(call, dict):
        try:
            call = dict(call)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise ValueError(
                f"call must be a mapping of parameter names to values, e.g. {{'mode': 'nearest'}}, "
                f"not {type(call).__name__}"
            ) from None
    if len(call) > MAX_KEYS:
        raise ValueError(f"call has {len(call)} keys; at most {MAX_KEYS}")
    out: dict[str, object] = {}
    for key, value in call.items():
        if not isinstance(key, str) or not key or len(key) > MAX_TEXT:
            raise ValueError(f"call keys are parameter names (strings), not {key!r:.60}")
        if value is not None and type(value) not in (bool, int, float, str):
            raise ValueError(
                f"call[{key!r}] must be a plain literal (None, a bool, int, float or str; a tensor "
                f"argument as its dtype kind: {', '.join(KINDS)}), not {type(value).__name__}"
            )
        if type(value) is str and len(value) > MAX_TEXT:
            raise ValueError(f"call[{key!r}] is longer than {MAX_TEXT} characters")
        if type(value) is float and value != value:
            raise ValueError(f"call[{key!r}] is NaN")
        if key == "input.ndim" and (type(value) is not int or value < 0):
            raise ValueError(f"call['input.ndim'] is the input's rank, a whole number >= 0, not {value!r}")
        if key == "input.dtype" and value not in KINDS:
            raise ValueError(f"call['input.dtype'] is a dtype kind: {', '.join(KINDS)}; not {value!r}")
        if key == "compiled" and value is not None and value not in COMPILERS:
            raise ValueError(f"call['compiled'] names the compiler the call runs under: {', '.join(COMPILERS)} "
                             f"(torch.compile's default backend), or None for eager; not {value!r}")
        out[key] = value
    return out


def check_keys(op: str, call: dict[str, object], params: tuple | None) -> None:
    """Unknown keys are errors: a misspelt parameter must not silently match nothing."""
    if params is None or open_ended(params):
        return
    known = names(params)
    for key in call:
        if key not in FACTS and key not in known:
            raise ValueError(
                f"{op} has no parameter {key!r}; its parameters are: {', '.join(known) or '(none)'}"
                f"; call facts: {', '.join(FACTS)}"
            )


def for_op(calls: tuple, op: str, any_op: bool, extra: Condition | None) -> tuple[Condition, ...]:
    """The alternatives under which a record applies to `op`, with a range's own condition.

    `any_op`: the query named the record itself, so every pattern counts.
    """
    alternatives: list[Condition] = []
    unconditional = not calls
    if calls:
        named = [when for ops, when in calls if any_op or not ops or op in ops]
        if not named or any(not when for when in named):
            unconditional = True
        else:
            alternatives = named
    if extra:
        alternatives = [_both(a, extra) for a in alternatives] if not unconditional else [extra]
    elif unconditional:
        return ()
    return tuple(alternatives)


def _both(a: Condition, b: Condition) -> Condition:
    merged = dict(a)
    for key, values in b:
        merged[key] = tuple(v for v in merged[key] if _member(v, values)) if key in merged else values
    return tuple(sorted(merged.items()))


def same(a: object, b: object) -> bool:
    """Equality in which True is not 1: a flag and a count are different facts."""
    if type(a) is bool or type(b) is bool:
        return a is b
    return a == b


def _member(value: object, values: tuple) -> bool:
    return any(same(value, v) for v in values)


def _value(key: str, call: dict[str, object], defaults: dict[str, object] | None) -> tuple[bool, object]:
    if key in call:
        return True, call[key]
    if key in EAGER_FACTS:
        return True, None
    if key in FACTS or defaults is None:
        return False, None
    default = defaults.get(key, UNKNOWN_DEFAULT)
    if default is NO_DEFAULT or default is UNKNOWN_DEFAULT:
        return False, None
    return True, default


def evaluate(
    alternatives: tuple[Condition, ...], call: dict[str, object] | None, defaults: dict[str, object] | None
) -> tuple[bool | None, tuple[str, ...]]:
    """(applies, the keys the call leaves unknown) for one record's alternatives."""
    if not alternatives:
        return True, ()
    if call is None:
        return None, tuple(sorted({key for alt in alternatives for key, _ in alt}))
    result: bool | None = False
    missing: set[str] = set()
    for alt in alternatives:
        holds: bool | None = True
        unknown: list[str] = []
        for key, values in alt:
            known, value = _value(key, call, defaults)
            if not known:
                holds = None
                unknown.append(key)
            elif not _member(value, values):
                holds = False
                break
        if holds is True:
            return True, ()
        if holds is None:
            result = None
            missing.update(unknown)
    return result, tuple(sorted(missing))


def _show(value: object) -> str:
    return "None" if value is None else repr(value)


def _key_text(key: str, values: tuple) -> str:
    if key != "input.dtype" and values and all(isinstance(v, str) and v in KINDS for v in values):
        article = "an" if values[0][0] in "aeiou" else "a"
        return f"{key} is {article} {' or '.join(values)} tensor"
    if key == "compiled":
        return " or ".join("eager" if v is None else f"compiled with {v}" for v in values)
    if values == (None,):
        return f"{key} is not given"
    return f"{key} is {' or '.join(_show(v) for v in values)}"


def text(alternatives: tuple[Condition, ...]) -> str | None:
    """One readable line: "mode is 'bilinear' or 'bicubic' and antialias is False"."""
    if not alternatives:
        return None
    parts = [" and ".join(_key_text(key, values) for key, values in alt) for alt in alternatives]
    return "; or ".join(parts)


def as_dicts(alternatives: tuple[Condition, ...]) -> tuple[dict[str, tuple], ...]:
    """The structured form a SourceStatus carries: one mapping per alternative."""
    return tuple({key: values for key, values in alt} for alt in alternatives)


def why_not(alternatives: tuple[Condition, ...], call: dict[str, object], defaults: dict[str, object] | None) -> str:
    """What in the call rules a record out, for the answer's notes."""
    seen = []
    for alt in alternatives:
        for key, values in alt:
            known, value = _value(key, call, defaults)
            if known and not _member(value, values):
                given = "" if key in call else " (its default)"
                if key == "compiled":
                    seen.append("the call runs eagerly" if value is None else f"the call is compiled with {value}")
                else:
                    seen.append(f"{key} is {_show(value)}{given}")
                break
    return ", ".join(dict.fromkeys(seen))
