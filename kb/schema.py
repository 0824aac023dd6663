"""Pydantic models for every curated file under data/.

These models are the single definition of the data format: lint validates against them,
`kb schema` exports them as JSON Schema for editors, and the index compiler reads only
validated models. They are never imported on the query path (see kb/query/).

Why one module of about 700 lines: it is the data format's one definition. `kb schema` exports
it as one JSON Schema, and the models refer to each other (a record's ranges, its verify and
scan blocks, the calls they name); split, one format would be spread over files that must be
read together, and the shared base model would be a private name reached across modules.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints, model_validator

from kb.calls import ARG_FACTS, AT_METHODS, COMPILERS, DTYPES, KINDS, LAYOUTS, NUMEL, check_arg_fact, check_numel_condition  # the query path's own lists: one copy
from kb.calls import FACTS as CALL_FACTS

FRAMEWORKS = (
    "tensorflow", "pytorch", "jax", "cudnn", "cublas", "nccl", "horovod", "python", "numpy", "vllm",
    "sglang", "flash-attn", "transformer-engine", "megatron-core", "cccl", "deepspeed", "keras",
    "torchvision", "mamba-ssm", "causal-conv1d",
)
"""Frameworks and libraries a record can be about; `python`/`numpy` cover recipe ingredients;
`vllm` and `sglang` are serving engines (batch invariance under concurrent requests);
`flash-attn`, `transformer-engine`, `megatron-core` are training stacks on top of PyTorch, each
with its own determinism switch; `cccl` is NVIDIA's CUDA Core Compute Libraries (CUB, Thrust);
`deepspeed` is Microsoft's training library (no general switch: its records name the ones it has).
`keras` is Keras 3 (multi-backend; `tf.keras` since TensorFlow 2.16), which keeps its own random
generator beside the backend's. `torchvision` is PyTorch's vision library (its detection ops have CUDA
kernels of their own, and PyTorch's switch reaches them). `mamba-ssm` (Mamba's selective-scan and SSD
kernels) and `causal-conv1d` (its depthwise causal convolution) are CUDA/Triton extensions for PyTorch
whose deterministic paths follow PyTorch's switch or their own variables (MAMBA_DETERMINISTIC,
CAUSAL_CONV1D_DETERMINISTIC)."""

Framework = Literal[
    "tensorflow", "pytorch", "jax", "cudnn", "cublas", "nccl", "horovod", "python", "numpy", "vllm",
    "sglang", "flash-attn", "transformer-engine", "megatron-core", "cccl", "deepspeed", "keras",
    "torchvision", "mamba-ssm", "causal-conv1d",
]
Device = Literal["gpu", "cpu", "any"]
Pass = Literal["forward", "backward", "both"]
Mechanism = Literal[
    "cuda-atomics",
    "autotuning",
    "algorithm-selection",
    "reduction-order",
    "threading",
    "prng-seeding",
    "data-loader",
    "distributed-reduction",
    "graph-optimization",
    "other",
]

RecordId = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9]+(?:[.-][a-z0-9_]+)+$", max_length=80),
]
SolutionCode = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,15}$")]
# GitHub's rules: an owner is letters, digits and single inner hyphens (at most 39); a name is
# letters, digits, '.', '-', '_' with at least one that is not '.' (so never '.' or '..', which
# would turn /repos/{owner}/{name}/... into another API path).
Repo = Annotated[str, StringConstraints(
    pattern=r"^[A-Za-z0-9](?:-?[A-Za-z0-9])*/[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$", max_length=140)]
Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,40}$")]
Text = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True)]
TITLE_MAX = 500  # the longest title in data/ has 270 characters (a reference to a source file and its lines)
Title = Annotated[str, StringConstraints(min_length=1, max_length=TITLE_MAX, strip_whitespace=True)]
"""A title is shown on one line (CLI, site headings, search results): a 60,000-character one passed."""
OpName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")]
VersionStr = Annotated[str, StringConstraints(pattern=r"^[0-9][0-9A-Za-z.+!-]*$")]


class _Model(BaseModel):
    # Unknown keys are errors: a typo in a field name must not silently drop a fact.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


# --- references ---------------------------------------------------------------------


class IssueRef(_Model):
    """A GitHub issue or pull request; must exist in data/links.yaml."""

    kind: Literal["issue", "pr"]
    repo: Repo
    number: int = Field(gt=0)


class CommitRef(_Model):
    """A single commit (the seeds cite several fixes by commit rather than by PR)."""

    kind: Literal["commit"]
    repo: Repo
    sha: Sha


class DocRef(_Model):
    """Vendor or project documentation, a status page, an RFC, a talk."""

    kind: Literal["doc"]
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$")] | None = Field(
        None, description="Public address; may be omitted only for a seed with no public copy."
    )
    title: Title
    section: Text | None = Field(None, description="Heading or table the fact comes from.")
    seed: Annotated[str, StringConstraints(pattern=r"^[0-9]{3}$")] | None = Field(
        None, description="The shared/seeds/ file number when the document is one of the seeds."
    )


    @model_validator(mode="after")
    def _findable(self) -> DocRef:
        if self.url is None and self.seed is None:
            raise ValueError("a doc reference needs a url (or, for a seed with no public copy, seed:)")
        return self


class ReleaseNotesRef(_Model):
    """A framework's release notes for one version."""

    kind: Literal["release-notes"]
    framework: Framework
    version: VersionStr
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$")] | None = None


