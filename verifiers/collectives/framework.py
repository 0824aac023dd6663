"""One rank of a framework launch: DDP, FSDP2 and a mixture-of-experts step, in one process group.

Each case trains (or runs) a small model for a few steps from the same seeds and fingerprints
what the collectives fed: the parameters after the steps and the reduced gradients of the last
step (DDP, FSDP2; the runs of 2026-11-27 fingerprinted the parameters only), or the combined
expert output (MoE). Inputs are per virtual rank (verifiers/collectives/table.py VIRTUAL), so 2 and 4
ranks see the same global batch; their magnitudes differ by virtual rank (x 10**j), so the order
in which ranks' gradients are added shows in the bits. Local maths stays fixed
(CUBLAS_WORKSPACE_CONFIG is set by the launcher): what can change between settings is what
NCCL does.
"""

from __future__ import annotations

import time

from verifiers.collectives import bits
from verifiers.collectives.table import STEPS, VIRTUAL

WIDTH, HIDDEN, BATCH = 1024, 2048, 64
SMALL = 8
"""On CPU (the gloo dry run) every size is divided by this: the same code, in seconds."""


def _mlp(torch, device, small: bool):
    torch.manual_seed(0)
    width, hidden = (WIDTH // SMALL, HIDDEN // SMALL) if small else (WIDTH, HIDDEN)
    return torch.nn.Sequential(
        torch.nn.Linear(width, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, width),
    ).to(device)


def _batch(torch, rank: int, world: int, step: int, device, width: int, rows: int = BATCH):
    """This rank's share of the global batch of `step`: one block per virtual rank, scaled by 10**j."""
    share = VIRTUAL // world
    xs, ys = [], []
    for j in range(rank * share, (rank + 1) * share):
        gen = torch.Generator().manual_seed(7919 * (step + 1) + j)
        xs.append(torch.randn(rows, width, generator=gen) * 10.0 ** j)
        ys.append(torch.randn(rows, width, generator=gen))
    return torch.cat(xs).to(device), torch.cat(ys).to(device)


def _params_print(torch, params, offsets=None) -> tuple[int, int]:
    parts, offset = [], 0
    for p in params:
        parts.append(bits.fingerprint(torch, p, offset))
        offset += p.numel()
    return bits.combine(parts)


def ddp(dist, torch, device, call: dict, small: bool) -> dict:
    from torch.nn.parallel import DistributedDataParallel

    rank, world = dist.get_rank(), dist.get_world_size()
    model = _mlp(torch, device, small)
    ids = [device.index] if device.type == "cuda" else None
    wrapped = DistributedDataParallel(model, device_ids=ids, bucket_cap_mb=call["bucket_cap_mb"],
                                      gradient_as_bucket_view=call["gradient_as_bucket_view"],
                                      static_graph=call["static_graph"])
    opt = torch.optim.SGD(wrapped.parameters(), lr=1e-4)
    for step in range(STEPS):
        x, y = _batch(torch, rank, world, step, device, model[0].in_features)
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(wrapped(x), y)
        loss.backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    # The reduced gradients of the last step as well as the parameters: a small learning rate rounds
    # last-bit gradient differences away from the parameters.
    return {"print": bits.text(_params_print(torch, [p.detach() for p in model.parameters()] + grads)), "whole": True}


def fsdp2(dist, torch, device, call: dict, small: bool) -> dict:
    from torch.distributed.fsdp import fully_shard

    rank, world = dist.get_rank(), dist.get_world_size()
    model = _mlp(torch, device, small)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, reshard_after_forward=call["reshard_after_forward"])
    fully_shard(model, reshard_after_forward=call["reshard_after_forward"])
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    for step in range(STEPS):
        x, y = _batch(torch, rank, world, step, device, model[0].in_features)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        grads = [p.grad.full_tensor().detach() for p in model.parameters()]
        opt.step()
    full = [p.full_tensor().detach() for p in model.parameters()] + grads
    return {"print": bits.text(_params_print(torch, full)), "whole": True}


EXPERTS, TOKENS, DIM, TOP = 8, 2048, 256, 4


def moe(dist, torch, device, call: dict, small: bool) -> dict:
    """Top-4 routing over 8 experts spread over the ranks: tokens go to their experts' ranks with
    all_to_all_single, come back the same way, and are combined with index_add_ (four
    contributions per token row, so the order of the additions shows)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = EXPERTS // world
    tokens, dim = (TOKENS // SMALL, DIM // SMALL) if small else (TOKENS, DIM)
    gen = torch.Generator().manual_seed(4242)
    gate = torch.randn(dim, EXPERTS, generator=gen).to(device)
    w1 = torch.randn(EXPERTS, dim, 2 * dim, generator=gen).to(device) / dim ** 0.5
    w2 = torch.randn(EXPERTS, 2 * dim, dim, generator=gen).to(device) / dim ** 0.5
    x, _ = _batch(torch, rank, world, 0, device, width=dim, rows=tokens)
    weights, experts = torch.softmax(x @ gate, dim=-1).topk(TOP, dim=-1)
    token = torch.arange(x.shape[0], device=device).repeat_interleave(TOP)
    expert, weight = experts.reshape(-1), weights.reshape(-1)
    order = torch.sort(expert, stable=True).indices
    token, expert, weight = token[order], expert[order], weight[order]
    dest = expert // per_rank
    send_counts = torch.bincount(dest, minlength=world)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    send, recv = send_counts.tolist(), recv_counts.tolist()
    tokens_in = torch.empty(sum(recv), dim, device=device)
    dist.all_to_all_single(tokens_in, x[token].contiguous(), recv, send)
    expert_in = torch.empty(sum(recv), dtype=expert.dtype, device=device)
    dist.all_to_all_single(expert_in, expert.contiguous(), recv, send)
    out = torch.empty_like(tokens_in)
    for e in range(rank * per_rank, (rank + 1) * per_rank):
        rows = (expert_in == e).nonzero().squeeze(1)
        if rows.numel():
            out[rows] = torch.relu(tokens_in[rows] @ w1[e]) @ w2[e]
    back = torch.empty(len(token), dim, device=device)
    dist.all_to_all_single(back, out, send, recv)
    combined = torch.zeros_like(x).index_add_(0, token, back * weight[:, None])
    offset = rank * x.numel()
    return {"print": combined, "offset": offset}


CASES = {"ddp": ddp, "fsdp2": fsdp2, "moe": moe}


def main(rank: int, world: int, ports: list[int], backend: str, cases: list, folder: str, reps: int) -> None:
    from verifiers.collectives.ranks import groups

    def body(dist, torch, device, write) -> None:
        for case in cases:
            kind = case["name"].split("-")[0]
            for mode in (("default", "PT_DET") if kind == "moe" else ("default",)):
                cid = case["name"] if mode == "default" else f"{case['name']}:{mode}"
                try:
                    begin = time.perf_counter()
                    if mode == "PT_DET":
                        torch.use_deterministic_algorithms(True)
                    try:
                        got = CASES[kind](dist, torch, device, case["call"], bool(case.get("small")))
                    finally:
                        torch.use_deterministic_algorithms(False)
                    if device.type == "cuda":
                        torch.cuda.synchronize()
                    seconds = time.perf_counter() - begin
                    if kind == "moe":
                        got = {"print": bits.text(bits.fingerprint(torch, got["print"], got["offset"])), "whole": False}
                    write({"case": cid, "rank": rank, "prints": [got["print"]], "whole": got["whole"],
                           "times": [round(seconds, 5)]})
                except Exception as exc:
                    write({"case": cid, "rank": rank, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:600]})

    groups(rank, world, ports, backend, folder, body)
