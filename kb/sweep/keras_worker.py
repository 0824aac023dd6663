"""The Keras 3 side of the CPU sweep (run as a child by kb.sweep.harness; KERAS_BACKEND is set
by the parent). Same protocol as kb.sweep.tf_worker.

What a case is:
- `keras.layers.X`: the layer built from its constructor (required arguments filled by name:
  units=4, filters=4, kernel_size=2, ...) and called once on a small float input (first shape
  that works), with `training=True` where `call` takes it; the output and the layer's weights
  are compared, so weight initialization counts.
- `keras.initializers.X`: the initializer called on shape (4, 4).
- `keras.random.X`: the function on shape (4,) or a small tensor.
- `keras.ops.X`: the function on small float/int tensors.
With the TensorFlow backend every mode also enables `tf.config.experimental.enable_op_determinism()`
(the TensorFlow switch a user would set), so a difference there is one the switch does not govern.

Modes: `no-seed` (nothing seeded), `global-seed` (`keras.utils.set_random_seed(1234)` before each
case), `layer-seed` (`seed=7` to the layer, initializer or function that takes one; no global seed).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys

from kb.sweep.tf_worker import error_message, is_refusal, worker_main

SHAPES = ((2, 8), (2, 8, 8, 3), (2, 6, 3), (2, 4, 4, 4, 3), (2, 8, 8))
GLOBAL_SEED = 1234
LAYER_SEED = 7
SKIP = {"keras.layers.Layer", "keras.layers.InputLayer", "keras.layers.Input", "keras.layers.Lambda",
        "keras.layers.TFSMLayer", "keras.layers.Wrapper", "keras.layers.RNN", "keras.layers.Bidirectional",
        "keras.layers.TimeDistributed", "keras.layers.JaxLayer", "keras.layers.FlaxLayer", "keras.initializers.Initializer",
        "keras.layers.TorchModuleWrapper", "keras.ops.custom_gradient", "keras.ops.map", "keras.ops.scan",
        "keras.ops.associative_scan", "keras.ops.fori_loop", "keras.ops.while_loop", "keras.ops.cond",
        "keras.ops.switch", "keras.ops.vectorized_map", "keras.ops.stop_gradient", "keras.ops.convert_to_numpy",
        "keras.ops.convert_to_tensor", "keras.ops.is_tensor", "keras.ops.dtype", "keras.ops.shape", "keras.ops.ndim",
        "keras.ops.rnn", "keras.ops.layer_normalization"}
NAMED = {
    "units": 4, "filters": 4, "kernel_size": 2, "rate": 0.5, "pool_size": 2, "output_dim": 4, "input_dim": 8,
    "num_heads": 2, "key_dim": 4, "head_dim": 4, "stddev": 0.5, "factor": 0.2, "height": 4, "width": 4,
    "scale": 0.5, "offset": 0.0, "target_shape": (8,), "dims": (1,), "n": 2, "cropping": 1, "padding": 1,
    "size": 2, "num_bins": 4, "max_tokens": 10, "num_tokens": 4, "value_range": (0, 1), "max_value": 1.0,
    "axis": -1, "value": 0.5, "depth_multiplier": 1, "groups": 1, "num_query_heads": 2, "num_key_value_heads": 2,
    "sequence_length": 6, "rank": 2, "num_classes": 4, "num_samples": 2, "counts": 3.0, "probabilities": 0.5,
    "alpha": 1.0, "beta": 1.0, "minval": 0, "maxval": 4, "shape": (4,), "dtype": "float32", "sampling_rate": 16000,
    "num_mel_bins": 8, "fft_length": 8, "sequence_stride": 4, "frame_length": 8, "frame_step": 4, "k": 1,
    "num_segments": 2, "bins": 4, "crop_size": (4, 4), "repeats": 2, "reps": (1, 2), "indices_or_sections": 1,
    "mean": 0.5, "variance": 1.0, "mode": "horizontal", "num_or_size_splits": 1, "negative_slope": 0.1,
}


def _keras():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras

    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
    return keras


def list_units(only):
    keras = _keras()
    units, seen = [], set()
    for group in ("layers", "initializers", "random", "ops"):
        mod = getattr(keras, group)
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            full = f"keras.{group}.{name}"
            obj = getattr(mod, name)
            if full in SKIP or (only and full not in only):
                continue
            if group == "layers" and not (inspect.isclass(obj) and issubclass(obj, keras.layers.Layer)):
                continue
            if group == "initializers" and not inspect.isclass(obj):
                continue
            if group in ("random", "ops") and (inspect.isclass(obj) or not callable(obj)):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            units.append({"op": full, "kind": group})
    for sid in ("seed-generator",):
        if not only or "keras.random.SeedGenerator" in only:
            units.append({"op": "keras.random.SeedGenerator", "kind": "special", "variant": sid})
    return units


def _tensor(keras, shape, salt, kind="float"):
    import numpy as np

    r = np.random.RandomState(100 + salt)
    if kind == "int":
        return keras.ops.convert_to_tensor(r.randint(0, 2, size=shape).astype("int32"))
    return keras.ops.convert_to_tensor(r.uniform(0.1, 1.0, size=shape).astype("float32"))


def _fill(keras, fn, shape, mode, skip_first=False):
    """kwargs for fn's required parameters; (kwargs, call literals, seed taken?)."""
    params = inspect.signature(fn).parameters
    kwargs: dict[str, object] = {}
    call: dict[str, object] = {}
    seeded = False
    salt = 0
    for i, (pname, p) in enumerate(params.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (skip_first and i == 0 and pname == "self"):
            continue
        if pname == "seed":
            seeded = True
            if mode == "layer-seed":
                kwargs["seed"] = LAYER_SEED
            call["seed"] = None if p.default is p.empty else p.default
            continue
        if p.default is not p.empty:
            continue
        if pname in NAMED:
            v = NAMED[pname]
            if pname == "shape" and shape:
                v = shape
            kwargs[pname] = v
            if isinstance(v, (int, float, str, bool)):
                call[pname] = v
            continue
        if pname in ("fn", "f", "function", "body", "layer", "cell", "module", "call_fn"):
            raise TypeError(f"needs a function ({pname})")
        kind = "int" if pname in ("indices", "x1_int", "labels", "segment_ids", "ids", "y_true_int") else "float"
        kwargs[pname] = _tensor(keras, shape or (4,), salt, kind)
        salt += 1
    return kwargs, call, seeded


def _numpy(keras, leaf):
    import numpy as np

    try:
        return np.asarray(keras.ops.convert_to_numpy(leaf))
    except Exception:  # noqa: BLE001
        return np.asarray(leaf)


def _hash(keras, result) -> str:
    import numpy as np

    h = hashlib.sha256()
    n = 0
    for leaf in keras.tree.flatten(result):
        if leaf is None or isinstance(leaf, (str, bytes)):
            h.update(repr(leaf).encode())
            continue
        arr = _numpy(keras, leaf)
        if arr.dtype == object:
            h.update(repr(arr.tolist()).encode())
        else:
            h.update(str(arr.dtype).encode() + str(arr.shape).encode() + np.ascontiguousarray(arr).tobytes())
        n += 1
    if n == 0:
        raise TypeError("no numeric output to compare")
    return h.hexdigest()[:16]


def build(keras, spec, mode):
    """A callable returning the value to compare, and the call's literals."""
    kind, op, cand = spec["kind"], spec["op"], spec["cand"]
    if kind == "special":
        gen = keras.random.SeedGenerator(LAYER_SEED if mode == "layer-seed" else None)
        return (lambda: keras.random.normal((4,), seed=gen)), {}, True
    obj = getattr(getattr(keras, kind), op.rsplit(".", 1)[1])
    shape: tuple[int, ...]
    if kind == "layers":
        shape = SHAPES[cand]
        kwargs, call, seeded = _fill(keras, obj.__init__, None, mode, skip_first=True)
        call = {k: v for k, v in call.items()}

        def f():
            layer = obj(**kwargs)
            x = _tensor(keras, shape, 0)
            try:
                takes_training = "training" in inspect.signature(layer.call).parameters
            except (TypeError, ValueError):
                takes_training = False
            y = layer(x, training=True) if takes_training else layer(x)
            return {"y": y, "w": [w for w in layer.weights]}
        call["input.ndim"] = len(shape)
        return f, call, seeded
    if kind == "initializers":
        kwargs, call, seeded = _fill(keras, obj.__init__, None, mode, skip_first=True)
        made: tuple[int, ...] = ((4, 4), (3, 3, 4, 4), (8,))[cand % 3]
        return (lambda: obj(**kwargs)(shape=made, dtype="float32")), call, seeded
    shape = SHAPES[cand] if kind == "ops" else ((4,), (2, 8), (2, 8, 8, 3), (2, 6, 3), (2, 4, 4, 4, 3))[cand]
    kwargs, call, seeded = _fill(keras, obj, shape, mode)
    first = next((k for k, v in kwargs.items() if hasattr(v, "shape") and not isinstance(v, tuple)), None)
    if first is not None:
        call["input.ndim"] = len(kwargs[first].shape)
    return (lambda: obj(**kwargs)), call, seeded


def setup(keras, mode):
    if mode == "global-seed":
        keras.utils.set_random_seed(GLOBAL_SEED)


def plan(units):
    """Import Keras and its backend (before `ready`); then unit i's plan, for each index given."""
    keras = _keras()
    return lambda i: plan_one(keras, units[i])


def plan_one(keras, unit):
    kind = unit["kind"]
    n = 1 if kind == "special" else (3 if kind == "initializers" else 5)
    last = "no candidate"
    for cand in range(n):
        spec = {"kind": kind, "op": unit["op"], "cand": cand, "variant": unit.get("variant", "")}
        try:
            fn, call, seeded = build(keras, spec, "layer-seed")
            _hash(keras, fn())
        except Exception as exc:  # noqa: BLE001
            last = error_message(exc)
            if not is_refusal(last):
                continue
            seeded = False
        fn, call, _ = build(keras, spec, "no-seed")
        if kind == "ops" and not seeded:
            modes = ["no-seed"]  # no random number drawn: the global seed cannot matter
        else:
            modes = ["no-seed", "global-seed"] + (["layer-seed"] if seeded else [])
        case = {"op": unit["op"], "variant": unit.get("variant") or kind, "case": f"candidate{cand}",
                "pass": "forward", "dtype": "float32", "call": call, "spec": spec, "modes_run": modes,
                "mode_args": {"global-seed": {"keras.utils.set_random_seed": GLOBAL_SEED},
                              "layer-seed": {"seed": LAYER_SEED}}}
        return {"cases": [case]}
    return {"skipped": f"no candidate input could be built or run: {last}"}


def run(cases, index, mode):
    """Import Keras and its backend (before `ready`); then the j-th case of this mode, called twice."""
    keras = _keras()

    def one(j):
        case = cases[index[j]]
        try:
            setup(keras, mode)
            fn, _, _ = build(keras, case["spec"], mode)
            return {"h1": _hash(keras, fn()), "h2": _hash(keras, fn()), "raised": None}
        except Exception as exc:  # noqa: BLE001
            return {"raised": error_message(exc)}
    return one


def main(argv=None):
    return worker_main(argv, list_units, plan, run)


if __name__ == "__main__":
    sys.exit(main())