Reference = Annotated[IssueRef | CommitRef | DocRef | ReleaseNotesRef, Field(discriminator="kind")]


# --- source records -----------------------------------------------------------------

DTYPE_KINDS = KINDS

SWITCHES: dict[str, tuple[str, ...]] = {
    "pytorch": ("PT_DET", "PT_DETW", "PT_SETDET", "PT_INDUCTOR_DET"),
    "jax": ("XLA_DET", "XLA_EXCL"),
    "torchvision": ("PT_DET", "PT_DETW"),
    "mamba-ssm": ("PT_DET", "MAMBA_DET"),
    "causal-conv1d": ("PT_DET", "CCONV_DET"),
    "tensorflow": ("TCD", "TDO", "TDF", "TDP", "EOD"),
}
"""Each framework's determinism switch (the codes that request deterministic kernels
framework-wide: torch.use_deterministic_algorithms, XLA's deterministic-ops flags,
TF_DETERMINISTIC_OPS / enable_op_determinism). A range's `switch:` says what it does for the
source; a range with `switch: silent` may not list any of these as a solution (KB020)."""
SwitchEffect = Literal["fixes", "raises", "silent"]

VARIES = ("run-to-run", "configuration")
"""How a source makes results differ: `run-to-run` (the same call, settings and machine give other bits
from one run to the next), or `configuration` (the bits repeat run to run once the settings, machine
and sizes are fixed, and change when something in `varies_with` changes)."""
Varies = Literal["run-to-run", "configuration"]
CONFIGURATION = ("algorithm", "protocol", "channels", "ranks", "message-size", "version", "topology")
"""What a configuration-dependent source follows: the collective algorithm and protocol a library picks,
its channel (CTA) count, the number of ranks, the message size (fused buffers, buckets), the library's
version (its tuning) and the machine's topology."""
ConfigurationKey = Literal["algorithm", "protocol", "channels", "ranks", "message-size", "version", "topology"]

_FACT_PATTERN = "|".join(fact.replace(".", "\\.") for fact in CALL_FACTS)
_ARG_PATTERN = "|".join(f"\\.{fact}" for fact in ARG_FACTS)  # `<tensor>.<fact>`: kb/calls.py ARG_FACTS
CallKey = Annotated[str, StringConstraints(
    pattern=rf"^(?:{_FACT_PATTERN}|[A-Za-z_][A-Za-z0-9_]*(?:\.len|{_ARG_PATTERN})?)$")]
CallValue = StrictBool | StrictInt | StrictFloat | StrictStr | None
When = dict[CallKey, Annotated[list[CallValue], Field(min_length=1)]]


