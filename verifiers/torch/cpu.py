"""CPU records: accumulation into the same elements from several threads of the intra-op pool.

PyTorch's CPU index_put_(accumulate=True) and put_(accumulate=True) kernels split a float32
input of at least GRAIN_SIZE (32768) elements into one contiguous chunk per thread, and the
threads add into the target with a compare-and-swap atomic add: the order of the adds into one
element, and so the rounding, follows how the chunks overlap in time. Deterministic mode makes
the kernels serial. Inputs: 4M mixed-magnitude values into 64 elements. On a 2-core machine 1M
values (about 8 ms) showed a difference only now and then; 4M (about 20 ms) in every batch of
five tried.
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import grads, mixed, setup

ROWS = 64


def _inputs(ctx):
    torch, _, gen = setup(ctx)
    n = ctx.size(4_000_000, 1 << 17)
    values = mixed(torch, gen, (n,), "cpu")
    index = torch.randint(0, ROWS, (n,), generator=gen)
    return torch, gen, values, index


INDEX_PUT_CPU_CASES = (
    {"op": "torch.Tensor.index_put_", "call": {"accumulate": True}},
    {"op": "torch.Tensor.index_put", "call": {"accumulate": True}},
    {"op": "torch.index_put", "call": {"accumulate": True}},
)


@verifier("torch.index_put_accumulate_cpu", framework="pytorch", device="cpu", solutions=("PT_DET",),
          cases=INDEX_PUT_CPU_CASES)
def index_put_accumulate_cpu(ctx):
    """index_put(accumulate=True) of 4M mixed-magnitude values into 64 elements on the CPU, one
    form per case."""
    torch, _, values, index = _inputs(ctx)
    op = ctx.op or "torch.Tensor.index_put_"
    if op == "torch.index_put":
        return lambda: torch.index_put(torch.zeros(ROWS), (index,), values, accumulate=True)
    if op == "torch.Tensor.index_put":
        return lambda: torch.zeros(ROWS).index_put((index,), values, accumulate=True)
    return lambda: torch.zeros(ROWS).index_put_((index,), values, accumulate=True)


PUT_CPU_CASES = (
    {"op": "torch.Tensor.put_", "call": {"accumulate": True}},
    {"op": "torch.Tensor.put", "call": {"accumulate": True}},
    {"op": "torch.put", "call": {"accumulate": True}},
)


@verifier("torch.put_accumulate_cpu", framework="pytorch", device="cpu", solutions=("PT_DET",), cases=PUT_CPU_CASES)
def put_accumulate_cpu(ctx):
    """put(accumulate=True) of 4M mixed-magnitude values into 64 elements on the CPU, one form
    per case."""
    torch, _, values, index = _inputs(ctx)
    op = ctx.op or "torch.Tensor.put_"
    if op == "torch.put":
        return lambda: torch.put(torch.zeros(ROWS), index, values, accumulate=True)
    if op == "torch.Tensor.put":
        return lambda: torch.zeros(ROWS).put(index, values, accumulate=True)
    return lambda: torch.zeros(ROWS).put_(index, values, accumulate=True)


@verifier("torch.getitem_backward_cpu", framework="pytorch", device="cpu", solutions=("PT_DET",))
def getitem_backward_cpu(ctx):
    """Gradient of x[rows, cols] (advanced indexing with a list of two index tensors) on an 8x8
    input: 4M selections of 64 elements under a random mixed-magnitude upstream gradient are
    added back with index_put_(accumulate=True), the threaded CPU kernel above."""
    torch, gen, up, index = _inputs(ctx)
    x = mixed(torch, gen, (8, 8), "cpu").requires_grad_()
    rows, cols = index // 8, index % 8
    return lambda: grads((x[rows, cols] * up).sum(), x)
