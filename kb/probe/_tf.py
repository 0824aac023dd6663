"""TensorFlow probes, as the GTC 2019 talk "Determinism in Deep Learning" shows them: back-propagatable monitor ops.

`monitor` wraps each tensor in an identity with a custom gradient: the forward records the
value, the gradient function records the gradient flowing back through the same place.
The fingerprint (kb.probe.fingerprint's 32-bit-lane definition, computed in int64 so that no
product overflows) and the statistics are TensorFlow ops on the tensor's device; only they
reach the host. Eagerly a record is a direct call; inside `tf.function` it is a
`tf.numpy_function` that the returned identity depends on, so it runs every step (XLA cannot
compile it: monitored functions must not use jit_compile=True).

The `numpy_function` callback, the custom gradient and the wrapped Keras `call` catch what
their recording raises (noted in the log by `recorder.not_recorded`): the step goes on.
"""

from __future__ import annotations

import functools

import numpy as np
import tensorflow as tf

from kb.probe import fingerprint, recorder
from kb.probe.nest import map_with_path

_M32 = 0xFFFFFFFF

_gpu: list[str] = []


def _device_kind() -> str:
    if not _gpu:
        _gpu.append("gpu" if tf.config.list_logical_devices("GPU") else "cpu")
    return _gpu[0]


def _words(t) -> tf.Tensor:
    """The tensor's bytes in logical order as 32-bit words held in int64 (small elements widened)."""
    flat = tf.reshape(t, [-1])
    if flat.dtype.is_complex:
        flat = tf.concat([tf.math.real(flat), tf.math.imag(flat)], 0)
    if flat.dtype == tf.bool:
        return tf.cast(flat, tf.int64)
    size = flat.dtype.size
    if size == 4:
        return tf.cast(tf.bitcast(flat, tf.uint32), tf.int64)
    if size == 2:
        return tf.cast(tf.bitcast(flat, tf.uint16), tf.int64)
    if size == 1:
        return tf.cast(tf.bitcast(flat, tf.uint8), tf.int64)
    return tf.cast(tf.reshape(tf.bitcast(flat, tf.uint32), [-1]), tf.int64)


def _mul32(x, c: int):
    """x * c modulo 2**32 for x < 2**32, in int64 without overflow (c split in 16-bit halves)."""
    hi, lo = c >> 16, c & 0xFFFF
    return (tf.bitwise.left_shift(tf.bitwise.bitwise_and(x * hi, 0xFFFF), 16) + x * lo) & _M32


def _mix32(x):
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))
    x = _mul32(x, 0x7FEB352D)
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 15))
    x = _mul32(x, 0x846CA68B)
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))


def device_fingerprint(t) -> tf.Tensor:
    """int64[2]: both 32-bit lanes of the definition, computed where t is."""
    w = _words(t)
    index = tf.range(tf.size(w, out_type=tf.int64), dtype=tf.int64)
    lanes = [tf.bitwise.bitwise_and(tf.reduce_sum(_mix32((w + ((index * fingerprint.GOLDEN32 + seed) & _M32)) & _M32)),
                                    _M32) for seed in fingerprint.LANE_SEEDS]
    return tf.stack(lanes)