def _check_when(when: Mapping[str, Sequence[object]]) -> None:
    for key, values in when.items():
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"when.{key} lists a value twice")
        if key == "input.ndim" and not all(type(v) is int and v >= 0 for v in values):
            raise ValueError("when.input.ndim takes whole numbers (the input's rank)")
        if key == "input.dtype" and not all(v in DTYPE_KINDS or v in DTYPES for v in values):
            raise ValueError(f"when.input.dtype takes dtype kinds ({', '.join(DTYPE_KINDS)}) or exact dtypes "
                             f"({', '.join(DTYPES)})")
        if key.endswith(".len") and not all(type(v) is int and v >= 0 for v in values):
            raise ValueError(f"when.{key} takes whole numbers (the sequence's length)")
        if key == "input.layout" and not all(v in LAYOUTS for v in values):
            raise ValueError(f"when.input.layout takes layouts: {', '.join(LAYOUTS)}")
        if key == "at.method" and not all(v in AT_METHODS for v in values):
            raise ValueError(f"when.at.method takes the methods of x.at[idx]: {', '.join(AT_METHODS)}")
        if key.endswith(NUMEL):  # element counts or ranges of them ('>65536'): kb/calls.py NUMEL
            check_numel_condition(key, list(values))
            continue
        for v in values:  # a tensor argument's facts (`targets.dtype`, `weight.layout`): kb/calls.py ARG_FACTS
            try:
                check_arg_fact(key, v)
            except ValueError as exc:
                raise ValueError(f"when.{key}: {str(exc).split('] ', 1)[-1]}") from None
        if key == "compiled" and not all(v is None or v in COMPILERS for v in values):
            raise ValueError(f"when.compiled takes a compiler ({', '.join(COMPILERS)}) or null (eager)")


class CallPattern(_Model):
    """Calls of some of the record's ops that the record applies to (docs/calls.md)."""

    ops: list[OpName] = Field(
        default_factory=list, description="The record's ops this pattern is about; empty = every op of the record."
    )
    when: When = Field(
        default_factory=dict,
        description="Parameter names (or input.ndim, input.dtype, backend) with the values for which the "
        "record applies; every key must hold, a key holds when the call's value is one of its list. "
        "A tensor argument's value is its dtype kind (float, int, bool, complex); null = not given. "
        "<tensor>.numel (input.numel) takes element counts or ranges of them: '>65536', '>=1024,<65536'.",
    )

    @model_validator(mode="after")
    def _valid(self) -> CallPattern:
        _check_when(self.when)
        if len(set(self.ops)) != len(self.ops):
            raise ValueError("calls: an op is listed twice in one pattern")
        return self



class CodeRead(_Model):
    """One place in a framework's code read at a release: what a `basis: static` range rests on.

    The code is read where the release ships it (a file of the released wheel: `member`) or in the
    repository at the release's tag; `lines` are 1-based lines of that file as read."""

    release: VersionStr = Field(description="The release whose code was read (2.10.0).")
    repo: Repo = Field(description="The framework's repository (pytorch/pytorch).")
    tag: Text | None = Field(None, description="The release's tag in that repository (v2.10.0).")
    commit: Sha | None = Field(None, description="The commit read: the tag's (torch/version.py git_version), or the "
                               "one a code index stored when no tag was read.")
    path: Text = Field(description="The file's path in the repository (aten/src/ATen/native/cuda/ScanUtils.cuh).")
    member: Text | None = Field(None, description="The same file inside the released wheel, when read there.")
    lines: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list, description="1-based lines that carry the fact.")
    what: Text = Field(description="What the lines show, in one sentence.")

    @model_validator(mode="after")
    def _where(self) -> CodeRead:
        if self.tag is None and self.commit is None:
            raise ValueError("a place read names the release's tag or the commit read")
        return self


