"""JAX: the calls of a jitted function, read from its jaxpr (what it computes, the backward
included when it takes gradients) and its compiled HLO (which library kernels XLA chose).

Why the jaxpr and not the Python calls: under `jax.jit` the Python function runs once, to
trace; what runs each step is the traced program, and the gradient's operations (the
scatter-add that is the transpose of a gather, the select-and-scatter of a max-pool's
gradient) exist only there. Each primitive is named as the knowledge base knows it
(`scatter-add` is `jax.lax.scatter_add`, a max-pool gradient's `select_and_scatter_add` is
`jax.lax.reduce_window`'s backward), with the facts it records: the operand's exact dtype and
rank and the primitive's plain parameters (`unique_indices`, `indices_are_sorted`,
`feature_group_count`, ...).
"""

from __future__ import annotations

import json
import re

# primitive -> the public op the knowledge base answers for
NAMES = {
    "scatter-add": "jax.lax.scatter_add", "scatter_add": "jax.lax.scatter_add",
    "scatter-mul": "jax.lax.scatter_mul", "scatter_mul": "jax.lax.scatter_mul",
    "scatter-min": "jax.lax.scatter_min", "scatter-max": "jax.lax.scatter_max",
    "select_and_scatter_add": "jax.lax.reduce_window",
    "reduce_window_max": "jax.lax.reduce_window", "reduce_window_min": "jax.lax.reduce_window",
    "reduce_window_sum": "jax.lax.reduce_window",
    "dot_general": "jax.lax.dot_general", "conv_general_dilated": "jax.lax.conv_general_dilated",
    "cumsum": "jax.lax.cumsum", "cumprod": "jax.lax.cumprod", "cumlogsumexp": "jax.lax.cumlogsumexp",
    "cummax": "jax.lax.cummax", "cummin": "jax.lax.cummin",
}
# primitives that only hold other jaxprs: their contents are walked, they are not calls
CONTAINERS = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                        "custom_vjp_call_jaxpr", "remat", "checkpoint", "remat2", "custom_lin", "shard_map",
                        "xla_call", "named_call", "run_state"})
# the jaxpr of a function that takes a gradient holds the backward's own primitives: a
# backward-pass record of a forward primitive applies through them (a gather's transpose is a
# scatter-add, answered as such), so only these primitives carry `grad` (kb/check/predict.py)
BACKWARD = frozenset({"select_and_scatter_add", "select_and_scatter"})
SKIP_PARAMS = frozenset({"update_jaxpr", "jvp_jaxpr_fun", "jvp_jaxpr_thunk", "fwd_jaxpr_thunk", "bwd"})
MAX_CALLS = 2000


def name_of(primitive: str) -> str:
    """The public name of a primitive: a known mapping, else jax.lax.<name>."""
    return NAMES.get(primitive) or "jax.lax." + primitive.replace("-", "_")


def _sub_jaxprs(params: dict):
    for key, value in params.items():
        if key in SKIP_PARAMS:
            continue
        for item in value if isinstance(value, (list, tuple)) else (value,):
            inner = getattr(item, "jaxpr", None)
            if inner is not None and hasattr(inner, "eqns"):
                yield inner
            elif hasattr(item, "eqns"):
                yield item


def _facts(eqn) -> dict:
    facts: dict = {}
    if eqn.invars:
        aval = getattr(eqn.invars[0], "aval", None)
        dtype = getattr(aval, "dtype", None)
        if dtype is not None:
            facts["input.dtype"] = str(dtype)
            facts["input.ndim"] = len(getattr(aval, "shape", ()))
    for key, value in eqn.params.items():
        if isinstance(value, (bool, int, str)) and not isinstance(value, type):
            facts[key] = value
    return facts


def calls(closed_jaxpr, device: str, function: str) -> list[dict]:
    """The distinct calls of a (closed) jaxpr, containers walked through."""
    found: dict[tuple, dict] = {}

    def walk(jaxpr, depth: int) -> None:
        if depth > 50:
            return
        for eqn in jaxpr.eqns:
            primitive = eqn.primitive.name
            if primitive not in CONTAINERS:
                facts = _facts(eqn)
                op = name_of(primitive)
                key = (op, primitive, json.dumps(facts, sort_keys=True, default=str))
                entry = found.get(key)
                if entry is None and len(found) < MAX_CALLS:
                    entry = found[key] = {"op": op, "primitive": primitive, "call": facts, "device": device,
                                          "count": 0, "modules": [function], "step": 0,
                                          "grad": primitive in BACKWARD,
                                          "shown": f"{primitive}(" + ", ".join(
                                              f"{k}={v!r}" for k, v in facts.items() if "." not in k) + ")"}
                if entry is not None:
                    entry["count"] += 1
            for inner in _sub_jaxprs(eqn.params):
                walk(inner, depth + 1)

    walk(getattr(closed_jaxpr, "jaxpr", closed_jaxpr), 0)
    return list(found.values())


_CUSTOM = re.compile(r'custom_call_target="([^"]+)"')
_FUSION = re.compile(r'"kind":"(__[A-Za-z0-9_]+)"')


def kernels(hlo_text: str) -> list[str]:
    """The library kernels and generated-kernel kinds in a compiled HLO module
    (`__cublas$gemm`, `__cudnn$convForward`, `__triton_gemm`, ...)."""
    found = set(_CUSTOM.findall(hlo_text)) | set(_FUSION.findall(hlo_text))
    return sorted(found)[:100]
