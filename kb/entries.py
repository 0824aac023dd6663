"""The compiled index's shapes, named once: kb/compile.py (and the evidence mergers) build
them, and kb/query/, kb/site/ and every other reader read them by these names.

The index is a Python literal of plain tuples and dicts (kb/_index.py: a literal loads from
bytecode faster than anything else, and `import kb` may import nothing but the standard
library's already-loaded modules, not even `collections` or `typing`). So:

- a *range entry* (one item of a source's `status`, of `distributions[name]`, of a dispute's
  `status`) is a plain tuple whose fields are named by the position constants below:
  `entry[DETERMINISTIC]`, never `entry[4]`; `range_fields(entry)` gives the fields by name
  where speed does not matter;
- a *static entry* (one item of `static[source id]`) likewise, with the STATIC_* constants;
- dicts (a source, a run, a solution, a registry, the index itself) keep string keys, and
  their keys are listed once, in the TypedDicts below (for type checkers and readers only:
  they are not defined at run time).

The index is the project's own output, checked fresh by `kb build --check`: readers take these
shapes as given and do not re-check types.

In kb/_index.py the tables of PACKED are `Packed`: each value is kept as its marshal bytes and
decoded the first time it is read, so a lookup builds (and, when the process exits, frees) the
few records it answers from rather than all of them: about a third of a lookup's start-up was
the index's objects. The tables for ops with no record (`seen_marks`, `elementwise`,
`kernel_classes`) and the per-record evidence marks (`evidence`) are packed too: decoded they
were 2.6 million of the 15.9 million instructions that `import kb; kb.status(...)` adds to
`python -c pass` (callgrind). The whole index (`kb.query.index()`) holds plain dicts.
"""

from _collections_abc import Mapping as _Mapping  # collections.abc without importing collections
from marshal import dumps as _dumps, loads as _loads


# A range entry: (lo, hi, versions, solutions, deterministic, raises, note, batch_invariant, when, switch,
# varies, varies_with, basis, read).
RANGE_FIELDS = ("lo", "hi", "versions", "solutions", "deterministic", "raises", "note", "batch_invariant", "when", "switch",
                "varies", "varies_with", "basis", "read")
LO = 0               # release key the range starts at (inclusive), None: from the first release
HI = 1               # release key it ends before, None: open-ended
VERSIONS = 2         # the record's PEP 440 range text (">=2.1,<2.5")
SOLUTIONS = 3        # codes, any one of which fixes the source there; () with DETERMINISTIC false: NS
DETERMINISTIC = 4    # bool: deterministic by default in the range
RAISES = 5           # what requesting determinism raises there, or None
NOTE = 6             # free text, or None
BATCH_INVARIANT = 7  # True, False or None (nothing claimed)
WHEN = 8             # the range's own call condition: ((key, values), ...) or None
SWITCH = 9           # what the framework's determinism switch does: "fixes", "raises", "silent" or None
VARIES = 10          # "run-to-run" (derived where not deterministic), "configuration", or None (deterministic)
VARIES_WITH = 11     # with "configuration": what changes the bits (schema.CONFIGURATION), else ()
BASIS = 12           # how the range is known: "static" (code read at its releases), "verified" (a sweep run
                     # of a release the record's own ranges leave out, kb/verify/extend.py) or None (documented)
READ = 13            # the code read for a static range: ({release, repo, tag, commit, path, member, lines, what}, ...)

# A static entry: (key, release, file, found, missing, bypassed_by).
STATIC_FIELDS = ("key", "release", "file", "found", "missing", "bypassed_by")
STATIC_KEY, STATIC_RELEASE, STATIC_FILE, STATIC_FOUND, STATIC_MISSING, STATIC_BYPASSED = range(6)


