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
"""


# A range entry: (lo, hi, versions, solutions, deterministic, raises, note, batch_invariant, when, switch).
RANGE_FIELDS = ("lo", "hi", "versions", "solutions", "deterministic", "raises", "note", "batch_invariant", "when", "switch")
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

# A static entry: (key, release, file, found, missing, bypassed_by).
STATIC_FIELDS = ("key", "release", "file", "found", "missing", "bypassed_by")
STATIC_KEY, STATIC_RELEASE, STATIC_FILE, STATIC_FOUND, STATIC_MISSING, STATIC_BYPASSED = range(6)


def range_fields(entry: tuple) -> dict:
    """A range entry's fields by name (RANGE_FIELDS)."""
    return dict(zip(RANGE_FIELDS, entry))


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
