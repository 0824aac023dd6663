"""Immutable result types of `kb.status()`.

Hand-rolled rather than dataclasses: `import dataclasses` alone costs more start-up time
than the query path is allowed (see benchmarks/). Each type lists its fields once in
`_fields`; equality, hashing, repr and `to_dict()` derive from that. The fields' types are
declared for type checkers only (under TYPE_CHECKING, so nothing is evaluated at run time).
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers treat it as True)

class _Frozen:
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _json_order: tuple[str, ...] = ()  # fields `to_dict()` puts first (Status: its headline)

    def __init__(self, **values: object) -> None:
        setter = object.__setattr__
        for name in self._fields:
            setter(self, name, values[name])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in self._fields)

    def __eq__(self, other: object) -> bool:
        # `is` first: the query hands out one object per record range, and the site compares
        # answers release by release (most of `kb site`'s time went into equal-field walks).
        return other is self or (type(other) is type(self) and other._values() == self._values())

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + tuple(_frozen(v) for v in self._values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({inner})"

    def to_dict(self, memo: dict | None = None) -> dict[str, object]:
        """Plain data for JSON. `memo` (a dict the caller keeps while it converts many answers,
        as the site's JSON API does) converts each shared object once; treat the result as
        read-only then, since equal parts are the same dict."""
        names = self._json_order + tuple(n for n in self._fields if n not in self._json_order) if self._json_order else self._fields
        if memo is None:
            return {n.rstrip("_"): _plain(getattr(self, n), None) for n in names}
        hit = memo.get(id(self))
        if hit is None:  # the object is kept beside its dict so that its id is not reused
            hit = memo[id(self)] = (self, {n.rstrip("_"): _plain(getattr(self, n), memo) for n in names})
        return hit[1]


def _frozen(value: object) -> object:
    """Dicts (a call, a condition) hash by their items."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, tuple):
        return tuple(_frozen(v) for v in value)
    return value


def _plain(value: object, memo: dict | None) -> object:
    if isinstance(value, _Frozen):
        return value.to_dict(memo)
    if isinstance(value, (tuple, list)):
        return [_plain(v, memo) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, memo) for k, v in value.items()}
    return value


class Reference(_Frozen):
    """Where a fact comes from: an issue, PR, commit, document or release notes."""

    __slots__ = _fields = ("kind", "title", "url", "repo", "number", "sha", "state", "version")

    if TYPE_CHECKING:
        kind: str  # issue | pr | commit | doc | release-notes
        title: str | None
        url: str | None
        repo: str | None
        number: int | None
        sha: str | None
        state: str | None
        version: str | None

    def __str__(self) -> str:
        if self.kind in ("issue", "pr"):
            return f"{self.repo}#{self.number} {self.title or ''}".strip()
        if self.kind == "commit":
            return f"{self.repo}@{(self.sha or '')[:10]} {self.title or ''}".strip()
        if self.kind == "release-notes":
            return f"release notes {self.version}"
        return self.title or self.url or self.kind


class CodeRead(_Frozen):
    """One place in a framework's code read at a release (a record range's `read:`, or the kernel class
    of an elementwise op): the release, the repository and tag, the file (and the member of the
    released wheel it was read in), the 1-based lines, what they show, and the file's address."""

    __slots__ = _fields = ("release", "repo", "tag", "commit", "path", "member", "lines", "what", "url")

    if TYPE_CHECKING:
        release: str | None
        repo: str | None
        tag: str | None
        commit: str | None
        path: str
        member: str | None
        lines: tuple[int, ...]
        what: str
        url: str | None

    def __str__(self) -> str:
        where = self.path + (":" + ",".join(str(n) for n in self.lines) if self.lines else "")
        return f"{self.repo} {self.tag} {where}: {self.what}"