class Range(_Model):
    """What applies in one version range of a source."""

    versions: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="PEP 440 specifier set, e.g. '>=1.14,<2.1' (docs/versions.md)."
    )
    solutions: list[SolutionCode] = Field(
        default_factory=list,
        description="Alternatives: any one fixes this source. Empty = NS (no solution).",
    )
    deterministic: bool = Field(False, description="True when the op is deterministic by default here.")
    raises: Text | None = Field(
        None,
        description="Exception raised when determinism is requested and no deterministic "
        "implementation exists (e.g. tf.errors.UnimplementedError).",
    )
    batch_invariant: bool | None = Field(
        None,
        description="True when results do not change with batch size or concurrent requests here; "
        "False when they do (run-to-run deterministic or not); None when no source says.",
    )
    switch: SwitchEffect | None = Field(
        None,
        description="What the framework's determinism switch (schema.SWITCHES: PT_DET, XLA_DET, EOD, ...) does "
        "for this source here: `fixes` (it is listed among the solutions), `raises` (requesting determinism "
        "raises: give `raises:`), or `silent`: the switch runs without an error and the results still differ, "
        "so the switch is never offered as the fix (solutions: a replacement that was verified, or none = NS). "
        "Left out: derived (`raises:` given -> raises; a switch code in solutions -> fixes).",
    )
    varies: Varies | None = Field(
        None,
        description="`configuration`: the source's results repeat run to run with the settings, machine and "
        "sizes fixed (so deterministic: true), and change when something in `varies_with` changes; `solutions` "
        "are then what keeps the bits the same across those changes. `run-to-run`: results differ between "
        "runs of the same call (left out: derived, run-to-run where deterministic is false).",
    )
    varies_with: list[ConfigurationKey] = Field(
        default_factory=list,
        description="With varies: configuration, what changes the bits: algorithm, protocol, channels, ranks, "
        "message-size, version, topology (schema.CONFIGURATION).",
    )
    note: Text | None = None
    when: When | None = Field(
        None,
        description="Call conditions that hold in this range only, in addition to the record's `calls:` "
        "(docs/calls.md): e.g. {weights: [float, int]} where a release narrowed an alert.",
    )
    basis: Literal["static"] | None = Field(
        None,
        description="How the range is known when not from the record's references: `static`, the code of each "
        "release in the range read (give `read:`: the tag, file and lines read). Left out: documented by the "
        "record's references (a run of the release makes an answer `verified` at query time).",
    )
    read: list[CodeRead] = Field(
        default_factory=list,
        description="For `basis: static`: the code read at the releases of the range, each with its tag, file and lines.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Range:
        if self.when is not None:
            _check_when(self.when)
        if self.varies == "configuration":
            if not self.deterministic:
                raise ValueError("varies: configuration means the bits repeat run to run with the configuration "
                                 "fixed: say deterministic: true (or varies: run-to-run)")
            if not self.varies_with:
                raise ValueError("varies: configuration needs varies_with: what changes the bits "
                                 f"({', '.join(CONFIGURATION)})")
        elif self.varies_with:
            raise ValueError("varies_with belongs to varies: configuration")
        if self.varies == "run-to-run" and self.deterministic:
            raise ValueError("varies: run-to-run contradicts deterministic: true")
        if len(set(self.varies_with)) != len(self.varies_with):
            raise ValueError("varies_with lists a value twice")
        if (self.basis == "static") != bool(self.read):
            raise ValueError("basis: static needs read: (the tag, file and lines read), and read: needs basis: static")
        if self.deterministic and self.solutions and self.varies != "configuration":
            raise ValueError("a range that is deterministic by default needs no solutions; drop one of them")
        if self.deterministic and self.raises:
            raise ValueError("a range that is deterministic by default cannot also raise")
        if len(set(self.solutions)) != len(self.solutions):
            raise ValueError("solutions lists a code twice")
        if self.switch is not None and self.deterministic:
            raise ValueError("a range that is deterministic by default has no switch effect; drop switch:")
        if self.switch == "silent" and self.raises:
            raise ValueError("switch: silent means the switch raises nothing; drop raises: or say switch: raises")
        if self.switch == "raises" and not self.raises:
            raise ValueError("switch: raises needs raises: (the exception requesting determinism raises)")
        return self


class Dispute(_Model):
    """A source that disagrees with the status the answer follows; kept, never dropped."""

    claim: Text = Field(description="What the disagreeing source says, in one sentence.")
    status: list[Range] = Field(min_length=1, description="The disagreeing status, as ranges.")
    references: list[Reference] = Field(min_length=1)
    resolution: Text = Field(description="Why the answer follows the record's main status instead.")


class Review(_Model):
    """A person's reading of a flagged run (KB015): the run file stays as written, and this says
    why it does not change the record, so the warning stops repeating what was already read."""

    run: Annotated[str, StringConstraints(pattern=r"^data/(?:runs/[^/]+/[^/]+\.yaml|sweeps/[^/]+/[^/]+\.json)$")] = Field(
        description="The flagged run file, relative to the project root (data/runs/<env-id>/<stamp>.yaml), or a "
        "sweep file (data/sweeps/<env-id>/<stamp>-<suite>.json) whose finding this record disagrees with (KB021)."
    )
    note: Text = Field(description="Why the contradiction does not change the record (cite what does).")
    cases: list[Annotated[int, Field(ge=0)]] = Field(
        default_factory=list,
        description="For a sweep file: the indices of its cases (cases[N]) that no record covers only because the "
        "file states the call wrongly (say how in `note`, and which later file states it right); KB021 then "
        "stops flagging them as an undocumented source.",
    )


class Verify(_Model):
    """How a record is re-checked empirically (verifiers/, `kb verify`): a registered
    verifier's name, or why no machine can check it (shown by `kb verify --coverage`)."""

    verifier: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+(?:\.[a-z0-9_]+)+$")] | None = Field(
        None, description="Name registered with @verifier in verifiers/ (lint KB014)."
    )
    unverifiable: Text | None = Field(
        None, description="Why no verifier exists, e.g. 'needs two GPUs', 'needs a cuDNN older than 8'."
    )
    reviewed: list[Review] = Field(
        default_factory=list,
        description="Flagged runs a person has read, each with why it does not change the record (KB015).",
    )
    alerts: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(
        default_factory=list,
        description="Signals in the released wheels that belong to this source (`kb verify --static`): a PyTorch "
        "alert caller (index_reduce_cuda), the op a TensorFlow refusal names (CropAndResizeBackpropImage), or a "
        "raising Python check's function. Lint compares the ranges with the releases that hold them (KB017).",
    )
    conditional_alerts: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(
        default_factory=list,
        description="Signals that belong to this source but raise only under a condition the ranges do not "
        "follow (an old cuDNN, the raw op rather than the Python API): claimed (KB018), not compared (KB017).",
    )
    bypasses: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(
        default_factory=list,
        description="Python functions that check the switch and take a deterministic path before the native "
        "alert is reached (torch.nn.functional.interpolate): where the release has one, the public op does not "
        "raise even though the alert is still in the library (KB017).",
    )

    @model_validator(mode="after")
    def _one(self) -> Verify:
        if (self.verifier is None) == (self.unverifiable is None):
            raise ValueError("verify holds either verifier: or unverifiable:, exactly one")
        return self


