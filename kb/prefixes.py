"""Each framework's op-name prefixes: the naming rule that lint (KB011) enforces and the compiled
index carries for `kb.status`, kept below both so neither reaches into the other."""

from __future__ import annotations

PREFIXES: dict[str, tuple[str, ...]] = {
    "tensorflow": ("tf.", "tfa."),
    "pytorch": ("torch.",),
    "jax": ("jax.",),
    "horovod": ("hvd.", "horovod."),
    # Libraries: their C API names under the library's prefix (cudnn.cudnnConvolutionBackwardFilter).
    "cudnn": ("cudnn.",),
    "cublas": ("cublas.",),
    "nccl": ("nccl.",),
    "vllm": ("vllm.",),
    "sglang": ("sglang.",),
    # Python packages under their import name (flash_attn.flash_attn_func).
    "flash-attn": ("flash_attn.", "flash_attn_interface."),
    "transformer-engine": ("transformer_engine.",),
    "megatron-core": ("megatron.",),
    "cccl": ("cub.", "thrust."),
    "deepspeed": ("deepspeed.",),
    "keras": ("keras.",),
    "torchvision": ("torchvision.",),
    "mamba-ssm": ("mamba_ssm.",),
    "causal-conv1d": ("causal_conv1d.",),
    "python": ("random.", "os.", "python."),
    "numpy": ("np.", "numpy."),
}