class SourceStatus(_Frozen):
    """One source record as it applies to the queried version.

    `deterministic` is this source's own answer (None: the record has no range for the
    version); `versions` is the range that matched. `batch_invariant` is the matched range's
    claim about batch size (None: unknown). `caused_by` names the library records (cuDNN,
    cuBLAS, NCCL, Horovod) whose mechanism this source exposes; their references are in
    `Status.references`, and `kb.status(<id>, <library version>)` answers for them.

    `when` is the structured condition under which the source applies to the queried op (one
    mapping per alternative, parameter or fact -> accepted values; `()` = every call) and
    `condition` the same as one readable line. `applies` is True when the call satisfies it
    (or there is none), None when the call leaves it undecided; `depends_on` names what the
    call would have to say to decide it (docs/calls.md).

    `switch` says what the framework's determinism switch (torch.use_deterministic_algorithms,
    XLA's deterministic-ops flag, enable_op_determinism) does for this source in the matched
    range: "fixes", "raises", "silent" (it runs without an error and results still differ: the
    switch is never the fix, `solutions` holds what is), or None (nothing known, or not
    applicable).

    `varies` says how the source makes results differ in the matched range: "run-to-run" (the same
    call, settings and machine give other bits from one run to the next), "configuration" (the bits
    repeat run to run with the settings fixed, so `deterministic` is True, and change when something
    in `varies_with` changes: algorithm, protocol, channels, ranks, message-size, version, topology;
    `solutions` then keep the bits the same across those changes), or None (deterministic, or unknown).

    `basis` says how the matched range is known: "documented" (the record's references),
    "static" (the code of the release read: `read` lists the tag, file and lines), "verified" (a
    sweep of a release the record's own ranges leave out), or None (no range matched).
    """

    __slots__ = _fields = (
        "id", "title", "mechanism", "pass_", "summary", "versions", "deterministic",
        "solutions", "raises", "note", "disputed", "batch_invariant", "caused_by",
        "when", "condition", "applies", "depends_on", "switch", "varies", "varies_with", "basis", "read",
    )

    if TYPE_CHECKING:
        id: str
        title: str
        mechanism: str
        pass_: str
        summary: str
        versions: str | None
        deterministic: bool | None
        solutions: tuple[str, ...]
        raises: str | None
        note: str | None
        disputed: tuple[str, ...]
        batch_invariant: bool | None
        caused_by: tuple[str, ...]
        when: tuple[dict[str, tuple[object, ...]], ...]
        condition: str | None
        applies: bool | None
        depends_on: tuple[str, ...]
        switch: str | None
        varies: str | None  # run-to-run | configuration
        varies_with: tuple[str, ...]
        basis: str | None  # documented | static | verified
        read: tuple[CodeRead, ...]


class Status(_Frozen):
    """The answer to `kb.status(op, version)`. See docs/api.md for each field's meaning.

    `call` is the call as given (None: unknown); `depends_on_call` is True when the answer
    would change with the call (an applying source has a condition the call leaves open);
    `excluded` names the sources the call rules out (the reason is in `notes`); `silent` names
    the applying sources that stay non-deterministic under the framework's determinism switch
    without an error (their fix, if any, is in their `solutions`; never the switch).

    `basis` says how the answer is known: "verified" (a run on the queried device, for this
    version and call: a verifier or a sweep case, in `verified`; for an op with no record, a sweep
    case that saw no difference), "static" (code or binary read at this release: the wheels'
    alerts in `static`, the code in `read`), "documented" (the records' sources, or the framework's
    own documented guarantee), "unverified" (nothing covers the op on this version and device:
    `deterministic` is then None, never True; "no known source, not verified").

    `headline` is the answer's first line in words, the same in `str()`, the CLI, JSON and the
    site: "not deterministic ...", "deterministic, verified", "no difference seen ...", "deterministic
    by the code read", "documented deterministic", "no known source, not verified" (kb/query/headline.py).
    `read` lists the code read that the answer rests on (a static range's tag, file and lines, or the
    kernel class of an elementwise op), each a `CodeRead`.

    `varies_with` is apart from `deterministic` (which is about repeats of one run): what, when it
    changes between jobs, changes the bits although each job repeats run to run (an applying
    source with varies "configuration": the collective algorithm, protocol, channel count, rank
    count, message size, library version or topology); () when no applying source says so.
    """

    __slots__ = _fields = (
        "op", "framework", "version", "device", "distribution", "deterministic",
        "solutions", "recipe", "sources", "references", "verified", "notes", "batch_invariant",
        "call", "depends_on_call", "excluded", "static", "silent", "basis", "varies_with", "headline", "read",
    )
    _json_order = ("headline",)

    if TYPE_CHECKING:
        op: str
        framework: str
        version: str
        device: str
        distribution: str | None
        deterministic: bool | None
        solutions: tuple[str, ...]
        recipe: tuple[str, ...] | None
        sources: tuple[SourceStatus, ...]
        references: tuple[Reference, ...]
        verified: "tuple[Evidence, ...]"  # defined below
        notes: tuple[str, ...]
        batch_invariant: bool | None
        call: dict[str, object] | None
        depends_on_call: bool
        excluded: tuple[str, ...]
        static: "tuple[StaticEvidence, ...]"
        silent: tuple[str, ...]
        basis: str  # verified | static | documented | unverified
        varies_with: tuple[str, ...]
        headline: str
        read: tuple[CodeRead, ...]

    def __str__(self) -> str:
        headline = self.headline
        if headline.startswith("not deterministic"):  # capitals for emphasis, as str() always wrote it
            headline = "NOT" + headline[3:]
        line = f"{self.op} {self.framework} {self.version} ({self.device}): {headline}"
        if self.recipe:
            line += "; fix: " + " + ".join(self.recipe)
        elif self.deterministic is False and self.recipe is None:
            line += "; no known solution in this version"
        if self.silent:
            line += "; NOT fixed by the deterministic switch: " + ", ".join(self.silent)
        return line