class Withdrawn(_Model):
    date: _dt.date
    reason: Text


class OpVersions(_Model):
    """Releases in which some of a record's ops are this source at all: where an op changed what it
    runs (since TensorFlow 2.16 `tf.keras` is Keras 3, whose layers no longer reach TensorFlow's
    bias_add, fused batch norm or global seed), the record stops applying to that op, while its
    other ops keep every range."""

    ops: list[OpName] = Field(min_length=1, description="The record's ops this limit is about.")
    versions: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="PEP 440 specifier set of the releases in which these ops are this source, e.g. '<2.16'."
    )
    note: Text = Field(description="Why the ops stop (or start) being this source there, for the answer's notes.")

    @model_validator(mode="after")
    def _valid(self) -> OpVersions:
        if len(set(self.ops)) != len(self.ops):
            raise ValueError("op_versions: an op is listed twice")
        return self


SCAN_RESOLVERS = (
    "boolean-mask-count", "coalesced-input", "constant-initializers", "seeded-initializers", "draw-builds-only", "constant-summed", "counts-of-ones", "dataset-draws-no-random", "dense-input", "exact-all-reduce", "fake-implementation",
    "fit-reads-tf-data", "fit-runs-no-workers", "in-pallas-kernel", "input-is-a-placeholder", "jit-holds-no-gemm", "jit-never-runs", "mapped-function-draws-no-random",
    "module-never-called",
    "not-quantized", "one-value-written",
    "module-seeded", "one-index-per-row", "reused-variables", "seed-argument-is-int", "seed-set-by-this-call", "unique-indices",
    "unique-position-lookup", "windows-do-not-overlap", "written-before-read", "single-operand", "constant-filter",
    "window-sums", "weights-not-differentiated",
)
"""The code rules a record's `scan.resolvers` may name (`kb scan`): each is a small function of
kb/scan/resolvers.py, registered under this name with a docstring saying what in the code rules the
record out (tests/test_scan_rules.py checks that the two lists are the same; lint KB023 checks names)."""

