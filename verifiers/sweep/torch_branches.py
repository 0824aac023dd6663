"""PyTorch branch units: one CUDA dispatch branch of a public op per case, with inputs BUILT TO COLLIDE.

Why: op_db's samples take one or two of an op's kernels, with inputs that rarely make two
addends meet (docs/sweep.md, "Branches"). Each unit here calls one public op the way real code
reaches another kernel (an argument value, a layout, a dtype, a rank, a memory format, cuDNN or
the native kernel), and builds inputs so that an accumulating kernel puts 8 or more addends on
one target: outputs larger than inputs for adaptive pooling and interpolation, sampling grids
that converge on a few cells, indices drawn from a handful of slots, sparse COO tensors with
duplicate (uncoalesced) indices, isolated peaks that are the maximum of every window that holds
them, ties and exact zeros where a backward selects or divides.

A unit is a function (torch, device, dtype, scale) -> [Spec]. `scale` shrinks sizes for a CPU
smoke run; every Spec names its branch (the id in data/branches/pytorch-2.11.yaml), the call
facts of every tensor argument (`<param>.dtype`, `.layout`, `.device`, `.ndim`,
`.memory_format`; docs/calls.md) and how its inputs collide (`inputs.collide`, and
`inputs.addends`: the most addends that meet at one target). verifiers/sweep/torch_worker.py
runs them (`--branches`), forward and backward, by default and under the switch.
"""

from __future__ import annotations

from collections.abc import Callable

from verifiers.sweep.branch_inputs import B, Spec, facts
from verifiers.sweep.torch_branches_index import (counting, embedding_bag, index_family, scans, scatter_family,
                                                  segment_reduce, selection)
from verifiers.sweep.torch_branches_nn import attention, convs, losses, norms, sparse
from verifiers.sweep.torch_branches_more import DTYPES as MORE_DTYPES
from verifiers.sweep.torch_branches_more import UNITS as MORE
from verifiers.sweep.torch_branches_pool import (adaptive_pool, affine_grid, avg_pool, fractional_max_pool, grid_sample,
                                                 interpolate, lp_pool, max_pool, max_unpool, pad, unfold_fold)

F16, BF16, F32, F64 = "float16", "bfloat16", "float32", "float64"
FLOATS = (F32, F16, BF16, F64)


def planted(torch, dev, dt, scale):
    """A planted op with three branches (harness proofs on the CPU, tests/test_sweep_branches.py):
    `mode='atomic'` adds its values into `slots` targets in an order that changes every call, and
    ignores the switch; `mode='alert'` does the same but raises under the switch, as PyTorch's alerts
    do; `mode='sorted'` adds in a fixed order. With one addend per target (`slots` = n) no order
    shows, which is why the inputs must collide."""
    counter = [0]

    def op(values, index, slots, mode):
        counter[0] += 1
        if mode == "alert" and torch.are_deterministic_algorithms_enabled():
            raise RuntimeError("planted_scatter does not have a deterministic implementation, but you set "
                               "'torch.use_deterministic_algorithms(True)'")
        if mode == "sorted":
            order = torch.arange(values.numel())
        else:
            order = torch.randperm(values.numel(), generator=torch.Generator().manual_seed(counter[0]))
        out = [0.0] * slots
        v, i = values.detach().double().tolist(), index.tolist()
        for k in order.tolist():  # float32 rounding after each addition, like an atomicAdd
            out[i[k]] = float(torch.tensor(out[i[k]] + v[k], dtype=torch.float32))
        return torch.tensor(out, dtype=values.dtype)

    b = B(torch, "cpu", torch.float32, 1.0)
    out = []
    n = 256
    for mode in ("atomic", "alert", "sorted"):
        for slots, tag in ((8, "collide"), (n, "unique")):
            vals = b.mixed(n, grad=False)
            idx = torch.arange(n) % slots if slots == n else b.index(n, slots)
            out.append(Spec("planted.scatter", f"planted.scatter|mode={mode}|{tag}",
                            lambda vals=vals, idx=idx, slots=slots, mode=mode: op(vals, idx, slots, mode), [],
                            facts(torch, {"input": vals, "index": idx}, f"{n} values into {slots} slots", n // slots, mode=mode), n))
    return out


UNITS: dict[str, Callable] = {
    **{f"adaptive_max_pool{d}d": adaptive_pool("max", d) for d in (1, 2, 3)},
    **{f"adaptive_avg_pool{d}d": adaptive_pool("avg", d) for d in (1, 2, 3)},
    **{f"max_pool{d}d": max_pool(d) for d in (1, 2, 3)},
    **{f"avg_pool{d}d": avg_pool(d) for d in (1, 2, 3)},
    **{f"lp_pool{d}d": lp_pool(d) for d in (1, 2, 3)},
    **{f"fractional_max_pool{d}d": fractional_max_pool(d) for d in (2, 3)},
    **{f"max_unpool{d}d": max_unpool(d) for d in (1, 2, 3)},
    "interpolate": interpolate, "grid_sample": grid_sample, "affine_grid": affine_grid, "pad": pad,
    "unfold_fold": unfold_fold, "index": index_family, "scatter": scatter_family, "embedding_bag": embedding_bag,
    "counting": counting, "selection": selection, "scans": scans, "segment_reduce": segment_reduce, "losses": losses,
    "norms": norms, "convs": convs, "attention": attention, "sparse": sparse, **MORE,
}
"""Branch units of the CUDA sweep, most likely to differ first (the driver hands them out in this order)."""

DTYPES: dict[str, tuple[str, ...]] = {
    "selection": (F32, F16, BF16, F64), "counting": (F32, F64, F16), "sparse": (F32, F64, F16, BF16),
    "attention": (F16, BF16, F32), "norms": (F32, F16, BF16, F64), "convs": (F32, F16, BF16, F64), **MORE_DTYPES,
}
"""Dtypes per unit; the others take FLOATS. A dtype the op refuses on the device is `skipped`."""

PLANTED_UNITS = {"planted_scatter": planted}
