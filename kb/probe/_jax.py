"""JAX probes: `jax.debug.callback` records values inside jit; a custom VJP records gradients.

Callbacks run asynchronously, so `probe.step()` waits for pending ones (effects_barrier)
before it moves on: a record always lands in the step that produced it.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from kb.probe import recorder
from kb.probe.nest import map_with_path

_device: list[str] = []
_Tracer = getattr(jax.core, "Tracer", None)  # None where a future jax hides it: always use the callback


def _device_kind() -> str:
    if not _device:
        backend = jax.default_backend()
        _device.append("gpu" if backend in ("gpu", "cuda", "rocm") else backend)
    return _device[0]


def _cb(name: str, kind: str, path: str, op: str | None, value) -> None:
    recorder.record(name, kind, np.asarray(value), path=path, framework="jax", device=_device_kind(), op=op)


def _observe(x, name: str, kind: str, path: str, op: str | None):
    if _Tracer is None or isinstance(x, _Tracer):
        jax.debug.callback(functools.partial(_cb, name, kind, path, op), x)
    else:
        _cb(name, kind, path, op, x)
    return x


def _monitored(name: str, path: str, op: str | None):
    @jax.custom_vjp
    def ident(x):
        return _observe(x, name, "forward", path, op)

    def fwd(x):
        return _observe(x, name, "forward", path, op), None

    def bwd(_, g):
        return (_observe(g, name, "dout", path, op),)

    ident.defvjp(fwd, bwd)
    return ident


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic))  # a tracer is a jax.Array too


def monitor(value, name: str, ops: list[str]):
    op = ",".join(ops) or None
    if ops:
        recorder.describe(name, ops=ops, framework="jax")

    def one(leaf, path):
        if _is_array(leaf):
            if jnp.issubdtype(leaf.dtype, jnp.inexact):
                return _monitored(name, path, op)(leaf)
            return _observe(leaf, name, "forward", path, op)
        if leaf is not None:  # a Python value is static under jit: recorded when traced
            recorder.record(name, "forward", leaf, path=path, framework="jax", op=op)
        return leaf

    return map_with_path(one, value)


def _tree(value, name: str, kind: str):
    flat, _ = jax.tree_util.tree_flatten_with_path(value)
    for keypath, leaf in flat:
        if leaf is None:
            continue
        path = jax.tree_util.keystr(keypath)
        if _is_array(leaf):
            _observe(leaf, f"{name}{path}", kind, "", None)
        else:
            recorder.record(f"{name}{path}", kind, leaf, framework="jax")
    return value


def monitor_gradients(grads, name: str):
    return _tree(grads, name, "grad")


def summarize(variables, name: str) -> None:
    _tree(variables, name, "param")
