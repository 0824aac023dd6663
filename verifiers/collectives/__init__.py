"""Collectives on several GPUs: NCCL calls, DDP, FSDP2, a mixture-of-experts step and JAX collectives.

Run as one command, one process per GPU: `python -m verifiers.collectives` (see __main__.py). The
registered names below are what records name (lint KB014) and what `kb verify` plans: each needs
`gpus` GPUs, so `kb verify` starts the sweep where the machine has them and says "skipped: needs N
GPUs" elsewhere (kb/verify/multigpu.py); the single-process harness never runs them.

- table.py: collectives, dtypes, sizes, NCCL settings, framework and JAX cases (literals);
- launch.py: forked ranks with a clean environment per setting, JAX processes, deadlines;
- ranks.py, framework.py, jaxcase.py: what one rank (or the JAX process) runs;
- bits.py: position-weighted fingerprints of large tensors, computed on the device;
- aggregate.py, results.py: per setting, repeats (`distinct`) apart from agreement with the defaults.
"""

from verifiers import verifier

GPUS = 4


def _launch_elsewhere(ctx):
    raise RuntimeError("needs several GPUs, one process each: run `python -m verifiers.collectives`")


@verifier("nccl.collectives", framework="nccl", device="gpu", gpus=4, solutions=("NCCL_PIN",))
def collectives(ctx):
    """all_reduce, reduce_scatter, all_gather, reduce and all_to_all through NCCL, every setting."""
    return _launch_elsewhere(ctx)


@verifier("torch.collectives", framework="pytorch", device="gpu", gpus=4, solutions=("NCCL_PIN",))
def torch_collectives(ctx):
    """torch.distributed all_reduce, reduce_scatter_tensor, all_gather_into_tensor, reduce and
    all_to_all_single: the same launches as nccl.collectives, keyed by torch's version."""
    return _launch_elsewhere(ctx)


@verifier("torch.ddp_collectives", framework="pytorch", device="gpu", gpus=4, solutions=("NCCL_PIN",))
def ddp(ctx):
    """DistributedDataParallel after three steps (bucket sizes, gradient_as_bucket_view, static_graph)."""
    return _launch_elsewhere(ctx)


@verifier("torch.fsdp2_collectives", framework="pytorch", device="gpu", gpus=4, solutions=("NCCL_PIN",))
def fsdp2(ctx):
    """fully_shard (FSDP2) after three steps."""
    return _launch_elsewhere(ctx)


@verifier("torch.moe_collectives", framework="pytorch", device="gpu", gpus=4, solutions=("PT_DET",))
def moe(ctx):
    """A mixture-of-experts step: all_to_all_single routing, index_add_ combine."""
    return _launch_elsewhere(ctx)


@verifier("jax.collectives", framework="jax", device="gpu", gpus=4, solutions=("XLA_DET",))
def jax_collectives(ctx):
    """psum, psum_scatter and all_to_all under shard_map over every device."""
    return _launch_elsewhere(ctx)
