"""Call conditions: does a record apply to this call of this op? (docs/calls.md)

Standard library only: `kb.status(..., call=...)` runs this on the query path. A condition
is compiled into the index as a tuple of `(key, values)` pairs (every key must hold; a key
holds when the call's value is one of `values`); a record's conditions for one op are a
tuple of such alternatives (any one suffices), `()` when the record applies to every call.

Three answers, because a call may not decide: True (the call satisfies a condition), False
(it contradicts every one), None (some fact the condition needs is unknown: `call=None`, or
a fact such as `input.ndim` left out, or a parameter whose default is not a plain literal).
"""

from kb.signatures import NO_DEFAULT, UNKNOWN_DEFAULT, Signature, names, open_ended

FACTS = ("input.ndim", "input.dtype", "input.layout", "backend", "compiled", "at.method")
"""Call facts that are not parameters: the first tensor argument's rank, dtype (a kind or an
exact dtype, DTYPES) and layout (LAYOUTS), the backend a framework picks at run time, the
compiler the call runs under (`compiled: inductor`; absent from a call = eager), and the method
of a JAX indexed update (`at.method`: `set` for `x.at[i].set(v)`, AT_METHODS) (docs/calls.md).
The one list: the record schema (kb/schema.py), lint KB016, the verifiers' cases
(kb/verify/cases.py) and the site's lookup form read it from here.

To add a call fact:
1. Add it here (and the set of its values beside DTYPES, LAYOUTS, ... when it has one), then
   `kb build` (the schema under schema/ and the site's form follow).
2. Say it where calls are made: the probe's recorder (kb/probe/_torch_calls.py) and the cases
   of the verifiers whose records condition on it (verifiers/<area>/).
3. Describe it in docs/calls.md and in `kb status --call`'s help (kb/cli.py)."""
KINDS = ("float", "int", "bool", "complex")
DTYPES: dict[str, str] = {
    "bfloat16": "float", "float16": "float", "float32": "float", "float64": "float",
    "float8_e4m3fn": "float", "float8_e4m3fnuz": "float", "float8_e5m2": "float", "float8_e5m2fnuz": "float",
    "float8_e8m0fnu": "float",
    "uint8": "int", "uint16": "int", "uint32": "int", "uint64": "int",
    "int8": "int", "int16": "int", "int32": "int", "int64": "int",
    "bool": "bool", "complex32": "complex", "complex64": "complex", "complex128": "complex",
}
"""Exact dtype names `input.dtype` (and a tensor argument) may take besides a kind, each with its
kind: PyTorch's `torch.<name>` dtypes (tests/test_calls_forms.py checks them against torch).
An exact dtype satisfies a condition on its kind; a kind against a condition on exact dtypes
of that kind is undecided."""
LAYOUTS = ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")
"""Values of `input.layout`: PyTorch's `torch.<layout>` names for the first tensor argument."""
COMPILERS = ("inductor",)
"""Values of the `compiled` call fact: the compiler backend whose generated kernels run the op
(`torch.compile`'s default backend is Inductor). `null` in a condition means eager."""
AT_METHODS = ("set", "get", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply")
"""Values of `at.method`: the method called on JAX's indexed-update reference, `x.at[idx].<method>(...)`
(jax/_src/numpy/array_methods.py _IndexUpdateRef), which decides the scatter the op lowers to: `set`
a plain scatter (which write wins), `add`/`subtract` a scatter-add, `multiply`/`divide`/`power` a
scatter-multiply, `get` a gather. Left out, it is unknown."""
GIVEN = "given"
"""A condition value meaning "any value but None": the parameter is passed (for an overloaded
op, the call is of a form that has it): `dim: [given]` is `torch.median(x, dim)`."""
DEFAULT_FACTS: dict[str, object] = {"compiled": None}
"""Facts whose absence from a call is a value, not an unknown: a call that does not say
`compiled` runs eagerly (None), as a parameter left out takes its default. With `call=None`
it stays unknown. `input.layout` is not one: the API contract makes every `input.*` fact left
out unknown (records that depend on it still apply, with that said), so a dense call says
`input.layout='strided'`; run cases, which state what ran, read a missing layout as strided
(kb/verify/cases.py)."""
EAGER_FACTS = tuple(DEFAULT_FACTS)
LEN = ".len"
"""`<param>.len`: the length of a sequence parameter (`pad.len: [2]` for F.pad's pad tuple),
which a call can state as a whole number where the sequence itself is not a plain literal;
left out, it is unknown (its default is not a plain literal either)."""


def is_length(key: str, known: tuple[str, ...]) -> bool:
    """True for `<param>.len` of one of the op's parameters."""
    return key.endswith(LEN) and key[: -len(LEN)] in known


ARG_FACTS = ("dtype", "layout", "device", "ndim", "memory_format", "numel")
"""`<tensor>.<fact>`: a fact of one tensor argument, named by its parameter (`targets.dtype` for
ctc_loss, `index.dtype` for index_add, `weight.layout`, `grid.ndim`), or `input.<fact>` for the
first tensor argument (`input.device`, `input.memory_format`; `input.ndim`, `input.dtype` and
`input.layout` are the FACTS above). One tensor's facts choose a kernel as the input's do: cuDNN's
CTC loss takes int32 targets on the CPU only, index_add instantiates int32 and int64 indices apart.
Left out, each is unknown. Values: `dtype` a kind or an exact dtype (DTYPES), `layout` LAYOUTS,
`device` DEVICES, `ndim` a whole number, `memory_format` MEMORY_FORMATS, `numel` the tensor's element
count, a whole number (a condition states a range of them: NUMEL)."""
NUMEL = ".numel"
"""`<tensor>.numel` (`input.numel` for the first tensor argument): how many elements the tensor has.
Some kernels change with size (a CUDA scan of one block repeats; one of several blocks combines their
results in the order they finish), so a condition states a range: each value of its list is a whole
number (that count exactly) or comparisons joined by commas, all of which must hold, as a version range
is written: `'>65536'`, `'<=65536'`, `'>=1024,<65536'` (`bounds`). A call states the count itself."""
_OPERATORS = (">=", "<=", ">", "<")


def bounds(text: object) -> tuple[int, int | None] | None:
    """The whole numbers a range value admits, as (lowest, highest or None for no end); None when `text`
    is no range (not a string of comparisons, or one no whole number satisfies).

    >>> bounds(">65536"), bounds("<=65536"), bounds(">=1024,<65536")
    ((65537, None), (0, 65536), (1024, 65535))
    >>> bounds("65536") is None, bounds(">1,<2") is None, bounds("> 5") is None
    (True, True, True)
    """
    if type(text) is not str or not text or len(text) > MAX_TEXT:
        return None
    low, high = 0, None
    for part in text.split(","):
        op = next((o for o in _OPERATORS if part.startswith(o)), None)
        number = part[len(op):] if op else ""
        if op is None or not number.isdigit() or not number.isascii():
            return None
        n = int(number)
        if op == ">":
            low = max(low, n + 1)
        elif op == ">=":
            low = max(low, n)
        elif op == "<":
            high = n - 1 if high is None else min(high, n - 1)
        else:
            high = n if high is None else min(high, n)
    if high is not None and high < low:
        return None
    return low, high


def in_range(value: object, text: object) -> bool:
    """Does a whole number lie in a range value (`bounds`)? False for anything else."""
    span = bounds(text)
    if span is None or type(value) is not int:
        return False
    return span[0] <= value and (span[1] is None or value <= span[1])


def check_numel_condition(key: str, values: list | tuple) -> None:
    """ValueError naming the key when a condition on `<tensor>.numel` lists something that is neither a
    whole number nor a range (the record schema and lint call this)."""
    for value in values:
        if (type(value) is int and value >= 0) or bounds(value) is not None:
            continue
        raise ValueError(f"when.{key} takes element counts: whole numbers >= 0 or comparisons such as '>65536', "
                         f"'<=65536', '>=1024,<65536' (no spaces; every comparison must hold); not {value!r}")
DEVICES = ("cpu", "cuda")
"""Values of `<tensor>.device`: the device type the tensor lives on (PyTorch's `tensor.device.type`)."""
MEMORY_FORMATS = ("contiguous_format", "channels_last", "channels_last_3d")
"""Values of `<tensor>.memory_format`: PyTorch's `torch.<name>` memory formats a 4-D or 5-D tensor
is contiguous in (`x.is_contiguous(memory_format=torch.channels_last)`)."""


def arg_fact(key: str) -> tuple[str, str] | None:
    """(tensor, fact) for a key `<tensor>.<fact>` with a fact of ARG_FACTS; None otherwise."""
    tensor, dot, fact = key.rpartition(".")
    if not dot or fact not in ARG_FACTS or not tensor.isidentifier():
        return None
    return tensor, fact


def is_arg_fact(key: str, known: tuple[str, ...]) -> bool:
    """True for `<param>.<fact>` of one of the op's parameters, or `input.<fact>`."""
    parts = arg_fact(key)
    return parts is not None and (parts[0] == "input" or parts[0] in known)


def base_of(key: str) -> str:
    """The parameter a key is about: `pad` for `pad.len`, `targets` for `targets.dtype`, the key itself otherwise."""
    if key.endswith(LEN):
        return key[: -len(LEN)]
    parts = arg_fact(key)
    return parts[0] if parts is not None and key not in FACTS else key


def check_arg_fact(key: str, value: object) -> None:
    """ValueError naming the key when a tensor argument's fact has a value that fact cannot take."""
    parts = arg_fact(key)
    if parts is None or key in ("input.ndim", "input.dtype", "input.layout"):
        return
    fact = parts[1]
    if fact == "dtype" and value not in KINDS and value not in DTYPES:
        raise ValueError(f"call[{key!r}] is a dtype kind ({', '.join(KINDS)}) or an exact dtype ({', '.join(DTYPES)}); "
                         f"not {value!r}")
    if fact == "layout" and value not in LAYOUTS:
        raise ValueError(f"call[{key!r}] is a layout: {', '.join(LAYOUTS)}; not {value!r}")
    if fact == "device" and value not in DEVICES:
        raise ValueError(f"call[{key!r}] is a device type: {', '.join(DEVICES)}; not {value!r}")
    if fact == "ndim" and (type(value) is not int or value < 0):
        raise ValueError(f"call[{key!r}] is the tensor's rank, a whole number >= 0, not {value!r}")
    if fact == "memory_format" and value not in MEMORY_FORMATS:
        raise ValueError(f"call[{key!r}] is a memory format: {', '.join(MEMORY_FORMATS)}; not {value!r}")
    if fact == "numel" and (type(value) is not int or value < 0):
        raise ValueError(f"call[{key!r}] is the tensor's element count (tensor.numel()), a whole number >= 0, "
                         f"not {value!r}")
MAX_KEYS = 64
MAX_TEXT = 200

Condition = tuple  # ((key, values), ...)


def normalize(call: object) -> dict[str, object]:
    """Check a caller's `call=` and return it as a plain dict; ValueError says what is wrong."""
    if type(call) is dict and len(call) > MAX_KEYS:  # before copying a huge one
        raise ValueError(f"call has {len(call)} keys; at most {MAX_KEYS}")
    try:  # the caller's own mapping methods run here: whatever they raise is a bad argument (ValueError)
        items = list((call if isinstance(call, dict) else dict(call)).items())  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ValueError(
            f"call must be a mapping of parameter names to values, e.g. {{'mode': 'nearest'}}, "
            f"not {type(call).__name__}"
        ) from None
    except Exception as exc:  # noqa: BLE001 - a dict subclass whose items() raises RuntimeError, ...
        raise ValueError(f"call could not be read: its {type(call).__name__}.items() raised {type(exc).__name__}") from None
    if len(items) > MAX_KEYS:
        raise ValueError(f"call has {len(items)} keys; at most {MAX_KEYS}")
    out: dict[str, object] = {}
    for key, value in items:
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
        if key == "input.dtype" and value not in KINDS and value not in DTYPES:
            raise ValueError(f"call['input.dtype'] is a dtype kind ({', '.join(KINDS)}) or an exact dtype "
                             f"({', '.join(DTYPES)}); not {value!r}")
        if key.endswith(LEN) and (type(value) is not int or value < 0):
            raise ValueError(f"call[{key!r}] is the length of the sequence {key[:-len(LEN)]}, a whole number >= 0, "
                             f"not {value!r}")
        if key == "input.layout" and value not in LAYOUTS:
            raise ValueError(f"call['input.layout'] is the input's layout: {', '.join(LAYOUTS)}; not {value!r}")
        check_arg_fact(key, value)
        if key == "compiled" and value is not None and value not in COMPILERS:
            raise ValueError(f"call['compiled'] names the compiler the call runs under: {', '.join(COMPILERS)} "
                             f"(torch.compile's default backend), or None for eager; not {value!r}")
        out[key] = value
    return out


def check_keys(op: str, call: dict[str, object], params: tuple | None) -> tuple | None:
    """Unknown keys and values outside a parameter's closed set are errors (a misspelt
    parameter or mode must not silently match nothing); returns the parameters of the form
    the call is of (`bind`), which kb.status uses as the call's defaults."""
    if params is None:
        return None
    if not open_ended(params):
        known = names(params)
        for key in call:
            if key not in FACTS and key not in known and not is_length(key, known) and not is_arg_fact(key, known):
                raise ValueError(
                    f"{op} has no parameter {key!r}; its parameters are: {', '.join(known) or '(none)'}"
                    f"; call facts: {', '.join(FACTS)}; a tensor argument's facts: <parameter>.{{{','.join(ARG_FACTS)}}}"
                )
    for key, allowed in getattr(params, "choices", {}).items():
        value = call.get(key)
        if key in call and value is not None and value not in allowed:
            raise ValueError(f"{op}: {key}={value!r} is not one of its values: {', '.join(map(repr, allowed))}")
    return bind(op, call, params)


def bind(op: str, call: dict[str, object], params: tuple) -> tuple:
    """The parameters of the first form of `op` whose names take every key of the call, with
    the parameters only other forms have as None (not given): PyTorch's argument parser tries
    an op's overloads in order. A single-form op is returned as it is."""
    forms = getattr(params, "forms", ())
    if len(forms) < 2:
        return params
    keys = [base_of(key) for key in call if key not in FACTS and not ((fact := arg_fact(key)) and fact[0] == "input")]
    for form in forms:
        if open_ended(form) or all(key in names(form) for key in keys):
            have = names(form)
            bound = Signature((*form, *((name, None) for name in names(params) if name not in have)))
            bound.forms, bound.choices, bound.forwards = (form,), params.choices, params.forwards  # type: ignore[attr-defined]
            return bound
    shown = "; ".join(f"({', '.join(names(form))})" for form in forms)
    raise ValueError(f"{op} has no form that takes {', '.join(keys)} together; its forms: {shown}")


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
        if key not in merged:
            merged[key] = values
        elif key.endswith(NUMEL):
            merged[key] = overlap(merged[key], values)
        else:
            merged[key] = tuple(v for v in merged[key] if _member(v, values))
    return tuple(sorted(merged.items()))


def overlap(a: tuple, b: tuple) -> tuple:
    """The element counts two lists of counts and ranges both admit, as counts and ranges: a record's
    pattern and its range's own `when:` both hold.

    >>> overlap((">65536",), (">=1000,<100000", 5))
    ('>=65537,<=99999',)
    >>> overlap((4, ">10"), (4, 20, "<=3"))
    (4, 20)
    """
    out: list[object] = []
    for x in a:
        for y in b:
            sx = (x, x) if type(x) is int else bounds(x)
            sy = (y, y) if type(y) is int else bounds(y)
            if sx is None or sy is None:
                continue
            low = max(sx[0], sy[0])
            highs = [h for h in (sx[1], sy[1]) if h is not None]
            high = min(highs) if highs else None
            if high is not None and high < low:
                continue
            value: object = low if high == low else f">={low}" if high is None else f">={low},<={high}"
            if not _member(value, tuple(out)):
                out.append(value)
    return tuple(out)


def same(a: object, b: object) -> bool:
    """Equality in which True is not 1: a flag and a count are different facts."""
    if type(a) is bool or type(b) is bool:
        return a is b
    return a == b


def _member(value: object, values: tuple) -> bool:
    return any(same(value, v) for v in values)


def value_holds(value: object, values: tuple) -> bool | None:
    """Does a call (or verified case) value satisfy a key's values? None when a kind is asked against exact dtypes
    of that kind (`float` against `[bfloat16]`: it may be bfloat16 or not).

    >>> value_holds("bfloat16", ("float",))  # an exact dtype satisfies its kind
    True
    >>> value_holds("float", ("bfloat16",)) is None  # a kind against exact dtypes: undecided
    True
    >>> value_holds(True, (1,)), value_holds(4, (4.0,))  # a flag is not a count; 4 is 4.0
    (False, True)
    >>> value_holds(1000, (">65536",)), value_holds(4194304, (">65536",)), value_holds(True, (">0",))
    (False, True, False)
    """
    if _member(value, values):
        return True
    if type(value) is int and any(in_range(value, v) for v in values if type(v) is str):
        return True  # an element count within a range (`input.numel: ['>65536']`)
    if value is not None and GIVEN in values:
        return True
    if type(value) is str and value in DTYPES and DTYPES[value] in values and value not in KINDS:
        return True
    if type(value) is str and value in KINDS and any(DTYPES.get(v) == value for v in values if isinstance(v, str)):
        return None
    return False


def _value(key: str, call: dict[str, object], defaults: dict[str, object] | None) -> tuple[bool, object]:
    if key in call:
        return True, call[key]
    if key in DEFAULT_FACTS:
        return True, DEFAULT_FACTS[key]
    if key in FACTS or defaults is None or key.endswith(LEN) or arg_fact(key) is not None:
        return False, None
    default = defaults.get(key, UNKNOWN_DEFAULT)
    if default is NO_DEFAULT or default is UNKNOWN_DEFAULT:
        return False, None
    return True, default


def evaluate(
    alternatives: tuple[Condition, ...], call: dict[str, object] | None, defaults: dict[str, object] | None
) -> tuple[bool | None, tuple[str, ...]]:
    """(applies, the keys the call leaves unknown) for one record's alternatives.

    A record about bilinear or bicubic resizes without antialiasing (one alternative, two keys):

    >>> resize = ((("antialias", (False,)), ("method", ("bilinear", "bicubic"))),)
    >>> evaluate(resize, {"method": "bilinear", "antialias": False}, None)
    (True, ())
    >>> evaluate(resize, {"method": "nearest"}, None)  # one key fails: the others do not matter
    (False, ())
    >>> evaluate(resize, {"method": "bilinear"}, None)  # left out, with no known default
    (None, ('antialias',))
    >>> evaluate(resize, {"method": "bilinear"}, {"antialias": False})  # left out: its default
    (True, ())
    >>> evaluate(resize, None, None)  # no call at all
    (None, ('antialias', 'method'))
    """
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
            member = value_holds(value, values) if known else None
            if member is None:
                holds = None
                unknown.append(key)
            elif not member:
                holds = False
                break
        if holds is True:
            return True, ()
        if holds is None:
            result = None
            missing.update(unknown)
    return result, tuple(sorted(missing))


def unnamed(call: dict[str, object] | None, conditions: list[tuple[Condition, ...]], params: tuple | None) -> list[str]:
    """Notes for a call value no record's condition names, on a parameter with no closed set of
    values (those are checked in `check_keys`): a misspelling there cannot be refused, so the
    answer says that no record is about that value."""
    if not call:
        return []
    choices = getattr(params, "choices", {})
    named: dict[str, list[object]] = {}
    for alternatives in conditions:
        for alt in alternatives:
            for key, values in alt:
                named.setdefault(key, []).extend(values)
    out = []
    for key, value in call.items():
        if key in FACTS or arg_fact(key) or key in choices or key not in named or type(value) is not str:
            continue
        values = tuple(dict.fromkeys(named[key]))
        if value_holds(value, values) is False:
            out.append(f"no record's condition names {key}={value!r} (they name {', '.join(map(_show, values))}): "
                       "if it is a misspelling, the answer is about another call")
    return out


def _show(value: object) -> str:
    return "None" if value is None else repr(value)


def _key_text(key: str, values: tuple) -> str:
    if not key.endswith(".dtype") and values and all(isinstance(v, str) and v in KINDS for v in values):
        article = "an" if values[0][0] in "aeiou" else "a"
        return f"{key} is {article} {' or '.join(values)} tensor"
    if key.endswith(LEN):
        return f"len({key[:-len(LEN)]}) is {' or '.join(map(_show, values))}"
    if key.endswith(NUMEL) and values and all(bounds(v) is not None or type(v) is int for v in values):
        return f"{key} is {' or '.join(_range_text(v) for v in values)}"
    if key == "compiled":
        return " or ".join("eager" if v is None else f"compiled with {v}" for v in values)
    if values == (None,):
        return f"{key} is not given"
    if values == (GIVEN,):
        return f"{key} is given"
    return f"{key} is {' or '.join(_show(v) for v in values)}"


def _range_text(value: object) -> str:
    """`'>=1024,<65536'` as `>= 1024 and < 65536`; a whole number as itself."""
    if type(value) is not str:
        return _show(value)
    return " and ".join(next(f"{o} {part[len(o):]}" for o in _OPERATORS if part.startswith(o)) for part in value.split(","))


def text(alternatives: tuple[Condition, ...]) -> str | None:
    """One readable line.

    >>> text(((("antialias", (False,)), ("method", ("bilinear", "bicubic"))),))
    "antialias is False and method is 'bilinear' or 'bicubic'"
    >>> text(((("input.numel", (">65536",)),),))
    'input.numel is > 65536'
    """
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
            if known and value_holds(value, values) is False:
                given = "" if key in call else " (its default)"
                if values == (GIVEN,) and value is None:
                    seen.append(f"{key} is not given")
                elif key == "compiled":
                    seen.append("the call runs eagerly" if value is None else f"the call is compiled with {value}")
                elif key.endswith(LEN):
                    seen.append(f"len({key[:-len(LEN)]}) is {_show(value)}")
                else:
                    seen.append(f"{key} is {_show(value)}{given}")
                break
    return ", ".join(dict.fromkeys(seen))