class ModeEvidence(_Frozen):
    """One mode of a verifier run: `default` or a solution code, measured N times.

    `distinct` is how many different result hashes the N runs gave: 1 means "0 of N
    differed", never "deterministic". `time_ratio` is the median time over the default
    mode's; `outcome` is ok, raised (the op or the switch raised: `message`) or error.
    `same_as_default` is apart from `distinct`: for a run that changed a setting between modes
    (verifiers/collectives), whether this mode's bits equal the default mode's (None: not compared,
    or one of them did not repeat).
    """

    __slots__ = _fields = (
        "mode", "solutions", "outcome", "distinct", "max_abs_diff", "max_ulp_diff", "median_s", "time_ratio", "message",
        "same_as_default",
    )

    if TYPE_CHECKING:
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

    def __str__(self) -> str:
        if self.outcome != "ok":
            return f"{self.mode}: {self.outcome} ({self.message})"
        ratio = f", {self.time_ratio}x time" if self.time_ratio and self.solutions else ""
        return f"{self.mode}: {self.distinct} distinct{ratio}"


class Evidence(_Frozen):
    """The newest verifier run for one source in one environment (from data/runs/).

    It applies only to the framework version and device it was measured on; `contradicts`
    lists why it disagrees with the record, for a person to review (lint KB015); `reviewed`
    is that person's note once read (the record's verify.reviewed), else None. `op` and
    `call` are the case that ran (the op as called and its call facts, docs/calls.md); None
    for runs made before verifiers checked cases, which speak for no particular call.

    `sweep` is None for a verifier's run; for a case of an operator sweep (data/sweeps/,
    verifier `sweep:<suite>`) it holds the suite, the case id, its class (same, fixed, raises,
    silent), pass and exact dtype, and the replacement fixes the sweep measured.
    """

    __slots__ = _fields = (
        "source", "verifier", "env_id", "date", "file", "gpu", "gpu_count", "driver", "cuda", "cudnn",
        "framework", "version", "device", "n", "modes", "contradicts", "reviewed", "op", "call", "sweep",
    )

    if TYPE_CHECKING:
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
        device: str
        n: int
        modes: tuple[ModeEvidence, ...]
        contradicts: tuple[str, ...]
        reviewed: object
        op: str | None
        call: dict[str, object] | None
        sweep: dict[str, object] | None

    def __str__(self) -> str:
        where = self.gpu or "CPU"
        modes = "; ".join((f"{m.mode} {m.distinct}/{self.n}" + (" other bits than default" if m.same_as_default is False else ""))
                          if m.outcome == "ok" else f"{m.mode} {m.outcome}" for m in self.modes)
        case = ""
        if self.op:
            case = " [" + self.op + "(" + ", ".join(f"{k}={v!r}" for k, v in (self.call or {}).items()) + ")]"
        if self.sweep:
            case += f" sweep {self.sweep['suite']} ({self.sweep['pass']}, {self.sweep['dtype']}): {self.sweep['class']}"
            if self.sweep.get("inputs"):
                case += f", inputs {self.sweep['inputs']}"
        who = self.source if self.source is not None else "no record"  # a sweep case of an op with no record
        return f"{who}{case} on {where}, {self.framework} {self.version}, {self.date[:10]}: {modes}"


class StaticEvidence(_Frozen):
    """What one released wheel holds for one source (from `kb verify --static`).

    `found` lists the record's claimed signals present in the release, each as (signal,
    wheel file, sha256, members); `missing` the claimed signals absent from it; `bypassed_by`
    the Python functions that take a deterministic path before the alert is reached. Read from the
    shipped code, so it holds for that exact release on every machine.
    """

    __slots__ = _fields = ("source", "framework", "release", "file", "found", "missing", "bypassed_by")

    if TYPE_CHECKING:
        source: str
        framework: str
        release: str
        file: str
        found: tuple[tuple[str, str, str, tuple[str, ...]], ...]  # (signal, wheel file, sha256, members)
        missing: tuple[str, ...]
        bypassed_by: tuple[str, ...]

    def __str__(self) -> str:
        if self.found and self.bypassed_by:
            return f"the {self.release} wheel's {self.bypassed_by[0]} avoids {self.found[0][0]} (a deterministic path)"
        if self.found:
            name, _wheel, _digest, members = self.found[0]
            where = members[0] if members else "wheel"
            return f"the {self.release} wheel's {where} raises {name}"
        return f"the {self.release} wheel holds none of {', '.join(self.missing)}"
