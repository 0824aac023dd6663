"""The site's sentences for an answer, so every page says the same thing the same way.

Three answers must never be confused at a glance: "not deterministic by default — fixed by
X" (a switch exists), "no switch fixes it" and "not verified: no source covers this version" (nothing
says either way: never shown as deterministic).
"""

from __future__ import annotations

import re
from typing import Any

NAMES = {"tensorflow": "TensorFlow", "pytorch": "PyTorch", "jax": "JAX", "cudnn": "cuDNN", "cublas": "cuBLAS",
         "nccl": "NCCL", "horovod": "Horovod", "vllm": "vLLM", "cccl": "CCCL", "flash-attn": "FlashAttention",
         "megatron-core": "Megatron Core", "keras": "Keras", "sglang": "SGLang", "transformer-engine": "Transformer Engine",
         "deepspeed": "DeepSpeed", "torchvision": "torchvision", "mamba-ssm": "mamba-ssm",
         "causal-conv1d": "causal-conv1d"}
# Frameworks first (what users pick), then the libraries beneath them.
ORDER = ("tensorflow", "pytorch", "jax")

STATE_LEGEND = {
    "fix": "not deterministic by default — fixed by the code shown (any one of them)",
    "ns": "not deterministic by default — no switch fixes it in these versions",
    "ok": "deterministic by default",
    "unknown": "not verified: no source covers this version",
}


def name(framework: str) -> str:
    return NAMES.get(framework, framework)


def ordered(frameworks: list[str]) -> list[str]:
    """TensorFlow, PyTorch, JAX first, then the libraries in name order."""
    return sorted(frameworks, key=lambda f: (ORDER.index(f) if f in ORDER else len(ORDER), f))


def sentence(state: str, codes: tuple | list, solutions: dict, varies_with: tuple | list = ()) -> str:
    if state == "ok" and varies_with:  # a range with varies: configuration
        kept = " or ".join(codes)
        return (f"repeats run to run; the bits change with {', '.join(varies_with)} between jobs"
                + (f" (kept across them by {kept})" if kept else ""))
    if state == "ok":
        return "deterministic by default"
    if state == "unknown":
        return "not verified: no source covers this version"
    if state == "ns":
        return "not deterministic by default — no switch fixes it"
    fixes = " or ".join(f"{c} ({solutions[c]['title']})" if c in solutions else c for c in codes)
    return f"not deterministic by default — fixed by {fixes}"


def gpu(run: dict) -> str:
    """"NVIDIA H100 80GB HBM3" -> "H100"; a CPU run -> "CPU"."""
    if run.get("device") != "gpu" or not run.get("gpu"):
        return "CPU"
    words = str(run["gpu"]).replace("NVIDIA ", "").split()
    return words[0] if words else "GPU"


def runs_text(distinct: object, n: object) -> str:
    if not isinstance(distinct, int) or not isinstance(n, int):
        return "not measured"
    if distinct <= 1:
        return f"{n} of {n} runs identical"
    return f"{n} runs gave {distinct} different results"


def mode_text(mode: dict, n: object) -> str:
    """One solution mode of a run, in words: identical or not, and its time against the default."""
    code = mode.get("mode")
    if mode.get("outcome") == "raised":
        return f"{code}: the op raised (no deterministic implementation)"
    if mode.get("outcome") != "ok":
        return f"{code}: the run failed"
    ratio = mode.get("time_ratio")
    cost = f" at {ratio:g}× the default time" if isinstance(ratio, (int, float)) else ""
    if mode.get("distinct") == 1:
        return f"fixed by {code}{cost}"
    return f"{code}: still {runs_text(mode.get('distinct'), n)}{cost}"


def verified_mark(run: dict, framework: str) -> dict:
    """"verified on H100, PyTorch 2.11.0: 5 runs gave 5 different results; fixed by PT_DET at 6.4× ..."."""
    modes = list(run.get("modes") or ())
    default = next((m for m in modes if m.get("mode") == "default"), None)
    parts = []
    if default is not None:
        parts.append(runs_text(default.get("distinct"), run.get("n")) + " by default")
    parts += [mode_text(m, run.get("n")) for m in modes if m.get("mode") != "default"]
    where = f"{gpu(run)}, {name(framework)} {run.get('version')}"
    return {"short": gpu(run), "text": f"verified on {where}: " + "; ".join(parts),
            "differed": bool(default and isinstance(default.get("distinct"), int) and default["distinct"] > 1)}


_RUN_FILE = re.compile(r"data/runs/(?P<env>[A-Za-z0-9._-]+)/(?P<day>\d{4}-\d\d-\d\d)T(?P<h>\d\d)(?P<m>\d\d)\d\dZ\.yaml")
_STATIC = re.compile(r"data/runs/static-(?P<fw>[a-z0-9-]+)/(?:(?P<release>[0-9][0-9A-Za-z.+-]*?)\.yaml)?")


def machines(index: dict) -> dict[str, str]:
    """Environment id -> the short machine name its runs were measured on ("H100", "CPU")."""
    return {run["env_id"]: gpu(run) for runs in (index.get("runs") or {}).values() for run in runs if run.get("env_id")}


def public(value: Any, known: dict[str, str]) -> Any:
    """Record text for readers: a run file's repository path becomes the run it names.

    Records cite their evidence by run file (data/runs/<env>/<stamp>.yaml) or static evidence
    folder (data/runs/static-<framework>/), which is right in the repository and meaningless on
    the site; strings nested in lists, tuples and dicts too.
    """
    if isinstance(value, str):
        value = _STATIC.sub(lambda m: f"the {m['release']} wheel" if m["release"] else "the released wheels", value)
        return _RUN_FILE.sub(lambda m: f"{known.get(m['env'], 'the')} run {m['day']} {m['h']}:{m['m']} UTC", value)
    if isinstance(value, tuple):
        return tuple(public(v, known) for v in value)
    if isinstance(value, list):
        return [public(v, known) for v in value]
    if isinstance(value, dict):
        return {k: public(v, known) for k, v in value.items()}
    return value
