"""Version semantics: the one range evaluator every part of the KB uses.

The algorithm (documented in docs/versions.md, tested for order independence):

1. A *query* version is any PEP 440 string (``"2.1"``, ``"2.1.0"``, ``"2.1.4"``,
   ``"2.21.0rc1"``, ``"1.15.5+nv"``). It is reduced to its **release key**: the epoch
   followed by the release segment with trailing zeros removed. Pre-, post-, dev- and
   local parts are dropped, so ``2.1.0rc1``, ``2.1.0.dev5``, ``2.1.0.post1`` and
   ``2.1.0+cu118`` all answer as ``2.1``. Why: a framework's release candidates are cut
   from the release branch, so they carry the release's fixes; PEP 440's ordering would
   put ``2.1.0rc1`` *below* ``>=2.1`` and give users of a candidate the previous
   release's answer, which is not what anybody means by "2.1".
2. A *range* is a PEP 440 specifier set whose clauses are ``>=``, ``>``, ``<``, ``<=``,
   ``==`` (with or without ``.*``) and ``~=``. It is compiled once (``compile_range``)
   to a half-open interval ``[lo, hi)`` of release keys; ``lo``/``hi`` may be open
   (``None``). ``~=2.2`` is ``[2.2, 3)``; ``==2.9.*`` is ``[2.9, 2.10)``; ``<=2.3`` and
   ``==2.3`` end just above ``2.3.0`` (so ``2.3.1`` is outside them). The data is written
   with ``>=`` and ``<`` on minor releases wherever the sources allow.
3. A version is in a range when ``lo <= key < hi``. Keys are tuples of ints compared
   lexicographically after trailing zeros are stripped, so ``2.1 == 2.1.0``.
4. A record's ranges never overlap (lint KB004), so at most one range matches; the
   answer therefore cannot depend on the order ranges are written in.

Only the standard library is imported here; ``packaging`` is imported lazily for strings
that are not a plain dotted release (``2.1.0rc1``), and always when compiling ranges.

The rules above, worked (tests/test_doctests.py runs them):

    >>> release_key("2.1.0rc1") == release_key("2.1.0+cu118") == release_key("2.1") == (0, 2, 1)
    True
    >>> [key_to_str(k) for k in compile_range("~=2.2")], [key_to_str(k) for k in compile_range("==2.9.*")]
    (['2.2', '3'], ['2.9', '2.10'])
    >>> lo, hi = compile_range("<=2.3")
    >>> contains(lo, hi, release_key("2.3")), contains(lo, hi, release_key("2.3.1"))
    (True, False)
"""

from kb.bounds import MAX_VERSION, echo

Key = tuple  # tuple[int, ...]: (epoch, release...), trailing zeros stripped

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers treat it as True)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol, TypeVar

    class _Ranged(Protocol):
        @property
        def versions(self) -> str: ...

    _R = TypeVar("_R", bound=_Ranged)


def _strip(parts: tuple[int, ...]) -> tuple[int, ...]:
    end = len(parts)
    while end > 1 and parts[end - 1] == 0:
        end -= 1
    return parts[:end]


_keys: dict[str, Key] = {}


def release_key(version: str) -> Key:
    """Reduce a version string to the key ranges are evaluated on (remembered: `kb build` asks
    ~20,000 times, for a few hundred distinct strings).

    Raises ValueError (packaging's InvalidVersion) for strings that are not versions.
    """
    if type(version) is str:
        found = _keys.get(version)
        if found is not None:
            return found
        found = _release_key(version)
        if len(_keys) < 8192:
            _keys[version] = found
        return found
    return _release_key(version)


def _release_key(version: str) -> Key:
    if not isinstance(version, str):
        raise ValueError(f"version must be a string, got {type(version).__name__}")
    text = version.strip()
    if len(text) > MAX_VERSION or not text.isascii():  # PEP 440 digits are ASCII; int() takes '١' too
        raise ValueError(
            f"{echo(version)} is not a version: expected at most {MAX_VERSION} ASCII characters such as '2.1' or '2.21.0rc1'"
        )
    # Fast path: a plain dotted release ("2.1", "1.15.5") needs no regex.
    if text and text[0] != "." and text[-1] != "." and ".." not in text and text.replace(".", "").isdigit():
        return (0,) + _strip(tuple(int(p) for p in text.split(".")))
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(text)
    except InvalidVersion:
        raise ValueError(
            f"{version!r} is not a version: expected a PEP 440 version such as '2.1', '2.1.0', "
            "'1.15.5' or '2.21.0rc1'"
        ) from None
    label = _unnumbered(text)
    if label:
        # PEP 440 fills in a missing number ('2.a' is 2a0, '2.dev' is 2.dev0): a typo such as
        # '2.a' would answer as 2 with no word (round-3 L8). Framework releases carry the number.
        raise ValueError(
            f"{version!r} is not a version: its {label!r} has no number (PEP 440 would read {parsed}); expected a "
            "version such as '2.1', '2.1.0', '1.15.5' or '2.21.0rc1'"
        )
    return (parsed.epoch,) + _strip(tuple(parsed.release))