ScanValue = CallValue | list[CallValue]


class ScanRuledOut(_Model):
    """A literal argument value that rules the record out, where `calls:` cannot say so ("any value
    but this one"): `output_size: 1` is global pooling, `num_workers: 0` has no workers."""

    parameter: CallKey
    values: list[ScanValue] = Field(min_length=1, description="Values (a list is a tuple argument: [1, 1]).")
    why: Text = Field(description="Why the value rules the record out, as the scan's documentation says it.")
    ops: list[OpName] = Field(default_factory=list, description="The record's ops this rule is about; empty = all.")


class ScanOnlyIf(_Model):
    """A value that leaves the record possible rather than certain: with `shuffle: [null, false]` a
    loader's workers matter only for random augmentation in the dataset, which the code does not show."""

    parameter: CallKey
    values: list[ScanValue] = Field(min_length=1)
    depends_on: Text = Field(description="What the finding then depends on (printed after 'depending on').")
    unless: list[CallKey] = Field(
        default_factory=list, description="Parameters any one of which, given, keeps the finding certain (sampler)."
    )
    ops: list[OpName] = Field(default_factory=list)


class ScanUnknownShape(_Model):
    """A condition on a shape the code rarely states (`input.ndim` of a loss): when the call does not
    show it, the call is listed at `level` with `why` (a note is never a finding; `possible` names the
    condition); a call that shows an input of at least `at_least` dimensions is a finding."""

    fact: Literal["input.ndim"]
    at_least: int = Field(ge=1)
    why: Text
    level: Literal["note", "possible"] = "note"


class ScanRules(_Model):
    """How `kb scan` reads calls of the record's ops beyond `calls:` (docs/scan.md): what a literal
    argument rules out, what leaves it possible, words the call must mention, shapes it cannot see,
    conditions that are in the data, and the code rules (kb/scan/resolvers.py) that rule it out."""

    ruled_out: list[ScanRuledOut] = Field(default_factory=list)
    only_if: list[ScanOnlyIf] = Field(default_factory=list)
    needs_word: list[Annotated[str, StringConstraints(min_length=2, max_length=40)]] = Field(
        default_factory=list,
        description="Words a call must mention (in its text or arguments) for the record to apply (sparse).",
    )
    unknown_shape: ScanUnknownShape | None = None
    data_note: Text | None = Field(
        None, description="The condition is in the data (repeated indices): every call is listed as a note with this reason."
    )
    resolvers: list[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*$")]] = Field(
        default_factory=list, description="Names of code rules (schema.SCAN_RESOLVERS) that can rule the record out."
    )
    unique_index: CallKey | None = Field(
        None, description="The parameter holding the indices whose repeats the record needs (for unique-indices)."
    )

    @model_validator(mode="after")
    def _valid(self) -> ScanRules:
        if len(set(self.resolvers)) != len(self.resolvers):
            raise ValueError("scan.resolvers lists a name twice")
        return self


