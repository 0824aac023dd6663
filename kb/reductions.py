"""PyTorch's losses still take `size_average=` and `reduce=` (deprecated since 0.4.1): when either is given, it
decides the reduction, whatever `reduction=` says. Read in the torch 2.11.0 wheel: `torch/nn/_reduction.py`,
`legacy_get_string` (reduce False gives 'none'; else size_average False gives 'sum'; else 'mean'), called by
`_Loss.__init__` in `torch/nn/modules/loss.py` and by the functional losses in `torch/nn/functional.py` when
`size_average is not None or reduce is not None`. A call that spells the old arguments is answered as the reduction
they select (`nn.CrossEntropyLoss(reduce=False)` reduces nothing), so a record conditioned on `reduction` reads it.
"""

from __future__ import annotations

_LEGACY = ("size_average", "reduce", "reduction")


def legacy_reduction(framework: str | None, call: dict[str, object], names: tuple[str, ...]) -> dict[str, object]:
    """`call` with `reduction` set from `size_average` / `reduce` where the op (whose parameters are `names`) takes
    all three and the call gives either old argument as a bool; the call unchanged otherwise."""
    if framework != "pytorch" or not all(name in names for name in _LEGACY):
        return call
    size_average, reduce = call.get("size_average"), call.get("reduce")
    if (size_average is None and reduce is None) or any(v is not None and type(v) is not bool for v in (size_average, reduce)):
        return call
    averaged = True if size_average is None else size_average
    reduced = True if reduce is None else reduce
    return {**call, "reduction": "mean" if averaged and reduced else "sum" if reduced else "none"}