def _unnumbered(text: str) -> str:
    """The first pre-, post- or dev-release label of `text` written without its number ('a' of
    '2.a', 'rc' of '2.1.0rc', 'dev' of '2.dev'), or ''. The local part (after '+') and a
    leading 'v' are not labels. Character by character: `re` is not loaded on the query path."""
    public = text.lower().split("+", 1)[0]
    public = public[1:] if public.startswith("v") else public
    i = 0
    while i < len(public):
        if not public[i].isalpha():
            i += 1
            continue
        end = i
        while end < len(public) and public[end].isalpha():
            end += 1
        digit = end + 1 if end < len(public) and public[end] in "-_." else end
        if not (digit < len(public) and public[digit].isdigit()):
            return public[i:end]
        i = end
    return ""


def key_to_str(key: Key | None) -> str:
    """Render a key for messages and docs (``(0, 2, 1)`` -> ``2.1``)."""
    if key is None:
        return ""
    epoch, *release = key
    text = ".".join(str(p) for p in release)
    return f"{epoch}!{text}" if epoch else text


def contains(lo: Key | None, hi: Key | None, key: Key) -> bool:
    """True when ``key`` lies in the half-open interval ``[lo, hi)`` (None = unbounded)."""
    return (lo is None or lo <= key) and (hi is None or key < hi)


_compiled: dict[str, tuple[Key | None, Key | None]] = {}


def compile_range(spec: str) -> tuple[Key | None, Key | None]:
    """`_compile_range`, remembered: a pure function of the text, asked ~10,000 times per `kb build`."""
    found = _compiled.get(spec)
    if found is None:
        found = _compile_range(spec)
        if len(_compiled) < 8192:
            _compiled[spec] = found
    return found


def _compile_range(spec: str) -> tuple[Key | None, Key | None]:
    """Compile a specifier set to ``(lo, hi)``; raise ValueError with a hint when it can't be.

    Clauses are intersected, so ``">=1.14,<2.1"`` is ``[1.14, 2.1)``. A clause whose
    version has a pre/post/dev/local part is rejected: ranges are written on releases.
    """
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    try:
        spec_set = SpecifierSet(spec)
    except InvalidSpecifier:
        raise ValueError(f"{spec!r} is not a PEP 440 specifier set (expected e.g. '>=1.14,<2.1')") from None
    if not list(spec_set):
        raise ValueError(f"{spec!r} has no clauses; use '>=0' for every version")
    lo: Key | None = None
    hi: Key | None = None
    for clause in spec_set:
        op, text = clause.operator, clause.version
        wildcard = text.endswith(".*")
        base = text[:-2] if wildcard else text
        parsed = Version(base)
        if parsed.pre or parsed.post is not None or parsed.dev is not None or parsed.local:
            raise ValueError(
                f"clause {str(clause)!r}: ranges are written on plain releases ('2.1', '2.1.4'); "
                "pre-releases answer as their release (docs/versions.md)"
            )
        raw = tuple(parsed.release)
        key = (parsed.epoch,) + _strip(raw)
        if op == ">=" and not wildcard:
            c_lo, c_hi = key, None
        elif op == ">":
            c_lo, c_hi = _next_patch(parsed.epoch, raw), None
        elif op == "<":
            c_lo, c_hi = None, key
        elif op == "<=":
            c_lo, c_hi = None, _next_patch(parsed.epoch, raw)
        elif op == "==" and wildcard:
            c_lo, c_hi = key, _bump(parsed.epoch, raw, len(raw) - 1)
        elif op == "==":
            c_lo, c_hi = key, _next_patch(parsed.epoch, raw)
        elif op == "~=":
            if len(raw) < 2:
                raise ValueError(f"clause {str(clause)!r}: '~=' needs at least two release parts")
            c_lo, c_hi = key, _bump(parsed.epoch, raw, len(raw) - 2)
        else:
            raise ValueError(
                f"clause {str(clause)!r}: operator {op!r} is not supported in ranges; "
                "use >=, >, <, <=, ==, ==X.Y.* or ~= so every range is one interval"
            )
        if c_lo is not None and (lo is None or c_lo > lo):
            lo = c_lo
        if c_hi is not None and (hi is None or c_hi < hi):
            hi = c_hi
    if lo is not None and hi is not None and not lo < hi:
        raise ValueError(f"{spec!r} is empty: no version satisfies every clause")
    return lo, hi


def _bump(epoch: int, raw: tuple[int, ...], index: int) -> Key:
    """Smallest key above every version that shares ``raw[:index+1]`` with the last part +1."""
    parts = list(raw[: index + 1])
    parts[-1] += 1
    return (epoch,) + _strip(tuple(parts))


def _next_patch(epoch: int, raw: tuple[int, ...]) -> Key:
    """Smallest key strictly above ``raw`` (``2.3`` -> ``2.3.0.1``): keys have no gaps below it."""
    padded = raw + (0,) * max(0, 3 - len(raw))
    return (epoch,) + padded + (1,)


def overlaps(a: tuple[Key | None, Key | None], b: tuple[Key | None, Key | None]) -> bool:
    """True when two half-open intervals share at least one key."""
    a_lo, a_hi = a
    b_lo, b_hi = b
    starts_before_b_ends = b_hi is None or a_lo is None or a_lo < b_hi
    b_starts_before_a_ends = a_hi is None or b_lo is None or b_lo < a_hi
    return starts_before_b_ends and b_starts_before_a_ends


def range_at(ranges: "Sequence[_R]", version: str) -> "_R | None":
    """The range (anything with a `.versions` specifier) containing `version`, or None: a gap
    means unknown. The one evaluator behind lint, the run merge and the static evidence."""
    key = release_key(version)
    for item in ranges:
        lo, hi = compile_range(item.versions)
        if (lo is None or lo <= key) and (hi is None or key < hi):
            return item
    return None
