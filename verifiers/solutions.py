"""Solution codes -> what the harness does to apply them, one table per framework.

Three kinds of action:
- `env`: variables set in the fresh child process's environment before it starts (they
  are read at import or first use: TF_DETERMINISTIC_OPS, XLA_FLAGS, CUBLAS_WORKSPACE_CONFIG),
  so one mode never leaks into the next;
- `call`: a function run in the child after the framework is imported, before the
  verifier builds its inputs (enable_op_determinism, use_deterministic_algorithms);
- `practice`: the verifier applies it itself (DL1: one data-loader thread); the verifier
  must list it in `handles=`.
An unknown code, or a practice code the verifier does not handle, is an `error` outcome
with a message naming it: never silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable


def _tf_eod() -> None:
    import tensorflow as tf

    tf.config.experimental.enable_op_determinism()


def _tf_cpu1() -> None:
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)


def _tf_seed() -> None:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)


def _keras_seed() -> None:
    import keras

    keras.utils.set_random_seed(0)  # Keras 3's own generator too (tf.keras from TensorFlow 2.16)


def _torch_det() -> None:
    import torch

    torch.use_deterministic_algorithms(True)


def _torch_det_warn() -> None:
    import torch

    torch.use_deterministic_algorithms(True, warn_only=True)


def _torch_cudnn() -> None:
    _torch_cudnn_det()
    _torch_no_bench()


def _torch_fill() -> None:
    import torch

    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True


def _torch_cudnn_det() -> None:
    import torch

    torch.backends.cudnn.deterministic = True


def _torch_no_bench() -> None:
    import torch

    torch.backends.cudnn.benchmark = False


def _torch_seed() -> None:
    import torch

    torch.manual_seed(0)


_CUBLAS = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}

# code -> (env, call or None, practice?)
Action = tuple[dict[str, str], "Callable[[], None] | None", bool]

TABLES: dict[str, dict[str, Action]] = {
    "tensorflow": {
        "TCD": ({"TF_CUDNN_DETERMINISTIC": "1"}, None, False),
        "TDO": ({"TF_DETERMINISTIC_OPS": "1"}, None, False),
        "TDF": ({"TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_USE_FRONTEND": "1"}, None, False),
        "EOD": ({}, _tf_eod, False),
        "CPU1": ({}, _tf_cpu1, False),
        "SEED": ({"PYTHONHASHSEED": "0"}, _tf_seed, False),
        # tf.keras is Keras 3 from TensorFlow 2.16: a recipe for tf.keras layers names Keras's seed.
        "KERAS_SEED": ({"PYTHONHASHSEED": "0"}, _keras_seed, False),
        "DL1": ({}, None, True),
        "NOSHARD": ({}, None, True),
        "PIT1": ({}, None, True),
        "GATE": ({}, None, True),
    },
    "pytorch": {
        # The codes of data/solutions.yaml. use_deterministic_algorithms needs
        # CUBLAS_WORKSPACE_CONFIG for cuBLAS ops (CUDA >= 10.2), so PT_DET sets both.
        "PT_DET": (_CUBLAS, _torch_det, False),
        "PT_DETW": (_CUBLAS, _torch_det_warn, False),
        "PT_CUDNN_DET": ({}, _torch_cudnn_det, False),
        "PT_NOBENCH": ({}, _torch_no_bench, False),
        "PT_CUDNN": ({}, _torch_cudnn, False),
        "PT_CUBLAS": (_CUBLAS, None, False),
        "PT_FILL": (_CUBLAS, _torch_fill, False),
        "PT_DLSEED": ({}, None, True),
        # torch.seed() held to a fixed seed, as kb check's SEED does (verifiers/torch/host.py honours it).
        "SEED": ({}, None, True),
        # Read by torch._inductor.config at import (PyTorch 2.10+).
        "PT_INDUCTOR_DET": ({"TORCHINDUCTOR_DETERMINISTIC": "1"}, None, False),
        # The attention verifiers pick the math backend themselves (verifiers/torch/attention.py).
        "PT_SDPA_MATH": ({}, None, True),
        "CUBLAS_WS": (_CUBLAS, None, False),
        "NCCL_PIN": ({"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}, None, False),
        "NCCL_NO_NVLS": ({"NCCL_NVLS_ENABLE": "0"}, None, False),
    },
    # torchvision's ops run under PyTorch's switch (torchvision/ops/roi_align.py reads
    # torch.are_deterministic_algorithms_enabled()): the same actions as PyTorch's codes.
    "torchvision": {},
    "jax": {
        "XLA_DET": ({"XLA_FLAGS": "--xla_gpu_deterministic_ops=true"}, None, False),
        "XLA_EXCL": ({"XLA_FLAGS": "--xla_gpu_exclude_nondeterministic_ops=true"}, None, False),
        "XLA_AT0": ({"XLA_FLAGS": "--xla_gpu_autotune_level=0"}, None, False),
    },
    "synthetic": {
        "SYN_FIX": ({"SYN_ONE_THREAD": "1"}, None, False),
        "SYN_ENV": ({"SYN_SWITCH": "on"}, None, False),
        "SYN_RAISE": ({}, None, True),
    },
}


TABLES["torchvision"] = {code: TABLES["pytorch"][code] for code in ("PT_DET", "PT_DETW")}


class UnknownCode(Exception):
    pass


def resolve(framework: str, codes: tuple[str, ...], handles: tuple[str, ...]) -> tuple[dict[str, str], list]:
    """(environment to add, calls to run) for `codes`; UnknownCode names what is missing."""
    table = TABLES.get(framework, {})
    env: dict[str, str] = {}
    calls = []
    for code in codes:
        action = table.get(code)
        if action is None:
            raise UnknownCode(
                f"solution code {code!r} has no action for {framework} in verifiers/solutions.py "
                f"(known: {', '.join(sorted(table)) or 'none'})"
            )
        extra, call, practice = action
        if practice and code not in handles:
            raise UnknownCode(f"{code} is a practice the verifier must apply itself, and it does not list it in handles=")
        for key, value in extra.items():
            # Two codes setting XLA_FLAGS combine rather than overwrite each other.
            env[key] = f"{env[key]} {value}" if key == "XLA_FLAGS" and key in env else value
        if call is not None:
            calls.append(call)
    return env, calls