# A seen entry (one item of `seen[framework][op]`, kb/verify/seen.py): a sweep case of an op no record names.
# `file` indexes `seen_files`; `modes` is ((mode, distinct, outcome), ...); the op's plain-literal defaults
# are `seen_defaults[framework][op]`, once per op.
SEEN_FIELDS = ("key", "device", "facts", "pass", "dtype", "class", "file", "case", "modes", "inputs")
SEEN_KEY, SEEN_DEVICE, SEEN_FACTS, SEEN_PASS, SEEN_DTYPE, SEEN_CLASS, SEEN_FILE, SEEN_CASE, SEEN_MODES, SEEN_INPUTS = range(10)
# seen_files[i]: (path, suite, framework, version, env_id, gpu, gpu_count, driver, cuda, cudnn, started, runs per mode)
SEEN_FILE_FIELDS = ("file", "suite", "framework", "version", "env_id", "gpu", "gpu_count", "driver", "cuda", "cudnn",
                    "date", "n")


def range_fields(entry: tuple) -> dict:
    """A range entry's fields by name (RANGE_FIELDS)."""
    return dict(zip(RANGE_FIELDS, entry))


class _Lazy(_Mapping):
    """A read-only mapping whose values are held encoded (one literal per key in a generated module) and
    decoded on first read; a subclass says how (`_decode`)."""

    __slots__ = ("_blobs", "_decoded")

    def __init__(self, blobs: dict) -> None:
        self._blobs = blobs
        self._decoded: dict = {}

    def _decode(self, blob):
        raise NotImplementedError

    def literal(self) -> str:
        """The Python expression that rebuilds this mapping (kb/generated.py writes it)."""
        lines = "".join(f"    {key!r}: {blob!r},\n" for key, blob in self._blobs.items())
        return type(self).__name__ + "({\n" + lines + "})"

    def __getitem__(self, key):
        found = self._decoded.get(key)
        if found is None:
            found = self._decoded[key] = self._decode(self._blobs[key])
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._blobs

    def __iter__(self):
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"


class Packed(_Lazy):
    """Values held as marshal bytes.

    >>> table = Packed.of({"a": {"id": "a", "ops": ("x",)}, "b": {"id": "b", "ops": ()}})
    >>> table["a"]["ops"], "b" in table, list(table), table == {"a": {"id": "a", "ops": ("x",)}, "b": {"id": "b", "ops": ()}}
    (('x',), True, ['a', 'b'], True)
    """

    __slots__ = ()

    @classmethod
    def of(cls, values: dict) -> "Packed":
        """Pack plain data (marshal format 2: the same bytes for equal values, whatever objects
        they share, so `kb build --check` compares like with like)."""
        return cls({key: _dumps(value, 2) for key, value in values.items()})

    def _decode(self, blob):
        return _loads(blob)


class JsonPacked(_Lazy):
    """Values held as compact JSON text, every JSON array read back as a tuple (the index holds no lists).
    kb/_details.py's `runs`: as a Python literal its 4.5 MB took a second to compile in every scan without a
    bytecode cache; as one string per record it compiles in a tenth of that, and a scan decodes only the
    records whose findings it reports.

    >>> table = JsonPacked.of({"a": ({"id": "a", "n": 1.5, "ok": True},), "b": ()})
    >>> table["a"], "b" in table, list(table), table == {"a": ({"id": "a", "n": 1.5, "ok": True},), "b": ()}
    (({'id': 'a', 'n': 1.5, 'ok': True},), True, ['a', 'b'], True)
    """

    __slots__ = ()

    @classmethod
    def of(cls, values: dict) -> "JsonPacked":
        """Pack plain data; ValueError for a value JSON would not give back equal (a list, a key not a str)."""
        import json

        texts = {}
        for key, value in values.items():
            text = texts[key] = json.dumps(value, separators=(",", ":"))
            if _tuples(json.loads(text)) != value:
                raise ValueError(f"{key!r}: not plain JSON data with tuples for arrays")
        return cls(texts)

    def _decode(self, blob):
        import json

        return _tuples(json.loads(blob))


def _tuples(value):
    """Decoded JSON with every list a tuple (types compared exactly: a list is never a subclass here)."""
    kind = type(value)
    if kind is list:
        return tuple([_tuples(item) for item in value])
    if kind is dict:
        return {key: _tuples(item) for key, item in value.items()}
    return value