def _stats(t) -> tf.Tensor:
    flat = tf.reshape(t, [-1])
    if flat.dtype.is_complex:
        flat = tf.abs(flat)
    flat = tf.cast(flat, tf.float32)
    n = int(flat.shape[0]) if flat.shape[0] is not None else None
    if n is None:
        picks = tf.cast(tf.linspace(0.0, tf.cast(tf.size(flat) - 1, tf.float32), recorder.SAMPLE), tf.int32)
    else:
        picks = [(i * (n - 1)) // (recorder.SAMPLE - 1) for i in range(recorder.SAMPLE)] if n > recorder.SAMPLE else list(range(n))
    return tf.concat([tf.stack([tf.reduce_min(flat), tf.reduce_max(flat), tf.reduce_mean(flat)]), tf.gather(flat, picks)], 0)


def _cb(shape, lanes, stats, *, name: str, kind: str, path: str, op: str | None, dtype: str) -> np.int64:
    try:
        _write(name=name, kind=kind, path=path, op=op, dtype=dtype, shape=shape, lanes=lanes, stats=stats)
    except Exception as exc:
        recorder.not_recorded("tf.numpy_function (writing a record)", exc)
    return np.int64(0)


def _write(*, name: str, kind: str, path: str, op: str | None, dtype: str, shape, lanes, stats) -> None:
    a, b = (int(v) for v in np.asarray(lanes))
    values = np.asarray(stats).tolist()
    summary = {"min": values[0], "max": values[1], "mean": values[2], "sample": values[3:]} if values else None
    recorder.record_digest(name, kind, fingerprint.lanes_hexdigest(a, b), shape=[int(d) for d in np.asarray(shape)],
                           dtype=dtype, stats=summary, path=path, framework="tensorflow", device=_device_kind(), op=op)


def _observe(t, name: str, kind: str, *, path: str, op: str | None):
    if isinstance(t, tf.IndexedSlices):
        t = tf.convert_to_tensor(t)
    lanes = device_fingerprint(t)
    stats = tf.cond(tf.size(t) > 0, lambda: _stats(t), lambda: tf.zeros([0], tf.float32)) \
        if not tf.executing_eagerly() else (_stats(t) if tf.size(t) > 0 else tf.zeros([0], tf.float32))
    cb = functools.partial(_cb, name=name, kind=kind, path=path, op=op, dtype=t.dtype.name)
    if tf.executing_eagerly():
        cb(tf.shape(t).numpy(), lanes.numpy(), stats.numpy())
        return t
    done = tf.numpy_function(cb, [tf.shape(t), lanes, stats], tf.int64, stateful=True)
    with tf.control_dependencies([done]):
        return tf.identity(t)


def _monitor_tensor(t, name: str, path: str, op: str | None):
    if not (t.dtype.is_floating or t.dtype.is_complex):
        return _observe(t, name, "forward", path=path, op=op)

    @tf.custom_gradient
    def ident(x):
        y = _observe(tf.identity(x), name, "forward", path=path, op=op)

        def grad(dy):
            try:
                return _observe(dy, name, "dout", path=path, op=op)
            except Exception as exc:
                recorder.not_recorded("probe.monitor's gradient function (tf.custom_gradient)", exc)
                return dy

        return y, grad

    return ident(t)


def _is_tensor(x) -> bool:
    return tf.is_tensor(x) or isinstance(x, (tf.Variable, np.ndarray))


def monitor(value, name: str, ops: list[str]):
    op = ",".join(ops) or None
    if ops:
        recorder.describe(name, ops=ops, framework="tensorflow")

    def one(leaf, path):
        if isinstance(leaf, tf.Variable):
            leaf = tf.convert_to_tensor(leaf)
        if _is_tensor(leaf):
            return _monitor_tensor(tf.convert_to_tensor(leaf), name, path, op)
        if leaf is None:
            return leaf
        if tf.executing_eagerly():
            recorder.record(name, "forward", leaf, path=path, framework="tensorflow", op=op)
            return leaf
        # inside tf.function a Python value is a constant: record it each step, return it as is
        _observe(tf.constant(leaf), name, "forward", path=path, op=op)
        return leaf

    return map_with_path(one, value)


def _var_name(v) -> str:
    return getattr(v, "path", None) or v.name


def monitor_gradients(grads, name: str):
    items = list(grads)
    out: list
    if items and isinstance(items[0], tuple):  # (gradient, variable) pairs
        out = []
        for g, v in items:
            out.append((None if g is None else _observe(g, _var_name(v), "grad", path="", op=None), v))
        return type(grads)(out) if isinstance(grads, (list, tuple)) else out
    out = [None if g is None else _observe(g, f"{name}[{i}]", "grad", path="", op=None) for i, g in enumerate(items)]
    return type(grads)(out) if isinstance(grads, (list, tuple)) else out


def summarize(variables, name: str) -> None:
    if hasattr(variables, "trainable_variables"):
        variables = variables.trainable_variables
    for i, v in enumerate(variables):
        label = _var_name(v) if hasattr(v, "name") else f"{name}[{i}]"
        _observe(tf.convert_to_tensor(v), label, "param", path="", op=None)


def layer_type(layer) -> str:
    """Public name of a layer's class: tf.keras.layers.Dense for keras.src...Dense."""
    cls = type(layer)
    if cls.__module__.startswith(("keras.", "tf_keras.", "tensorflow.python.keras")):
        return f"tf.keras.layers.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def layer_call(layer) -> dict | None:
    """The layer's configuration as call facts (its scalar arguments: interpolation='bilinear',
    ...), the form of the knowledge base's call conditions."""
    try:
        config = layer.get_config()
    except (NotImplementedError, TypeError, AttributeError):
        return None
    skip = {"name", "trainable", "dtype"}
    return {k: v for k, v in config.items() if k not in skip and isinstance(v, (str, bool, int, float, type(None)))}


def monitor_keras(model):
    """Wrap every layer's `call` so its output goes through `monitor` (name = layer name)."""
    layers = model._flatten_layers(include_self=False) if hasattr(model, "_flatten_layers") else model.layers
    for layer in layers:
        if getattr(layer, "_kb_probe", False) or not hasattr(layer, "call"):
            continue
        kind = layer_type(layer)
        recorder.describe(layer.name, type=kind, framework="tensorflow", call=layer_call(layer))
        original = layer.call

        @functools.wraps(original)
        def call(*args, _original=original, _name=layer.name, **kwargs):
            out = _original(*args, **kwargs)  # the layer's own call: its exceptions are the user's
            try:
                return monitor(out, _name, []) if recorder.enabled() else out
            except Exception as exc:
                recorder.not_recorded("monitor_keras (a layer's output)", exc)
                return out

        object.__setattr__(layer, "call", call)
        object.__setattr__(layer, "_kb_probe", True)
    if getattr(model, "jit_compile", False):
        model.jit_compile = False  # numpy_function cannot run under XLA
    return model
