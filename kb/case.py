"""One case: an op called one way. The one type every verifier case and every sweep unit is.

Why one type: a verifier's `cases=`, the TensorFlow sweep's special cases, the JAX sweep's
hand-built units and the PyTorch sweep's branch units all say the same thing (this op, called
with these parameters and facts, in this pass, with inputs built so), and four shapes of it
meant four places to look and nothing that checked them. Each is now a `Case`; the workers and
the verifier harness read only `Case`, and lint KB024 (kb/lint/cases.py) checks every case's op
and call keys against the KB's inventories and signatures.

`build` is the one field whose arguments differ by where the case runs, because the framework
objects a case needs differ: a verifier case has none (the verifier function builds the call
from `ctx.case`), a TensorFlow special is `build(tf, seed) -> () -> result`, a JAX or PyTorch
branch unit's inputs are made when the case is made and `build()` returns what runs (called
with `*leaves, *args` for JAX, whose arrays must be arguments of the jitted function; with
nothing for PyTorch), and a PyTorch catalog unit's `build()` runs the whole catalog entry.

Standard library only: the TensorFlow worker, the GPU machine's workers (no pydantic) and the
verifier child import it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

PASSES = ("forward", "backward", "both")
"""forward: the output; backward: a gradient (the case differentiates itself); both: the output,
then the gradient of the `leaves` where the output is differentiable."""

WIRE = ("op", "call")
"""The fields a verifier case is written with (`cases=` literals, the plan sent to the child)."""


@dataclass(frozen=True)
class Case:
    """An op called one way. Equality and repr leave out the built objects (callables, tensors)."""

    op: str | None  # the public op the call is spelled with (None: a verifier's whole claim, no one call)
    call: Mapping[str, Any] = field(default_factory=dict)  # parameters and call facts (docs/calls.md)
    passes: str = "both"  # PASSES
    build: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    branch: str | None = None  # the branch id of the inventory (data/branches/), for a branch unit
    variant: str | None = None  # the unit's own name for this way of calling the op
    leaves: tuple[Any, ...] = field(default=(), compare=False, repr=False)  # inputs the backward differentiates
    args: tuple[Any, ...] = field(default=(), compare=False, repr=False)  # other inputs passed to what runs
    numel: int | None = None  # elements of the first input
    seeded: bool = False  # random by design: run under each seed mode (TensorFlow)
    source: Any = field(default=None, compare=False, repr=False)  # the catalog entry it comes from (op_db)

    def __post_init__(self) -> None:
        if self.op is not None and (not isinstance(self.op, str) or not self.op):
            raise ValueError(f"a case's op is a non-empty string or None, not {self.op!r}")
        if not isinstance(self.call, Mapping) or not all(isinstance(k, str) for k in self.call):
            raise ValueError(f"{self.op}: a case's call is a mapping of names to values, not {self.call!r}")
        if self.passes not in PASSES:
            raise ValueError(f"{self.op}: passes is one of {', '.join(PASSES)}, not {self.passes!r}")

    @property
    def forward(self) -> bool:
        return self.passes in ("forward", "both")

    def to_dict(self) -> dict[str, Any]:
        """The case as a verifier case is written: `{"op", "call"}` (JSON to the child, caches)."""
        return {"op": self.op, "call": None if self.op is None and not self.call else dict(self.call)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "a case") -> Case:
        """A verifier case `{"op": name, "call": {...}}` (or `{"op": None, "call": None}`, the
        record's claim); ValueError naming `where` for anything else."""
        if isinstance(data, Case):
            return data
        if not isinstance(data, Mapping) or set(data) != set(WIRE):
            raise ValueError(f"{where}: a case is {{'op': name, 'call': {{...}}}}, got {data!r}")
        call = data["call"]
        if data["op"] is None and call is None:
            return cls(None)
        if not isinstance(call, Mapping):
            raise ValueError(f"{where}: a case's call is a dict of parameters and call facts, got {call!r}")
        return cls(data["op"], dict(call))


WHOLE = Case(None)
"""The one case of a verifier that lists none: the record's claim, no particular call."""


def as_cases(items: Any, where: str) -> tuple[Case, ...]:
    """Cases from a `cases=` value (Case objects or `{"op", "call"}` dicts); ValueError naming
    `where` for a value that is not a list of them. None or empty: the one WHOLE case."""
    if items is None or items == () or items == []:
        return (WHOLE,)
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"{where}: cases= is a tuple of {{'op', 'call'}} literals, got {type(items).__name__}")
    return tuple(Case.from_dict(item, f"{where}, case {i}") for i, item in enumerate(items))