class SourceRecord(_Model):
    """One mechanism that makes results differ from run to run."""

    id: RecordId = Field(description="Stable unique id; equals the file name without .yaml.")
    framework: Framework
    title: Title
    ops: list[OpName] = Field(min_length=1, description="Public names a lookup matches.")
    aliases: list[OpName] = Field(
        default_factory=list, description="Old or renamed names that also match (tf.image.resize_bilinear)."
    )
    device: Device
    pass_: Pass = Field(alias="pass")
    mechanism: Mechanism
    summary: Text
    conditions: list[Text] = Field(
        default_factory=list,
        description="When the source applies, in words, for what no call can decide (duplicate indices, "
        "overlapping windows, data layout...); what a call decides goes under `calls:`.",
    )
    calls: list[CallPattern] = Field(
        default_factory=list,
        description="Which calls the record applies to (docs/calls.md); empty = every call of every op.",
    )
    status: list[Range] = Field(
        min_length=1, description="Non-overlapping ranges; a version in no range is unknown."
    )
    op_versions: list[OpVersions] = Field(
        default_factory=list,
        description="Ops that are this source only in some releases (tf.keras.* ops of Keras 2 before 2.16); "
        "outside them the record does not apply to those ops; every other op keeps every range.",
    )
    distributions: dict[Literal["ngc"], list[Range]] = Field(
        default_factory=dict, description="Other builds with their own version line (NGC containers)."
    )
    caused_by: list[RecordId] = Field(
        default_factory=list,
        description="Library records (cudnn, cublas, nccl, horovod) whose mechanism causes this source "
        "(KB013); a lookup of this record shows them and their references.",
    )
    disputes: list[Dispute] = Field(default_factory=list)
    references: list[Reference] = Field(description="Where the facts come from; at least one (KB008).")
    notes: Text | None = None
    scan: ScanRules | None = Field(
        None, description="How `kb scan` reads calls of the record's ops beyond `calls:` (docs/scan.md); lint KB023."
    )
    verify: Verify | None = None
    withdrawn: Withdrawn | None = None

    @model_validator(mode="after")
    def _op_versions_name_ops(self) -> SourceRecord:
        named = set(self.ops) | set(self.aliases)
        for item in self.op_versions:
            stray = [op for op in item.ops if op not in named]
            if stray:
                raise ValueError(f"op_versions names {stray[0]}, which is not among the record's ops or aliases")
        return self


# --- solutions ----------------------------------------------------------------------


class Solution(_Model):
    """A switch, call or practice that removes one or more sources."""

    code: SolutionCode
    title: Title
    frameworks: list[Framework] = Field(min_length=1)
    kind: Literal["env", "call", "patch", "config", "practice", "none"]
    how: Text = Field(description="What to set or do, precisely.")
    snippet: str | None = None
    phase: int = Field(
        ge=0,
        le=99,
        description="Order a user applies codes in: 10 before launch (env), 20 before import, "
        "30 after import, 40 in model code, 50 in the training loop.",
    )
    preference: int = Field(
        ge=0, le=99, description="Tie-break between equally small recipes: lower is preferred."
    )
    implies: list[SolutionCode] = Field(
        default_factory=list,
        description="Codes this one includes (TDP sets TF_CUDNN_DETERMINISTIC, so it implies TCD).",
    )
    references: list[Reference] = Field(default_factory=list)
    notes: Text | None = None


# --- links --------------------------------------------------------------------------


