"""Which fixes a code base already applies, read from the settings `resolve` found.

A fix set anywhere in the code base counts for all of it (the switch is process-wide). The
codes are those of the KB's solutions (PT_DET, EOD, XLA_DET...); tests check each exists.
`torch.backends.cudnn.benchmark` is False unless set, so PT_NOBENCH holds unless the code
sets it True.
"""

from __future__ import annotations

from typing import NamedTuple

from kb.scan.prepare import TF_SET_SEED
from kb.scan.resolve import Setting

TRUE_TEXT = frozenset({"1", "true", "True", "TRUE", "yes"})
CALLS = ("torch.use_deterministic_algorithms", "torch.set_deterministic", "tf.config.experimental.enable_op_determinism",
         "tf.keras.utils.set_random_seed", "keras.utils.set_random_seed",
         "tf.config.threading.set_intra_op_parallelism_threads", "tf.config.threading.set_inter_op_parallelism_threads",
         "keras.config.set_backend",  # no fix: which backend Keras runs on (kb/scan/kerasbackend.py)
         *TF_SET_SEED)
ATTRS = ("torch.backends.cudnn.deterministic", "torch.backends.cudnn.benchmark", "torch._inductor.config.deterministic",
         "torch.utils.deterministic.fill_uninitialized_memory")
WATCHED = frozenset(CALLS + ATTRS)
XLA_FLAGS = {"--xla_gpu_deterministic_ops=true": "XLA_DET", "--xla_gpu_exclude_nondeterministic_ops=true": "XLA_EXCL",
             "--xla_gpu_autotune_level=0": "XLA_AT0"}
# The switches under which an op without a deterministic implementation raises (a range's
# `raises:`), per framework; PT_DETW only warns.
RAISING = {"pytorch": frozenset({"PT_DET", "PT_SETDET", "PT_FILL"}), "tensorflow": frozenset({"EOD", "TDO", "TDF"}),
           "jax": frozenset({"XLA_DET", "XLA_EXCL"})}
DEFAULTS = {"PT_NOBENCH": ("pytorch", "torch.backends.cudnn.benchmark is False unless set (it is not set True here)")}


class Applied(NamedTuple):
    """A fix the code applies, and where (path, line, col, text); path None for a default.
    `condition`: set only under this `if` test, so it is not counted as applied."""

    code: str
    path: str | None
    line: int
    col: int
    text: str
    condition: str | None = None


def _kw(setting: Setting, name: str) -> object:
    return dict(setting.kwargs).get(name)


def codes_of(setting: Setting) -> tuple[str, ...]:
    """The solution codes one setting applies (most settings: none)."""
    name, value = setting.name, setting.value
    if setting.kind == "call":
        on = value if value is not None else _kw(setting, "mode")
        if name == "torch.use_deterministic_algorithms" and on is True:
            return ("PT_DETW",) if _kw(setting, "warn_only") is True else ("PT_DET",)
        if name == "torch.set_deterministic" and on is True:
            return ("PT_SETDET",)
        if name == "tf.config.experimental.enable_op_determinism":
            return ("EOD",)
        if name.endswith("keras.utils.set_random_seed") and value is not None:
            return ("SEED",)
        if name in TF_SET_SEED and (value if value is not None else _kw(setting, "seed")) is not None:
            # TensorFlow's global seed (the graph's, in TF 1 graph mode), set where the run executes it: the
            # ops made after it that take no seed of their own take one derived from it (tf.random.set_seed's
            # documentation); set_seed(None) unsets it.
            return ("SEED",)
        return ()
    if setting.kind == "attr":
        if name == "torch.backends.cudnn.deterministic" and value is True:
            return ("PT_CUDNN_DET",)
        if name == "torch._inductor.config.deterministic" and value is True:
            return ("PT_INDUCTOR_DET",)
        return ()
    text = value if isinstance(value, str) else ""
    if name == "TF_DETERMINISTIC_OPS" and text in TRUE_TEXT:
        return ("TDO",)
    if name == "TF_CUDNN_DETERMINISTIC" and text in TRUE_TEXT:
        return ("TCD",)
    if name == "CUBLAS_WORKSPACE_CONFIG" and text in (":4096:8", ":16:8"):
        return ("PT_CUBLAS", "CUBLAS_WS")
    if name == "XLA_FLAGS":
        return tuple(code for flag, code in XLA_FLAGS.items() if flag in text)
    if name == "HOROVOD_FUSION_THRESHOLD" and text == "0":
        return ("HFT0",)
    if name == "HOROVOD_DISABLE_GROUP_FUSION" and text in TRUE_TEXT:
        return ("HVD_NOGRPFUSE",)
    if name == "TORCHINDUCTOR_DETERMINISTIC" and text in TRUE_TEXT:
        return ("PT_INDUCTOR_DET",)
    if name == "NVTE_ALLOW_NONDETERMINISTIC_ALGO" and text == "0":
        return ("NVTE_DET",)
    if name == "NCCL_NVLS_ENABLE" and text == "0":
        return ("NCCL_NO_NVLS",)
    return ()


