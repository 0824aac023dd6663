"""Scatter/index accumulation ops: CUDA atomics into few targets."""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup

ROWS = 64


def _inputs(ctx, n=4_000_000):
    torch, device, gen = setup(ctx)
    n = ctx.size(n, 10_000)
    values = mixed(torch, gen, (n,), device)
    index = torch.randint(0, ROWS, (n,), generator=gen).to(device)
    return torch, device, gen, values, index


INDEX_ADD_CASES = (
    {"op": "torch.Tensor.index_add_", "call": {"input.dtype": "float32"}},
    {"op": "torch.Tensor.index_add_", "call": {"input.dtype": "bfloat16"}},
    {"op": "torch.index_add", "call": {"input.dtype": "float32"}},
)


@verifier("torch.index_add", framework="pytorch", solutions=("PT_DET",), cases=INDEX_ADD_CASES)
def index_add(ctx):
    """4M mixed-magnitude values added into 64 rows, in the case's dtype (float32 or bfloat16)."""
    torch, device, _, values, index = _inputs(ctx)
    dtype = getattr(torch, ctx.call.get("input.dtype", "float32"))
    values = values.to(dtype)
    if ctx.op == "torch.index_add":
        return lambda: torch.index_add(torch.zeros(ROWS, device=device, dtype=dtype), 0, index, values)
    return lambda: torch.zeros(ROWS, device=device, dtype=dtype).index_add_(0, index, values)


@verifier("torch.scatter_add", framework="pytorch", solutions=("PT_DET",))
def scatter_add(ctx):
    torch, device, _, values, index = _inputs(ctx)
    return lambda: torch.zeros(ROWS, device=device).scatter_add_(0, index, values)


_SR = "torch.Tensor.scatter_reduce_"
SCATTER_REDUCE_CASES = (
    {"op": _SR, "call": {"reduce": "sum", "include_self": True}},
    {"op": _SR, "call": {"reduce": "mean", "include_self": True}},
    {"op": "torch.scatter_reduce", "call": {"reduce": "sum", "include_self": True}},
    {"op": "torch.Tensor.scatter_reduce", "call": {"reduce": "mean", "include_self": False}},
    # complementary: amax and amin pick one value (no rounding); prod is its own record
    {"op": _SR, "call": {"reduce": "amax", "include_self": True}},
    {"op": _SR, "call": {"reduce": "amin", "include_self": True}},
)


@verifier("torch.scatter_reduce_sum", framework="pytorch", solutions=("PT_DET",), cases=SCATTER_REDUCE_CASES)
def scatter_reduce_sum(ctx):
    """scatter_reduce of 4M mixed-magnitude values into 64 slots, one reduce per case: sum and
    mean add with atomicAdd (the order shows in the rounding); amax and amin keep one of the
    values, whichever order they arrive in."""
    torch, device, _, values, index = _inputs(ctx)
    reduce, include = ctx.call.get("reduce", "sum"), ctx.call.get("include_self", True)
    op = ctx.op or _SR
    if op == "torch.scatter_reduce":
        return lambda: torch.scatter_reduce(torch.zeros(ROWS, device=device), 0, index, values, reduce,
                                            include_self=include)
    if op == "torch.Tensor.scatter_reduce":
        return lambda: torch.zeros(ROWS, device=device).scatter_reduce(0, index, values, reduce, include_self=include)
    return lambda: torch.zeros(ROWS, device=device).scatter_reduce_(0, index, values, reduce, include_self=include)


@verifier("torch.index_put_accumulate", framework="pytorch", solutions=("PT_DET",))
def index_put_accumulate(ctx):
    torch, device, _, values, index = _inputs(ctx)
    return lambda: torch.zeros(ROWS, device=device).index_put_((index,), values, accumulate=True)


BINCOUNT_CASES = (
    {"op": "torch.bincount", "call": {"weights": "float"}},
    {"op": "torch.Tensor.bincount", "call": {"weights": "float"}},
    {"op": "torch.bincount", "call": {"weights": "int"}},
    {"op": "torch.bincount", "call": {"weights": None}},  # complementary from 2.1: integer counts
)


@verifier("torch.bincount_weights", framework="pytorch", solutions=("PT_DET",), cases=BINCOUNT_CASES)
def bincount_weights(ctx):
    """bincount of 4M indices into 64 bins, one weights kind per case: float weights of mixed
    magnitude are added with atomicAdd (the order shows in the rounding); integer weights are
    added as doubles, exact at these sums, so they cannot differ although the switch raises
    for any weights; without weights the counts are integers."""
    torch, device, gen, values, index = _inputs(ctx)
    kind = ctx.call.get("weights", "float")
    weights = {"float": values, "int": torch.randint(-1000, 1000, values.shape, generator=gen).to(device),
               None: None}[kind]
    if ctx.op == "torch.Tensor.bincount":
        return lambda: index.bincount(weights=weights, minlength=ROWS)
    return lambda: torch.bincount(index, weights=weights, minlength=ROWS)


HISTC_CASES = (
    {"op": "torch.histc", "call": {"input.dtype": "float"}},
    {"op": "torch.Tensor.histc", "call": {"input.dtype": "float"}},
    {"op": "torch.histc", "call": {"input.dtype": "int"}},  # complementary where the alert is for floats only
)


@verifier("torch.histc", framework="pytorch", solutions=("PT_DET",), cases=HISTC_CASES)
def histc(ctx):
    """Two bins of 20M values each. histc counts in the input's type: each block counts its
    share exactly in shared memory, then adds that integer-valued partial into the output with
    atomicAdd (SummaryOps.cu). Sums of integers are exact, so the order cannot show until a
    float32 bin passes 2^24 = 16.8M, where float32 spacing becomes 2 and rounding depends on
    the order of the block partials; an integer input counts in integers, exact in any order.
    4M values in 64 bins (the H200 run) showed nothing."""
    torch, device, gen = setup(ctx)
    n = ctx.size(40_000_000, 10_000)
    if ctx.call.get("input.dtype") == "int":
        values = torch.randint(0, 2, (n,), generator=gen, dtype=torch.int64).to(device)
    else:
        values = torch.rand(n, generator=gen).to(device)
    if ctx.op == "torch.Tensor.histc":
        return lambda: values.histc(bins=2, min=0, max=1)
    return lambda: torch.histc(values, bins=2, min=0, max=1)


@verifier("torch.gather_backward", framework="pytorch", solutions=("PT_DET",))
def gather_backward(ctx):
    """Gradient of gather: a scatter-add into the source (test_torch's gather backward test)."""
    torch, device, gen = setup(ctx)
    m = 3000
    src = torch.rand(m, generator=gen).to(device).requires_grad_()
    idx = torch.randint(0, m, (ctx.size(2_000_000, 10_000),), generator=gen).to(device)
    weight = (torch.rand(idx.shape[0], generator=gen) * 1e6).to(device)
    return lambda: grads((src.gather(0, idx) * weight).sum(), src)
