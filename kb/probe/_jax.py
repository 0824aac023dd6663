"""JAX probes: the fingerprint and statistics are computed inside the jitted function (XLA
fuses them into a few reductions), and only they reach the host, through
`jax.debug.callback`; a custom VJP records gradients the same way.

Callbacks run asynchronously, so `probe.step()` waits for pending ones (effects_barrier)
before it moves on: a record always lands in the step that produced it.

The host callback and the custom VJP's backward catch what their recording raises (noted in
the log by `recorder.not_recorded`): inside jit a failure there would fail the user's step.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from kb.probe import fingerprint, recorder
from kb.probe.nest import map_with_path

SAMPLE = recorder.SAMPLE
_device: list[str] = []


def _device_kind() -> str:
    if not _device:
        backend = jax.default_backend()
        _device.append("gpu" if backend in ("gpu", "cuda", "rocm") else backend)
    return _device[0]


def _words(x) -> jax.Array:
    """The array's bytes in logical order as 1-D uint32 words (1- and 2-byte elements widened)."""
    x = jnp.ravel(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        x = jnp.concatenate([jnp.real(x), jnp.imag(x)])
    size = x.dtype.itemsize
    if x.dtype == jnp.bool_:
        return x.astype(jnp.uint32)
    if size == 4:
        return jax.lax.bitcast_convert_type(x, jnp.uint32)
    if size == 2:
        return jax.lax.bitcast_convert_type(x, jnp.uint16).astype(jnp.uint32)
    if size == 1:
        return jax.lax.bitcast_convert_type(x, jnp.uint8).astype(jnp.uint32)
    return jnp.ravel(jax.lax.bitcast_convert_type(x, jnp.uint32))  # 8-byte: two words each


def _mix32(x):
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def device_fingerprint(x) -> jax.Array:
    """uint32[2]: both lanes of kb.probe.fingerprint's 32-bit-lane definition, computed where x is."""
    w = _words(x)
    index = jax.lax.iota(jnp.uint32, w.shape[0])
    lanes = [jnp.sum(_mix32(w + (index * jnp.uint32(fingerprint.GOLDEN32) + jnp.uint32(seed))), dtype=jnp.uint32)
             for seed in fingerprint.LANE_SEEDS]
    return jnp.stack(lanes)


def digest(lanes) -> str:
    a, b = (int(v) for v in np.asarray(lanes))
    return fingerprint.lanes_hexdigest(a, b)


def reference_digest(arr: np.ndarray) -> str:
    """The definition on the host, for checks: the same words, summed in numpy."""
    words = np.asarray(jax.device_get(_words(jnp.asarray(arr))))
    return fingerprint.lanes_hexdigest(*fingerprint.reference_lanes(words))


def _stats(x) -> jax.Array:
    flat = jnp.ravel(x)
    if jnp.issubdtype(flat.dtype, jnp.complexfloating):
        flat = jnp.abs(flat)
    flat = flat.astype(jnp.float32)
    n = flat.shape[0]
    picks = [(i * (n - 1)) // (SAMPLE - 1) for i in range(SAMPLE)] if n > SAMPLE else list(range(n))
    return jnp.concatenate([jnp.stack([flat.min(), flat.max(), flat.mean()]), flat[jnp.asarray(picks, dtype=jnp.int32)]])


def _cb(lanes, stats, *, name: str, kind: str, path: str, op: str | None, shape: tuple, dtype: str) -> None:
    try:
        _write(name=name, kind=kind, path=path, op=op, shape=shape, dtype=dtype, lanes=lanes, stats=stats)
    except Exception as exc:
        recorder.not_recorded("jax.debug.callback (writing a record)", exc)


def _write(*, name: str, kind: str, path: str, op: str | None, shape: tuple, dtype: str, lanes, stats) -> None:
    stats = np.asarray(stats).tolist() if stats is not None else None
    summary = None
    if stats:
        summary = {"min": stats[0], "max": stats[1], "mean": stats[2], "sample": stats[3:]}
    recorder.record_digest(name, kind, digest(lanes), shape=list(shape), dtype=dtype, stats=summary, path=path,
                           framework="jax", device=_device_kind(), op=op)


def _observe(x, name: str, kind: str, *, path: str, op: str | None):
    x = jnp.asarray(x)
    stats = _stats(x) if x.size else None
    cb = functools.partial(_cb, name=name, kind=kind, path=path, op=op, shape=tuple(x.shape), dtype=str(x.dtype))
    jax.debug.callback(cb, device_fingerprint(x), stats)
    return x


def _monitored(name: str, path: str, op: str | None):
    @jax.custom_vjp
    def ident(x):
        return _observe(x, name, "forward", path=path, op=op)

    def fwd(x):
        return _observe(x, name, "forward", path=path, op=op), None

    def bwd(_, g):
        try:
            return (_observe(g, name, "dout", path=path, op=op),)
        except Exception as exc:
            recorder.not_recorded("probe.monitor's backward (custom VJP)", exc)
            return (g,)

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
            return _observe(leaf, name, "forward", path=path, op=op)
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
            _observe(leaf, f"{name}{path}", kind, path="", op=None)
        else:
            recorder.record(f"{name}{path}", kind, leaf, framework="jax")
    return value


def monitor_gradients(grads, name: str):
    return _tree(grads, name, "grad")


def summarize(variables, name: str) -> None:
    _tree(variables, name, "param")