def applied(settings: list[tuple[str, Setting]], frameworks: set[str]) -> dict[str, Applied]:
    """Code -> where it is first applied, over (path, setting) pairs of the whole code base;
    defaults only for the frameworks the code calls."""
    found: dict[str, Applied] = {}
    env: dict[str, tuple[str, Setting]] = {}
    benchmark_on = False
    for path, setting in sorted(settings, key=lambda ps: ps[1].condition is not None):  # unconditional first
        for code in codes_of(setting):
            found.setdefault(code, Applied(code, path, setting.line, setting.col, setting.text, setting.condition))
        if setting.kind == "env":
            env.setdefault(setting.name, (path, setting))
        if setting.name == "torch.backends.cudnn.benchmark" and setting.value is not False:
            benchmark_on = True
    if "TDO" in found and env.get("TF_CUDNN_USE_FRONTEND", (None, None))[1] is not None:
        path, setting = env["TF_CUDNN_USE_FRONTEND"]
        if setting.value in TRUE_TEXT:
            found.setdefault("TDF", Applied("TDF", path, setting.line, setting.col, setting.text, setting.condition))
    if "NCCL_ALGO" in env and "NCCL_PROTO" in env:
        path, setting = env["NCCL_ALGO"]
        found.setdefault("NCCL_PIN", Applied("NCCL_PIN", path, setting.line, setting.col, setting.text, setting.condition))
    threads = {("intra" if "intra_op" in s.name else "inter"): (p, s) for p, s in settings
               if s.kind == "call" and s.name.startswith("tf.config.threading.set_") and s.value == 1}
    if "intra" in threads and "inter" in threads:  # CPU1 needs both pools at one thread
        path, setting = threads["intra"]
        found.setdefault("CPU1", Applied("CPU1", path, setting.line, setting.col, setting.text, setting.condition))
    fill_off = any(s.name == "torch.utils.deterministic.fill_uninitialized_memory" and s.value is not True
                   for _, s in settings)
    if "PT_DET" in found and not fill_off:  # fill_uninitialized_memory is True unless set otherwise
        det = found["PT_DET"]
        found.setdefault("PT_FILL", det._replace(code="PT_FILL"))
    if not benchmark_on:
        for code, (framework, why) in DEFAULTS.items():
            if framework in frameworks:
                found.setdefault(code, Applied(code, None, 0, 0, why))
    return found


def closure(codes: set[str], solutions: dict) -> frozenset[str]:
    """The codes plus every code they imply (PT_DET implies PT_DETW and PT_CUDNN_DET)."""
    out, todo = set(codes), list(codes)
    while todo:
        for implied in solutions.get(todo.pop(), {}).get("implies", ()):
            if implied not in out:
                out.add(implied)
                todo.append(implied)
    return frozenset(out)
