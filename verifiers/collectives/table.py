"""What the collectives sweep runs: collectives, dtypes, sizes, NCCL settings, framework cases.

Plain literals only (the planner and the tests read them without importing torch). The sizes
straddle NCCL 2.28's choices: its cost model (src/graph/tuning.cc, ncclTopoTuneModel) gives
each (algorithm, protocol) a latency and a bandwidth, and src/enqueue.cc topoGetAlgoInfo picks
the cheapest for the message size, then drops channels while `nBytes < nc * nt * threadThreshold`;
so LL wins the small messages, LL128 the middle ones and Simple the large ones, and the channel
count grows with the size. 1K to 64M elements cross each of those steps.
"""

from __future__ import annotations

from typing import TypedDict


class FrameworkCase(TypedDict):
    """One framework case of the launch: its name, the op called and the call's facts."""

    name: str
    op: str
    call: dict[str, object]


COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "reduce", "all_to_all")
REDUCING = ("all_reduce", "reduce_scatter", "reduce")
"""Collectives that add values (their order can change the bits); the others only copy."""

DTYPES = ("float32", "bfloat16")
SIZES = (1_024, 65_536, 1_048_576, 16_777_216, 67_108_864)
"""Elements of the whole logical message (per rank for all_reduce, reduce and all_to_all; the
gathered output of all_gather; the input of reduce_scatter)."""

VIRTUAL = 4
"""Every run reduces the same four vectors (virtual ranks 0-3): with 4 ranks each holds one, with
2 ranks each first adds two of them locally. So 2 and 4 ranks reduce the same numbers, as data
parallelism over the same global batch does, and their results can be compared bit for bit."""

NCCL_NAMES = {
    "all_reduce": "nccl.ncclAllReduce", "reduce_scatter": "nccl.ncclReduceScatter",
    "all_gather": "nccl.ncclAllGather", "reduce": "nccl.ncclReduce", "all_to_all": "nccl.ncclSend",
}
"""The NCCL call behind each torch.distributed call (all_to_all_single is grouped ncclSend/ncclRecv)."""

TORCH_NAMES = {
    "all_reduce": "torch.distributed.all_reduce", "reduce_scatter": "torch.distributed.reduce_scatter_tensor",
    "all_gather": "torch.distributed.all_gather_into_tensor", "reduce": "torch.distributed.reduce",
    "all_to_all": "torch.distributed.all_to_all_single",
}

Setting = tuple[str, int, dict[str, str], tuple[str, ...]]
"""(name, ranks, environment, solution codes)."""