class Link(_Model):
    """A GitHub issue, pull request or commit, recorded once and referenced by records."""

    repo: Repo
    kind: Literal["issue", "pr", "commit"]
    number: int | None = Field(None, gt=0)
    sha: Sha | None = None
    title: Title
    opened: _dt.date | None = None
    state: Literal["open", "closed", "merged"] | None = None
    merged: _dt.date | None = None
    version: VersionStr | None = Field(None, description="First framework release that contains it.")
    checked: Text | None = Field(None, description="Where each fact was confirmed.")
    notes: Text | None = None

    @model_validator(mode="after")
    def _identity(self) -> Link:
        if self.kind == "commit":
            if self.sha is None or self.number is not None:
                raise ValueError("a commit has a 'sha' and no 'number'")
        elif self.number is None or self.sha is not None:
            raise ValueError(f"an {self.kind} has a 'number' and no 'sha'")
        if self.merged is not None and self.kind == "issue":
            raise ValueError("an issue cannot have a merge date")
        return self

    @property
    def key(self) -> str:
        return f"{self.repo}#{self.number}" if self.number is not None else f"{self.repo}@{self.sha}"


# --- version registries -------------------------------------------------------------


class Requirement(_Model):
    """What a release's own package metadata requires of another package, as read from a wheel."""

    requires: Annotated[str, StringConstraints(min_length=1, max_length=100)] = Field(
        description="The PEP 440 specifier set of the Requires-Dist line, e.g. '>=3.12.0'."
    )
    read_from: Text = Field(
        description="The wheel file whose METADATA was read (Requires-Dist), e.g. "
        "'tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl'."
    )


class Release(_Model):
    version: VersionStr
    date: _dt.date | None = None
    based_on: list[VersionStr] = Field(
        default_factory=list, description="For distributions: the framework versions inside."
    )
    keras: Requirement | None = Field(
        None,
        description="TensorFlow only: the release's `keras` requirement, read from its wheel's METADATA; a "
        "requirement of Keras 3 means `tf.keras` is Keras 3 there (tf.keras.* queries answer from Keras records). "
        "Left out: not read (unknown).",
    )


class VersionRegistry(_Model):
    """Every release of one framework or distribution; lint rejects ranges naming others."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$")]
    framework: Framework
    source: Text = Field(description="Where the releases and dates come from.")
    releases: list[Release] = Field(min_length=1)


# --- what is known without a record (data/basis/) -----------------------------------------------

class KernelClass(_Model):
    """A class of kernels that are deterministic by construction, read in the framework's code: an
    elementwise kernel computes each output element from the same-index input elements, with no
    reduction, no atomics and no random state, so its result cannot depend on scheduling. An op listed
    here with no record answers `deterministic=True`, basis `static`, citing `read`."""

    id: RecordId
    title: Text
    what: Text = Field(description="Why a kernel of this class is deterministic, as read in the code.")
    versions: str | None = Field(None, description="PEP 440 releases the class covers; left out: every release.")
    device: Device = "any"
    read: list[CodeRead] = Field(min_length=1, description="The code read: the kernel class, at the releases named.")
    listed_from: Text = Field(description="Where the list of ops comes from (the framework's own catalog, and how).")
    ops: list[OpName] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> KernelClass:
        if len(set(self.ops)) != len(self.ops):
            raise ValueError("ops lists an op twice")
        return self


class KernelClasses(_Model):
    """data/basis/elementwise-<framework>.yaml: written by scripts/elementwise.py from the installed framework."""

    framework: Framework
    release: VersionStr = Field(description="The installed release whose catalog listed the ops.")
    generated_by: Text
    classes: list[KernelClass] = Field(min_length=1)


class Guarantee(_Model):
    """A framework's own documented guarantee under its determinism switch, e.g. TensorFlow's
    enable_op_determinism: every op runs deterministically or raises. It answers an op with no record
    for the releases it covers: by default nothing is known, under the switch it is documented."""

    framework: Framework
    code: SolutionCode = Field(description="The solution code of the switch (data/solutions.yaml).")
    versions: str = Field(description="PEP 440 releases whose documentation gives the guarantee.")
    device: Device = "any"
    claim: Text = Field(description="What the framework documents, in one sentence.")
    raises: Text | None = Field(None, description="What an op without a deterministic kernel raises under the switch.")
    references: list[Reference] = Field(min_length=1)
