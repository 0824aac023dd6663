"""One rank of a collectives launch: build inputs, call each collective, fingerprint the output.

Runs in a process forked by verifiers/collectives/launch.py, one per GPU (or per CPU process
with the gloo backend: the same code path, for a dry run). Each case writes one JSON line to
`<dir>/rank<r>.jsonl` as soon as it is done, so a launch that hangs or dies still leaves what
it measured. A collective that NCCL refuses (ncclInvalidUsage: "no algorithm/protocol available",
src/enqueue.cc topoGetAlgoInfo) is recorded with its message; the communicator stays usable (a
blocking communicator gets no asynchronous error, src/group.cc), and the remaining cases of
that collective in this launch are not tried: the refusal depends on the setting, not the size.
"""

from __future__ import annotations

import json
import os
import time

from verifiers.collectives import bits
from verifiers.collectives.table import VIRTUAL


def case_id(collective: str, dtype: str, size: int) -> str:
    return f"{collective}:{dtype}:{size}"


def _virtual(torch, j: int, length: int, dtype, device, salt: int):
    """Virtual rank j's values: normal draws scaled by 10**k, k in 0..4 (mixed magnitudes, so
    that the order of additions shows), the same for every launch and rank count."""
    gen = torch.Generator(device=device)
    gen.manual_seed(1_000_003 * (j + 1) + salt)
    mant = torch.randn(length, generator=gen, device=device, dtype=torch.float32)
    expo = torch.randint(0, 5, (length,), generator=gen, device=device).float()
    return (mant * torch.pow(10.0, expo)).to(dtype)


def local_input(torch, collective: str, size: int, dtype, device, rank: int, world: int):
    """This rank's input: the sum (in `dtype`, in index order) of its share of the virtual ranks."""
    share = VIRTUAL // world
    length = size // world if collective == "all_gather" else size
    salt = (size % 1_000_007) * 7 + {"all_reduce": 1, "reduce_scatter": 2, "all_gather": 3, "reduce": 4, "all_to_all": 5}[collective]
    x = None
    for j in range(rank * share, (rank + 1) * share):
        v = _virtual(torch, j, length, dtype, device, salt)
        x = v if x is None else x + v
    return x


def call(dist, torch, collective: str, x, size: int, world: int):
    """One call of the collective on a fresh output; returns (output, offset of this rank's piece
    in the whole result, or None where this rank's output is not a piece of it)."""
    rank = dist.get_rank()
    if collective == "all_reduce":
        out = x.clone()
        return (lambda: dist.all_reduce(out)), out, 0
    if collective == "reduce":
        out = x.clone()
        return (lambda: dist.reduce(out, dst=0)), out, (0 if rank == 0 else None)
    if collective == "reduce_scatter":
        out = torch.empty(size // world, dtype=x.dtype, device=x.device)
        return (lambda: dist.reduce_scatter_tensor(out, x)), out, rank * (size // world)
    if collective == "all_gather":
        out = torch.empty(size, dtype=x.dtype, device=x.device)
        return (lambda: dist.all_gather_into_tensor(out, x)), out, 0
    if collective == "all_to_all":
        out = torch.empty_like(x)
        return (lambda: dist.all_to_all_single(out, x)), out, rank * size
    raise ValueError(collective)


def run_case(dist, torch, collective: str, dtype_name: str, size: int, device, reps: int) -> dict:
    rank, world = dist.get_rank(), dist.get_world_size()
    dtype = getattr(torch, dtype_name)
    x = local_input(torch, collective, size, dtype, device, rank, world)
    cuda = device.type == "cuda"
    prints: list[str | None] = []
    times: list[float] = []
    sample = None
    for rep in range(reps):
        fn, out, offset = call(dist, torch, collective, x, size, world)
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        if offset is None:
            prints.append(None)
            continue
        prints.append(bits.text(bits.fingerprint(torch, out, offset)))
        if rep == 0 and rank == 0:
            sample = bits.sample(torch, out, size // VIRTUAL)
        del out
    return {"case": case_id(collective, dtype_name, size), "rank": rank, "prints": prints,
            "times": [round(t, 7) for t in times[1:]], "sample": sample}


def groups(rank: int, world: int, ports: list[int], backend: str, folder: str, body) -> None:
    """Run `body(dist, torch, device, write)` once per fresh process group (one per port): each group
    is a new NCCL communicator, so NCCL detects the topology, tunes and sets up its channels again.
    Every line written carries its group."""
    import datetime

    import torch
    import torch.distributed as dist

    log = open(os.path.join(folder, f"rank{rank}.jsonl"), "a", encoding="utf-8")
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        device = torch.device("cpu")
    for group, port in enumerate(ports):
        def write(entry: dict) -> None:
            log.write(json.dumps({"group": group, **entry}) + "\n")
            log.flush()

        started = time.perf_counter()
        dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=120))
        nccl = ".".join(map(str, torch.cuda.nccl.version())) if backend == "nccl" else None
        write({"event": "init", "rank": rank, "nccl": nccl, "torch": torch.__version__,
               "init_s": round(time.perf_counter() - started, 3)})
        body(dist, torch, device, write)
        write({"event": "done", "rank": rank})
        dist.destroy_process_group()
    log.close()


def main(rank: int, world: int, ports: list[int], backend: str, cases: list, folder: str, reps: int) -> None:
    """A forked rank: its environment is already set by the launcher."""
    refused: dict[str, str] = {}  # kept across groups: a refused collective is not asked again

    def body(dist, torch, device, write) -> None:
        for collective, dtype_name, size in cases:
            cid = case_id(collective, dtype_name, size)
            if collective in refused:
                write({"case": cid, "rank": rank, "skipped": f"not tried: {collective} failed earlier in this launch"})
                continue
            try:
                write(run_case(dist, torch, collective, dtype_name, size, device, reps))
            except Exception as exc:  # the collective's own refusal: recorded, the launch goes on
                message = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:600]
                refused[collective] = message
                write({"case": cid, "rank": rank, "error": message})

    groups(rank, world, ports, backend, folder, body)