# (name, ranks, environment, solution codes). NCCL_NVLS_ENABLE=0 stays set in every launch (the
# machines' owner forbids NVLink multicast); with it NCCL never creates a multicast object
# (src/transport/nvls.cc ncclNvlsInit returns before), so NVLS and NVLSTree have nothing to run on.
SETTINGS: tuple[Setting, ...] = (
    ("default", 4, {}, ()),
    ("Ring", 4, {"NCCL_ALGO": "Ring"}, ()),
    ("Tree", 4, {"NCCL_ALGO": "Tree"}, ()),
    ("CollNetDirect", 4, {"NCCL_ALGO": "CollNetDirect"}, ()),
    ("CollNetChain", 4, {"NCCL_ALGO": "CollNetChain"}, ()),
    ("NVLS", 4, {"NCCL_ALGO": "NVLS"}, ()),
    ("NVLSTree", 4, {"NCCL_ALGO": "NVLSTree"}, ()),
    ("PAT", 4, {"NCCL_ALGO": "PAT"}, ()),
    ("LL", 4, {"NCCL_PROTO": "LL"}, ()),
    ("LL128", 4, {"NCCL_PROTO": "LL128"}, ()),
    ("Simple", 4, {"NCCL_PROTO": "Simple"}, ()),
    ("Ring/Simple", 4, {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}, ("NCCL_PIN",)),
    ("Tree/Simple", 4, {"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}, ()),
    ("channels=1", 4, {"NCCL_MIN_NCHANNELS": "1", "NCCL_MAX_NCHANNELS": "1"}, ()),
    ("channels=4", 4, {"NCCL_MIN_NCHANNELS": "4", "NCCL_MAX_NCHANNELS": "4"}, ()),
    ("CTAs=2", 4, {"NCCL_MIN_CTAS": "2", "NCCL_MAX_CTAS": "2"}, ()),
    ("Ring/Simple/channels=4", 4, {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple", "NCCL_MIN_NCHANNELS": "4",
                                   "NCCL_MAX_NCHANNELS": "4"}, ("NCCL_PIN",)),
    ("2 ranks: default", 2, {}, ()),
    ("2 ranks: Ring/Simple", 2, {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}, ("NCCL_PIN",)),
    ("2 ranks: Tree", 2, {"NCCL_ALGO": "Tree"}, ()),
)

NCCL_VARIABLES = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
                  "NCCL_MAX_CTAS", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE")
"""Removed from the inherited environment before a launch sets its own (NCCL_NVLS_ENABLE is kept)."""

SAFETY = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
"""Set in every launch where the machine has not set them already: multicast stays off."""

# Framework cases, all in one launch (one process group), in this order. DDP calls are real calls
# (their parameters are the call facts); FSDP2 is fully_shard per layer and on the root; the
# mixture-of-experts step routes tokens with all_to_all_single and combines the experts' outputs
# with index_add_ (4 contributions per token: the order of the additions matters).
FRAMEWORK_CASES: tuple[FrameworkCase, ...] = (
    {"name": "ddp", "op": "torch.nn.parallel.DistributedDataParallel",
     "call": {"bucket_cap_mb": 25, "gradient_as_bucket_view": False, "static_graph": False}},
    {"name": "ddp-bucket1", "op": "torch.nn.parallel.DistributedDataParallel",
     "call": {"bucket_cap_mb": 1, "gradient_as_bucket_view": False, "static_graph": False}},
    {"name": "ddp-bucket100", "op": "torch.nn.parallel.DistributedDataParallel",
     "call": {"bucket_cap_mb": 100, "gradient_as_bucket_view": False, "static_graph": False}},
    {"name": "ddp-view", "op": "torch.nn.parallel.DistributedDataParallel",
     "call": {"bucket_cap_mb": 25, "gradient_as_bucket_view": True, "static_graph": False}},
    {"name": "ddp-static", "op": "torch.nn.parallel.DistributedDataParallel",
     "call": {"bucket_cap_mb": 25, "gradient_as_bucket_view": False, "static_graph": True}},
    {"name": "fsdp2", "op": "torch.distributed.fsdp.fully_shard", "call": {"reshard_after_forward": True}},
    {"name": "fsdp2-keep", "op": "torch.distributed.fsdp.fully_shard", "call": {"reshard_after_forward": False}},
    {"name": "moe", "op": "torch.Tensor.index_add_", "call": {"input.dtype": "float32"}},
)
FRAMEWORK_SETTINGS: tuple[Setting, ...] = (
    ("default", 4, {}, ()),
    ("Ring/Simple", 4, {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}, ("NCCL_PIN",)),
    ("Tree", 4, {"NCCL_ALGO": "Tree"}, ()),
    ("2 ranks: default", 2, {}, ()),
)
STEPS = 3

JAX_OPS = ("psum", "psum_scatter", "all_to_all")
JAX_SIZES = (65_536, 4_194_304)
"""Elements per device."""
JAX_SETTINGS: tuple[tuple[str, dict[str, str], tuple[str, ...]], ...] = (
    ("default", {}, ()),
    ("XLA_DET", {"XLA_FLAGS": "--xla_gpu_deterministic_ops=true"}, ("XLA_DET",)),
    ("NCCL_ALGO=Tree", {"NCCL_ALGO": "Tree"}, ()),
)

REPS = 4
"""Calls per case in one process group; the first also sets up NCCL's connections and is not timed."""
GROUPS = 3
"""Fresh process groups (new NCCL communicators: topology detection, tuning and channel set-up
again) one after another in each launch of torch ranks."""
LAUNCHES = {("collectives", "default"): 2, ("framework", "default"): 2,
            ("jax", "default"): 3, ("jax", "XLA_DET"): 2}
"""Launches (fresh processes) per job where more than one; every other job gets one launch
(of GROUPS fresh process groups; a JAX launch is one process, its own fresh start)."""
