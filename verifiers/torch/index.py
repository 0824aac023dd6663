"""Indexing ops: which duplicate write wins, atomics behind index/put/repeat backward, ties in
kthvalue/median, sparse-dense bmm, and memory read before it is written."""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup

ROWS = 64


def _winner_inputs(ctx, n=4_000_000):
    """Distinct float32 values (a permutation of 0..n-1, exact below 2^24) and indices into 64
    targets: each target is written about n/64 times with a different value each time, so a
    different winning write changes the result."""
    torch, device, gen = setup(ctx)
    n = ctx.size(n, 10_000)
    values = torch.randperm(n, generator=gen).float().to(device)
    index = torch.randint(0, ROWS, (n,), generator=gen).to(device)
    return torch, device, gen, values, index


def _sum_inputs(ctx, n=4_000_000, minimum=10_000):
    """Mixed-magnitude float32 values and indices into 64 targets (many colliding adds)."""
    torch, device, gen = setup(ctx)
    n = ctx.size(n, minimum)
    values = mixed(torch, gen, (n,), device)
    index = torch.randint(0, ROWS, (n,), generator=gen).to(device)
    return torch, device, gen, values, index


@verifier("torch.index_copy", framework="pytorch", device="any", solutions=("PT_DET",))
def index_copy(ctx):
    """4M distinct values copied into 64 slots with index_copy_: every slot has ~62k duplicate
    writers, and which copy lands last is unspecified (on CUDA, PT_DET routes to index_put_
    without accumulate, which sorts the indices)."""
    torch, device, _, values, index = _winner_inputs(ctx)
    return lambda: torch.zeros(ROWS, device=device).index_copy_(0, index, values)


INDEX_PUT_CASES = (
    {"op": "torch.Tensor.index_put_", "call": {"accumulate": False}},
    {"op": "torch.Tensor.index_put", "call": {"accumulate": False}},
    {"op": "torch.index_put", "call": {"accumulate": False}},
    {"op": "torch.Tensor.index_put_", "call": {"accumulate": True}},  # complementary (on CUDA: a sorted kernel)
)


def _index_put(torch, op, target, index, values, accumulate):
    if op == "torch.index_put":
        return torch.index_put(target, (index,), values, accumulate=accumulate)
    if op == "torch.Tensor.index_put":
        return target.index_put((index,), values, accumulate=accumulate)
    return target.index_put_((index,), values, accumulate=accumulate)


@verifier("torch.index_put_no_accumulate", framework="pytorch", device="any", solutions=("PT_DET",),
          cases=INDEX_PUT_CASES)
def index_put_no_accumulate(ctx):
    """index_put of 4M distinct values into 64 slots, one form and accumulate value per case:
    without accumulate, ~62k duplicate writes per slot with different values, so a different
    winning write shows; with accumulate the values are added (on CUDA through a sort)."""
    torch, device, _, values, index = _winner_inputs(ctx)
    op, accumulate = ctx.op or "torch.Tensor.index_put_", ctx.call.get("accumulate", False)
    return lambda: _index_put(torch, op, torch.zeros(ROWS, device=device), index, values, accumulate)


def _put(torch, op, target, index, values, accumulate):
    if op == "torch.put":
        return torch.put(target, index, values, accumulate=accumulate)
    if op == "torch.Tensor.put":
        return target.put(index, values, accumulate=accumulate)
    return target.put_(index, values, accumulate=accumulate)


PUT_CASES = (
    {"op": "torch.Tensor.put_", "call": {"accumulate": False}},
    {"op": "torch.Tensor.put", "call": {"accumulate": False}},
    {"op": "torch.put", "call": {"accumulate": False}},
)


@verifier("torch.put_no_accumulate", framework="pytorch", device="any", solutions=("PT_DET",), cases=PUT_CASES)
def put_no_accumulate(ctx):
    """put(accumulate=False) of 4M distinct values into a 64-element tensor, one form per case:
    ~62k duplicate writes per element, which one wins is unspecified. PT_DET is documented to
    raise."""
    torch, device, _, values, index = _winner_inputs(ctx)
    op = ctx.op or "torch.Tensor.put_"
    return lambda: _put(torch, op, torch.zeros(ROWS, device=device), index, values, False)


SCATTER_CASES = (
    {"op": "torch.Tensor.scatter_", "call": {"src": "float", "reduce": None}},
    {"op": "torch.Tensor.scatter", "call": {"src": "float"}},
    {"op": "torch.scatter", "call": {"src": "float"}},
    {"op": "torch.Tensor.scatter_", "call": {"src": None, "reduce": None}},  # complementary: a scalar value
)