PACKED = ("sources", "names", "registries", "solutions", "evidence", "seen_marks", "elementwise", "kernel_classes")
"""The tables of kb/_index.py that are Packed."""

JSON_PACKED = ("runs",)
"""The tables of kb/_details.py that are JsonPacked."""


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers treat it as True)
if TYPE_CHECKING:
    from typing import Any, TypedDict

    Range = tuple  # the fields of RANGE_FIELDS, in that order
    When = tuple   # ((key, (value, ...)), ...), sorted by key

    class Dispute(TypedDict):
        claim: str
        status: tuple[Range, ...]
        resolution: str | None
        references: tuple[dict[str, Any], ...]

    class Source(TypedDict):
        """`sources[id]`: one record, as compiled (kb/_index.py keeps query.CORE_SOURCE_FIELDS)."""
        id: str
        framework: str
        title: str
        device: str  # gpu | cpu | any
        # "pass" too (forward | backward | both): a keyword, so not a TypedDict field here
        mechanism: str
        summary: str
        conditions: tuple[str, ...]
        calls: tuple[tuple[tuple[str, ...], When], ...]  # (ops or (), when) per pattern
        notes: str | None
        # the record's scan: block (schema.ScanRules), read by kb/scan/rules.py; None when it has none
        scan: dict[str, Any] | None
        ops: tuple[str, ...]
        aliases: tuple[str, ...]
        status: tuple[Range, ...]
        # op -> (lo, hi, versions, note): the releases in which the op is this source (schema.OpVersions)
        op_versions: dict[str, tuple[tuple[int, ...] | None, tuple[int, ...] | None, str, str]]
        caused_by: tuple[str, ...]
        distributions: dict[str, tuple[Range, ...]]
        disputes: tuple[Dispute, ...]
        references: tuple[dict[str, Any], ...]
        verify: str | None
        unverifiable: str | None

    class Mode(TypedDict):
        mode: str
        solutions: tuple[str, ...]
        outcome: str  # ok | raised | error | env-error
        distinct: int | None
        max_abs_diff: float | None
        max_ulp_diff: float | None
        median_s: float | None
        time_ratio: float | None
        message: str | None
        same_as_default: bool | None

    class Run(TypedDict):
        """`runs[source id][i]`: one verifier run (kb/verify/merge.py)."""
        source: str
        verifier: str
        env_id: str
        date: str
        file: str
        gpu: str | None
        gpu_count: int | None
        driver: str | None
        cuda: str | None
        cudnn: str | None
        framework: str
        version: str
        key: tuple[int, ...]
        device: str
        n: int
        modes: tuple[Mode, ...]
        contradicts: tuple[str, ...]
        reviewed: Any
        op: str | None
        call: dict[str, Any] | None
        applies: bool | None
        sweep: Any

    class Solution(TypedDict):
        title: str
        kind: str
        how: str
        snippet: str
        phase: int
        preference: int
        implies: tuple[str, ...]

    class Registry(TypedDict, total=False):
        framework: str
        keys: tuple[tuple[int, ...], ...]
        latest: str
        # TensorFlow only (compile.keras_requirements): per release whose wheel was read, (key, version,
        # keras requirement, newest known Keras release it admits or None, Keras 3 or later)
        keras: tuple[tuple[tuple[int, ...], str, str, str | None, bool], ...]

    class Index(TypedDict, total=False):
        """The whole index (kb/compile.py's build_index); kb/_index.py has `evidence` instead of
        query.DETAIL_KEYS."""
        format: int
        prefixes: dict[str, tuple[str, ...]]
        solutions: dict[str, Solution]
        order: tuple[str, ...]
        sources: dict[str, Source]
        names: dict[str, dict[str, tuple[str, ...]]]
        registries: dict[str, Registry]
        switches: dict[str, tuple[str, ...]]
        params: dict[str, dict[str, tuple[str, ...]]]
        runs: dict[str, tuple[Run, ...]]
        static: dict[str, tuple[tuple, ...]]
        static_wheels: dict[str, tuple[tuple[str, str], ...]]
        evidence: dict[str, tuple[tuple, tuple]]