@verifier("torch.scatter_src_tensor", framework="pytorch", solutions=("PT_DET",), cases=SCATTER_CASES)
def scatter_src_tensor(ctx):
    """scatter with a tensor src: 4M distinct values scattered into 64 slots, ~62k duplicate
    writes per slot; the CUDA kernel lets them race (PT_DET goes through a sorted index_put_).
    With a scalar `value` every duplicate writes the same number, so no race can show."""
    torch, device, _, values, index = _winner_inputs(ctx)
    op = ctx.op or "torch.Tensor.scatter_"
    if ctx.call.get("src", "float") is None:
        return lambda: torch.zeros(ROWS, device=device).scatter_(0, index, 7.0)
    if op == "torch.scatter":
        return lambda: torch.scatter(torch.zeros(ROWS, device=device), 0, index, values)
    if op == "torch.Tensor.scatter":
        return lambda: torch.zeros(ROWS, device=device).scatter(0, index, values)
    return lambda: torch.zeros(ROWS, device=device).scatter_(0, index, values)


PUT_ACC_CASES = (
    {"op": "torch.Tensor.put_", "call": {"accumulate": True}},
    {"op": "torch.Tensor.put", "call": {"accumulate": True}},
    {"op": "torch.put", "call": {"accumulate": True}},
)


@verifier("torch.put_accumulate_cuda", framework="pytorch", solutions=("PT_DET",), cases=PUT_ACC_CASES)
def put_accumulate_cuda(ctx):
    """put(accumulate=True) on CUDA adds 4M mixed-magnitude float32 values into 64 elements with
    atomicAdd, so the rounding follows the arrival order; one form per case. PT_DET is
    documented to raise."""
    torch, device, _, values, index = _sum_inputs(ctx)
    op = ctx.op or "torch.Tensor.put_"
    return lambda: _put(torch, op, torch.zeros(ROWS, device=device), index, values, True)


PROD_CASES = (
    {"op": "torch.Tensor.scatter_reduce_", "call": {"reduce": "prod"}},
    {"op": "torch.Tensor.scatter_reduce", "call": {"reduce": "prod"}},
    {"op": "torch.scatter_reduce", "call": {"reduce": "prod"}},
    {"op": "torch.Tensor.scatter_reduce_", "call": {"reduce": "amax"}},  # complementary
)


@verifier("torch.scatter_reduce_prod", framework="pytorch", solutions=("PT_DET",), cases=PROD_CASES)
def scatter_reduce_prod(ctx):
    """scatter_reduce(prod) of 1M factors 1 + 0.01*randn into 4096 slots (starting from ones, so
    the products stay finite): float32 products round differently in another order, and the CUDA
    kernel multiplies atomically (a compare-and-swap loop) in arrival order. PT_DET is documented
    to raise. 4M factors into 64 slots took 2.6 s a call on the H100: the CAS loops of 62k
    colliding writers per slot serialise, so this one uses fewer writers per slot."""
    torch, device, gen = setup(ctx)
    n, slots = ctx.size(1_000_000, 10_000), 4096
    factors = (1.0 + 0.01 * torch.randn(n, generator=gen)).to(device)
    index = torch.randint(0, slots, (n,), generator=gen).to(device)
    op, reduce = ctx.op or "torch.Tensor.scatter_reduce_", ctx.call.get("reduce", "prod")
    if op == "torch.scatter_reduce":
        return lambda: torch.scatter_reduce(torch.ones(slots, device=device), 0, index, factors, reduce)
    if op == "torch.Tensor.scatter_reduce":
        return lambda: torch.ones(slots, device=device).scatter_reduce(0, index, factors, reduce)
    return lambda: torch.ones(slots, device=device).scatter_reduce_(0, index, factors, reduce)


@verifier("torch.index_select_backward", framework="pytorch", solutions=("PT_DET",))
def index_select_backward(ctx):
    """Gradient of index_select: 4M selections of a 64-element source, with a random
    mixed-magnitude upstream gradient, are added back into the source with index_add_
    (atomicAdd on CUDA; PT_DET uses a sorted index_put_)."""
    torch, device, gen, up, index = _sum_inputs(ctx)
    src = mixed(torch, gen, (ROWS,), device).requires_grad_()
    return lambda: grads((src.index_select(0, index) * up).sum(), src)


@verifier("torch.repeat_interleave_backward", framework="pytorch", solutions=("PT_DET",))
def repeat_interleave_backward(ctx):
    """Gradient of repeat_interleave with a tensor of repeats (about 62k copies of each of 64
    elements; the tensor form lowers to index_select, whose backward is index_add_ with
    atomicAdd on CUDA), under a random mixed-magnitude upstream gradient. An int `repeats`
    would take the expand path, whose backward is a plain sum."""
    torch, device, gen = setup(ctx)
    per = ctx.size(62_500, 150)
    repeats = torch.randint(per // 2, per * 3 // 2, (ROWS,), generator=gen)
    total = int(repeats.sum())
    repeats = repeats.to(device)
    src = mixed(torch, gen, (ROWS,), device).requires_grad_()
    up = mixed(torch, gen, (total,), device)

    def run():
        y = src.repeat_interleave(repeats, output_size=total)
        return grads((y * up).sum(), src)

    return run


def _ties(ctx):
    """4096 rows of 2048 values drawn from {0, 1, 2, 3}: the middle value of each row occurs
    about 500 times, spread over every warp of the block that handles the row."""
    torch, device, gen = setup(ctx)
    rows = ctx.size(4096, 16)
    return torch, torch.randint(0, 4, (rows, 2048), generator=gen).float().to(device)


def _scatter_arg(ctx, reduce: str):
    """Tensor.scatter_ with `reduce=` and a tensor src, one form per case. 'multiply': 1M factors
    1 + 0.01*randn into 4096 slots starting from ones (as torch.scatter_reduce_prod), so the
    products stay finite and round by order; 'add': 4M
    mixed-magnitude values into 64 slots. A case with `value` (a scalar) instead of src is the
    complementary form: every duplicate applies the same number."""
    torch, device, gen = setup(ctx)
    reduce = ctx.call.get("reduce", reduce)
    if reduce == "multiply":
        n, slots = ctx.size(1_000_000, 10_000), 4096
        src = (1.0 + 0.01 * torch.randn(n, generator=gen)).to(device)
        start = torch.ones
    else:
        n, slots = ctx.size(4_000_000, 10_000), ROWS
        src = mixed(torch, gen, (n,), device)
        start = torch.zeros
    index = torch.randint(0, slots, (n,), generator=gen).to(device)
    if "value" in ctx.call:
        return lambda: start(slots, device=device).scatter_(0, index, 1.01, reduce=reduce)
    if reduce is None:
        return lambda: start(slots, device=device).scatter_(0, index, src)
    return lambda: start(slots, device=device).scatter_(0, index, src, reduce=reduce)


SCATTER_MULTIPLY_CASES = (
    {"op": "torch.Tensor.scatter_", "call": {"reduce": "multiply", "src": "float"}},
    {"op": "torch.Tensor.scatter_", "call": {"reduce": "multiply", "src": None, "value": 1.01}},  # complementary
    {"op": "torch.Tensor.scatter_", "call": {"reduce": "add", "src": "float"}},  # complementary: torch.scatter-reduce-add-arg
)
SCATTER_ADD_CASES = (
    {"op": "torch.Tensor.scatter_", "call": {"reduce": "add", "src": "float"}},
    {"op": "torch.Tensor.scatter_", "call": {"reduce": None, "src": "float"}},  # complementary: torch.scatter-src-tensor
    {"op": "torch.Tensor.scatter_", "call": {"reduce": "multiply", "src": "float"}},  # complementary
)


@verifier("torch.scatter_reduce_multiply_arg", framework="pytorch", solutions=("PT_DET",), cases=SCATTER_MULTIPLY_CASES)
def scatter_reduce_multiply_arg(ctx):
    """scatter(..., reduce='multiply') with a tensor src: the CUDA kernel multiplies atomically in
    arrival order (scatter_reduce_cuda_kernel, which alerts); the switch has no deterministic
    path for it (scatter_impl sends only sum/mean to index_put)."""
    return _scatter_arg(ctx, "multiply")


@verifier("torch.scatter_reduce_add_arg", framework="pytorch", solutions=("PT_DET",), cases=SCATTER_ADD_CASES)
def scatter_reduce_add_arg(ctx):
    """scatter(..., reduce='add') with a tensor src: atomicAdd by default; under the switch
    scatter_impl takes the deterministic index_put(accumulate=True) path."""
    return _scatter_arg(ctx, "add")


@verifier("torch.kthvalue", framework="pytorch", solutions=("PT_DET",))
def kthvalue(ctx):
    """kthvalue(1024) along rows with ~500 ties of the k-th value per row: the index returned
    among equal values is what the old CUDA kernel raced on (PR 165762 takes the smallest)."""
    torch, x = _ties(ctx)

    def run():
        values, indices = torch.kthvalue(x, x.shape[1] // 2, dim=1)
        return {"values": values, "indices": indices}

    return run


MEDIAN_CASES = (
    {"op": "torch.median", "call": {"dim": 1}},
    {"op": "torch.Tensor.median", "call": {"dim": 1}},
    {"op": "torch.nanmedian", "call": {"dim": 1}},
    {"op": "torch.Tensor.nanmedian", "call": {"dim": 1}},
    # complementary: the plain form (no dim) returns only the value
    {"op": "torch.median", "call": {"dim": None}},
    {"op": "torch.nanmedian", "call": {"dim": None}},
)


@verifier("torch.median_indices", framework="pytorch", solutions=("PT_DET",), cases=MEDIAN_CASES)
def median_indices(ctx):
    """median(dim=1) with ~500 ties of the median per row: every thread that finds the median
    writes its index, so which of the equal values' indices is returned is unspecified.
    PT_DET is documented to raise. One form per case: median / nanmedian, function or method,
    with dim (values and indices) or without (the value of the whole tensor only)."""
    torch, x = _ties(ctx)
    op = ctx.op or "torch.median"
    name = op.rsplit(".", 1)[-1]
    fn = getattr(torch.Tensor if ".Tensor." in op else torch, name)
    if ctx.call.get("dim", 1) is None:
        return lambda: {"values": fn(x)}

    def run():
        values, indices = fn(x, dim=1)
        return {"values": values, "indices": indices}

    return run


SPARSE_BMM_CASES = (
    {"op": "torch.bmm", "call": {"input.layout": "sparse_coo", "input.ndim": 3}},
    {"op": "torch.bmm", "call": {"input.layout": "strided", "input.ndim": 3}},  # complementary: dense
)


@verifier("torch.sparse_bmm", framework="pytorch", solutions=("PT_DET",), cases=SPARSE_BMM_CASES)
def sparse_bmm(ctx):
    """bmm of a sparse COO (4, 64, 32768) with ~8k mixed-magnitude nonzeros per row by a dense
    (4, 32768, 64): cuSPARSE's COO SpMM ALG1 adds each nonzero's products into the output with
    atomics; PT_DET selects the deterministic ALG2."""
    torch, device, gen = setup(ctx)
    batch, rows, inner, cols = 4, ROWS, ctx.size(32_768, 256), 64
    nnz = batch * rows * inner // 4
    idx = torch.stack([
        torch.randint(0, batch, (nnz,), generator=gen),
        torch.randint(0, rows, (nnz,), generator=gen),
        torch.randint(0, inner, (nnz,), generator=gen),
    ])
    vals = mixed(torch, gen, (nnz,), "cpu")
    a = torch.sparse_coo_tensor(idx, vals, (batch, rows, inner)).coalesce().to(device)
    b = torch.randn(batch, inner, cols, generator=gen).to(device)
    if ctx.call.get("input.layout", "sparse_coo") == "strided":
        a = a.to_dense()  # the same numbers, dense: cuBLAS batched GEMM
    return lambda: torch.bmm(a, b)


@verifier("torch.uninitialized_memory", framework="pytorch", device="any", solutions=("PT_DET",))
def uninitialized_memory(ctx):
    """Reads memory from torch.empty, empty_like and resize_ right after a same-sized tensor of
    fresh random data was freed: the allocator hands the freed block back, so each call returns
    whatever the previous allocation left there (a different draw every call, as other data
    would be in a real program). PT_DET fills such memory with NaN."""
    torch, device, _ = setup(ctx)
    n = 1 << 14  # 64 KiB: reused from the CUDA caching allocator's small pool / glibc's heap
    churn_gen = torch.Generator(device=device).manual_seed(ctx.seed)
    like = torch.zeros(n, device=device)

    def read(make):
        churn = torch.rand(n, generator=churn_gen, device=device)
        del churn
        return make().clone()

    def run():
        return {
            "empty": read(lambda: torch.empty(n, device=device)),
            "empty_like": read(lambda: torch.empty_like(like)),
            "resize_": read(lambda: torch.empty(0, device=device).resize_(n)),
        }

    return run
