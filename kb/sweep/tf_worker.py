"""The TensorFlow side of the CPU sweep (run as a child by kb.sweep.harness; imports TensorFlow).

    python -m kb.sweep.tf_worker list [--only A,B]            # units: raw ops, public ops, specials
    python -m kb.sweep.tf_worker plan --units F               # pick a buildable call per op (indices on stdin)
    python -m kb.sweep.tf_worker run --cases F --index F --mode M   # one mode's cases (indices on stdin)

Inputs are built from TensorFlow's own registry: a `tf.raw_ops` kernel's OpDef (input types,
type attributes and their allowed values, number and list attributes, required attributes)
gives the arguments; `kernels.get_registered_kernels_for_op` says whether it has a CPU kernel.
A public op's arguments come from its Python signature and the parameter's name. Each op tries
a few candidate shapes in turn and keeps the first that runs (under determinism, with seeds);
one that raises a determinism refusal is kept too. An op with no such candidate is skipped with
the last message.

Every mode enables `tf.config.experimental.enable_op_determinism()`:
- `no-seed`: no global seed, op seeds left at their defaults (raw ops: seed=0, seed2=0);
- `global-seed`: `tf.random.set_seed(1234)` before each case (public ops and specials only);
- `op-seed`: the op's own seed arguments (raw ops: seed=7, seed2=11; public: seed=7), no global seed.
A case is called twice in each process; the two hashes show a seeded sequence.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from kb.protocol import emit, result  # the workers' one line protocol
from kb.sweep.tf_specials import SPECIALS

SHAPES = ((3, 3), (4, 4, 4, 4), (5,), (), (2, 3, 4), (2, 2, 2, 2, 2))
OP_SEED = {"seed": 7, "seed2": 11}
GLOBAL_SEED = 1234
PUBLIC_NAMESPACES = ("tf.", "tf.math.", "tf.nn.", "tf.random.", "tf.image.", "tf.linalg.", "tf.signal.",
                     "tf.random.experimental.")
SKIP_RAW_PREFIX = ("_", "Collective", "Nccl", "TPU", "Tpu", "Send", "Recv", "Enqueue", "Dequeue", "Xla")
SKIP_RAW = {
    "Abort", "WriteFile", "Save", "SaveV2", "SaveSlices", "MergeV2Checkpoints", "Restore", "RestoreV2",
    "RestoreSlice", "ImmutableConst", "ReadFile", "MatchingFiles", "Batch", "Unbatch", "UnbatchGrad",
    "Stage", "Unstage", "StagePeek", "StageSize", "StageClear", "MapStage", "MapUnstage", "MapPeek",
    "MapSize", "MapClear", "MapIncompleteSize", "MapUnstageNoKey", "OrderedMapStage", "OrderedMapUnstage",
    "OrderedMapPeek", "OrderedMapSize", "OrderedMapClear", "OrderedMapIncompleteSize",
    "OrderedMapUnstageNoKey", "DebugIdentity", "DebugIdentityV2", "DebugIdentityV3", "DebugNanCount",
    "DebugNumericSummary", "DebugNumericSummaryV2", "Enter", "Exit", "NextIteration", "Merge", "Switch",
    "RefEnter", "RefExit", "RefMerge", "RefSwitch", "LoopCond", "ControlTrigger", "Fact", "DeleteSessionTensor",
    "GetSessionHandle", "GetSessionHandleV2", "GetSessionTensor",
}
SKIP_PUBLIC = {
    "tf.function", "tf.py_function", "tf.numpy_function", "tf.map_fn", "tf.vectorized_map", "tf.while_loop",
    "tf.cond", "tf.switch_case", "tf.case", "tf.group", "tf.no_op", "tf.init_scope", "tf.device",
    "tf.name_scope", "tf.control_dependencies", "tf.get_logger", "tf.executing_eagerly", "tf.load_library",
    "tf.load_op_library", "tf.random.set_seed", "tf.foldl", "tf.foldr", "tf.scan", "tf.print", "tf.recompute_grad",
    "tf.custom_gradient", "tf.gradients", "tf.hessians", "tf.stop_gradient", "tf.get_current_name_scope",
    "tf.is_symbolic_tensor", "tf.inside_function", "tf.is_tensor", "tf.register_tensor_conversion_function",
    "tf.convert_to_tensor", "tf.timestamp",
}
TENSOR_NAMES_INT = {"indices", "segment_ids", "labels", "ids", "positions", "targets", "label", "index",
                    "sample_indices", "multiples"}


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


def error_message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text[:400]


def is_refusal(message: str) -> bool:
    """A refusal names determinism being enabled ("deterministic is false" alone is an argument check)."""
    m = message.lower()
    return "determinism" in m


# ---------------------------------------------------------------- listing

def list_units(only: list[str] | None) -> list[dict]:
    tf = _tf()
    from tensorflow.python.framework import kernels

    units = []
    for name in sorted(dir(tf.raw_ops)):
        if name.startswith(SKIP_RAW_PREFIX) or name in SKIP_RAW:
            continue
        full = f"tf.raw_ops.{name}"
        if only and full not in only:
            continue
        try:
            devs = {k.device_type for k in kernels.get_registered_kernels_for_op(name).kernel}
        except Exception:  # noqa: BLE001
            continue
        if "CPU" not in devs:
            continue
        units.append({"op": full, "kind": "raw"})
    seen = set()
    for name in _public_names():
        if only and name not in only:
            continue
        obj = _resolve(tf, name)
        if obj is None or not callable(obj) or inspect.isclass(obj):
            continue
        key = id(inspect.unwrap(obj))
        if key in seen:
            continue
        seen.add(key)
        units.append({"op": name, "kind": "public"})
    for sid in SPECIALS:
        if only and SPECIALS[sid].op not in only and sid not in only:
            continue
        units.append({"op": str(SPECIALS[sid].op), "kind": "special", "variant": sid})  # every special names its op
    return units


def _public_names() -> list[str]:
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "data" / "api" / "tensorflow.signatures.txt"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        name = line.split("\t", 1)[0]
        if name in SKIP_PUBLIC:
            continue
        ns, _, last = name.rpartition(".")
        if ns + "." not in PUBLIC_NAMESPACES or not last or last[0].isupper() or last.startswith("_"):
            continue
        out.append(name)
    return sorted(out)


def _resolve(tf, name: str):
    obj = tf
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# ---------------------------------------------------------------- inputs

def _values(tf, dtype, shape, salt: int):
    import numpy as np

    rng = np.random.RandomState(1000 + salt)
    if dtype.is_bool:
        return tf.constant(rng.rand(*shape) > 0.5 if shape else True)
    if dtype.is_integer:
        arr = rng.randint(0, 2, size=shape) if shape else np.array(1)
        return tf.cast(tf.constant(arr.astype("int64")), dtype)
    if dtype.is_complex:
        arr = rng.uniform(0.1, 1.0, size=shape) + 1j * rng.uniform(0.1, 1.0, size=shape)
        return tf.cast(tf.constant(arr), dtype)
    if dtype.is_floating:
        arr = rng.uniform(0.1, 1.0, size=shape) if shape else np.array(0.5)
        return tf.cast(tf.constant(arr.astype("float32")), dtype)
    if dtype == tf.string:
        return tf.fill(shape, "a") if shape else tf.constant("a")
    raise TypeError(f"no input of dtype {dtype.name}")


def _named_int(name: str, shape):
    """A value for an int input or attribute whose name says what it is, or None."""
    nd = len(shape)
    n = name.lower()
    if n in ("shape", "dims", "output_shape", "input_sizes", "filter_sizes", "orig_input_shape", "sizes"):
        return list(shape) if shape else [3, 3]
    if n in ("size", "new_size", "output_size", "crop_size", "image_size"):
        return [2, 2]
    if n in ("seed",):
        return [1, 2]
    if n in ("axis", "dim", "reduction_indices", "split_dim", "concat_dim", "begin_axis", "batch_dims"):
        return 0
    if n in ("perm",):
        return list(range(nd))[::-1]
    if n in ("paddings", "crops"):
        return [[1, 1]] * max(nd, 1)
    if n in ("num_segments", "depth", "num_samples", "num_classes", "k", "num", "num_split", "n", "window_length",
             "frame_length", "frame_step", "fft_length", "num_bits"):
        return 2
    if n in ("num_lower", "num_upper", "diagonal", "lower", "upper"):
        return 0
    return None


def build_raw(tf, name: str, cand: int, mode: str):
    """(kwargs, watched float tensors, call literals, dtype name) for tf.raw_ops.<name>, or raise."""
    from tensorflow.python.framework import dtypes, op_def_registry

    od = op_def_registry.get(name)
    if od is None:
        raise LookupError("no OpDef")
    shape = SHAPES[cand]
    attrs = {a.name: a for a in od.attr}
    sig = inspect.signature(getattr(tf.raw_ops, name)).parameters
    chosen: dict[str, Any] = {}  # attribute -> tf.DType

    def pick_type(attr) -> Any:
        allowed = list(attr.allowed_values.list.type) if attr.HasField("allowed_values") else []
        pref = [dtypes.float32, dtypes.int32, dtypes.bool, dtypes.float64, dtypes.int64, dtypes.complex64,
                dtypes.uint8, dtypes.half, dtypes.string]
        for d in pref:
            if not allowed or d.as_datatype_enum in allowed:
                return d
        return dtypes.as_dtype(allowed[0])

    kwargs: dict[str, object] = {}
    call: dict[str, object] = {}
    watched = []
    for k, arg in enumerate(od.input_arg):
        if arg.is_ref:
            raise TypeError(f"ref input {arg.name}")
        if arg.type_attr:
            if arg.type_attr not in chosen:
                chosen[arg.type_attr] = pick_type(attrs[arg.type_attr])
            dtype = chosen[arg.type_attr]
        elif arg.type_list_attr:
            dtype = None
        else:
            dtype = dtypes.as_dtype(arg.type)
        if dtype is not None and dtype.as_datatype_enum in (dtypes.resource.as_datatype_enum, dtypes.variant.as_datatype_enum):
            raise TypeError(f"{dtype.name} input {arg.name}")

        def one(dt, salt):
            if dt.is_integer:
                v = _named_int(arg.name, shape)
                if v is not None:
                    return tf.constant(v, dtype=dt)
                if arg.name.lower() in ("key", "counter"):
                    return tf.constant([1, 2][: 1 if arg.name == "key" else 2], dtype=dt)
                if arg.name.lower() == "alg":
                    return tf.constant(1, dtype=dt)
            t = _values(tf, dt, shape, salt)
            if dt.is_floating or dt.is_complex:
                watched.append(t)
            return t

        if arg.number_attr:
            n = max(2, attrs[arg.number_attr].minimum if attrs[arg.number_attr].has_minimum else 0)
            kwargs[arg.name] = [one(dtype, 10 * k + j) for j in range(n)]
        elif arg.type_list_attr:
            la = attrs[arg.type_list_attr]
            n = max(1, la.minimum if la.has_minimum else 0)
            dt = pick_type(la)
            kwargs[arg.name] = [one(dt, 10 * k + j) for j in range(n)]
        else:
            kwargs[arg.name] = one(dtype, k)
    for aname, attr in attrs.items():
        if aname not in sig:
            continue  # inferred from the inputs
        if aname == "deterministic" and attr.type == "bool" and mode == "op-seed":
            kwargs[aname] = call[aname] = True  # fractional pooling: seeds count only with deterministic=True
            continue
        if aname in ("seed", "seed2"):
            if mode == "op-seed":
                kwargs[aname] = OP_SEED[aname]
                call[aname] = OP_SEED[aname]
            else:
                call[aname] = 0 if not attr.HasField("default_value") else attr.default_value.i
            continue
        if attr.HasField("default_value"):
            continue
        t = attr.type
        if t == "type":
            v = chosen.get(aname) or pick_type(attr)
            kwargs[aname] = v
            call[aname] = v.name
        elif t == "int":
            v = _named_int(aname, shape)
            v = v if isinstance(v, int) else max(1, attr.minimum if attr.has_minimum else 1)
            kwargs[aname] = v
            call[aname] = v
        elif t == "float":
            kwargs[aname] = call[aname] = 0.5
        elif t == "bool":
            kwargs[aname] = call[aname] = False
        elif t == "string":
            allowed = list(attr.allowed_values.list.s) if attr.HasField("allowed_values") else []
            v = allowed[0].decode() if allowed else "a"
            kwargs[aname] = call[aname] = v
        elif t == "shape":
            kwargs[aname] = list(shape)
        elif t == "list(int)":
            nd = max(len(shape), 1)
            if aname in ("ksize",):
                v = [1, 2, 2, 1] if nd == 4 else [1] + [2] * (nd - 2) + [1] if nd >= 3 else [1] * nd
            else:
                v = [1] * nd
            kwargs[aname] = call[aname] = v
        elif t == "list(float)":
            v = [1.0, 1.44, 1.73, 1.0] if aname == "pooling_ratio" else [0.5]
            kwargs[aname] = call[aname] = v
        elif t == "list(type)":
            n = max(1, attr.minimum if attr.has_minimum else 0)
            kwargs[aname] = [tf.float32] * n
        elif t == "list(shape)":
            kwargs[aname] = [list(shape)]
        else:
            raise TypeError(f"attribute {aname} of type {t} has no default")
    first = next((v for v in kwargs.values() if hasattr(v, "dtype") and hasattr(v, "shape")), None)
    if first is not None:
        call["input.ndim"] = len(first.shape)
        call["input.dtype"] = _kind(first.dtype)
    dtype = next(iter(chosen.values())).name if chosen else (first.dtype.name if first is not None else None)
    return (lambda: getattr(tf.raw_ops, name)(**kwargs)), watched, call, dtype


def _kind(dtype) -> str:
    if dtype.is_bool:
        return "bool"
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating:
        return "float"
    if dtype.is_integer:
        return "int"
    return dtype.name


def build_public(tf, name: str, cand: int, mode: str):
    fn = _resolve(tf, name)
    shape = SHAPES[cand]
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError) as exc:
        raise TypeError(f"no signature: {exc}") from None
    kwargs: dict[str, object] = {}
    call: dict[str, object] = {}
    watched = []
    salt = 0
    for pname, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if pname == "seed":
            if mode == "op-seed":
                kwargs["seed"] = call["seed"] = 7
            else:
                call["seed"] = p.default if p.default is not p.empty else None
            continue
        if p.default is not p.empty:
            continue
        n = pname.lower()
        if n in ("fn", "f", "func", "callable", "map_fn", "body", "cond", "true_fn", "false_fn"):
            raise TypeError(f"needs a function ({pname})")
        if n in ("dtype", "out_type", "output_type"):
            kwargs[pname] = tf.float32
            call[pname] = "float32"
            continue
        if n in ("padding",):
            kwargs[pname] = call[pname] = "VALID"
            continue
        if n in ("strides", "ksize", "pool_size", "window_shape"):
            kwargs[pname] = call[pname] = 1 if n == "strides" else 2
            continue
        if n == "pooling_ratio":
            kwargs[pname] = call[pname] = [1.0, 1.44, 1.73, 1.0]
            continue
        if n in ("rate", "keep_prob", "alpha", "delta", "max_delta", "lower", "upper", "gamma", "factor",
                 "contrast_factor", "saturation_factor", "scale", "threshold", "stddev"):
            kwargs[pname] = call[pname] = 0.5
            continue
        if n in ("num_or_size_splits",):
            kwargs[pname] = call[pname] = 1
            continue
        v = _named_int(pname, shape)
        if v is not None:
            kwargs[pname] = tf.constant(v) if isinstance(v, list) else v
            if not isinstance(v, list):
                call[pname] = v
            continue
        if n in TENSOR_NAMES_INT:
            t = _values(tf, tf.int32, shape, salt)
        else:
            t = _values(tf, tf.float32, shape, salt)
            watched.append(t)
        salt += 1
        kwargs[pname] = t
    first = next((v for v in kwargs.values() if hasattr(v, "dtype") and hasattr(v, "shape")), None)
    if first is not None:
        call["input.ndim"] = len(first.shape)
        call["input.dtype"] = _kind(first.dtype)
    return (lambda: fn(**kwargs)), watched, call, (first.dtype.name if first is not None else None)


# ---------------------------------------------------------------- running

def _hash(tf, result) -> str:
    h = hashlib.sha256()
    n = 0
    for leaf in tf.nest.flatten(result, expand_composites=True):
        if leaf is None:
            h.update(b"none")
            continue
        if not hasattr(leaf, "dtype"):
            if not isinstance(leaf, (bool, int, float, str, bytes)):
                raise TypeError(f"output is not a tensor: {type(leaf).__name__}")  # a repr may hold an address
            h.update(repr(leaf).encode())
            n += 1
            continue
        if leaf.dtype in (tf.resource, tf.variant):
            continue
        arr = leaf.numpy()
        h.update(str(arr.dtype).encode() + str(arr.shape).encode())
        h.update(arr.tobytes() if arr.dtype != object else repr(arr.tolist()).encode())
        n += 1
    if n == 0:
        raise TypeError("no numeric output to compare")
    return h.hexdigest()[:16]


def _backward(tf, fn, watched):
    import numpy as np

    def g():
        with tf.GradientTape() as tape:
            for t in watched:
                tape.watch(t)
            out = fn()
            loss = 0.0
            for k, leaf in enumerate(tf.nest.flatten(out, expand_composites=True)):
                if hasattr(leaf, "dtype") and leaf.dtype.is_floating:
                    w = tf.constant(np.random.RandomState(k).uniform(0.5, 1.5, size=leaf.shape).astype("float32"))
                    loss = loss + tf.reduce_sum(tf.cast(leaf, tf.float32) * w)
        grads = tape.gradient(loss, watched)
        if grads is None or all(x is None for x in grads):
            raise LookupError("no gradient")
        return [tf.convert_to_tensor(x) if x is not None else None for x in grads]
    return g


def build(tf, spec: dict, mode: str):
    kind = spec["kind"]
    if kind == "special":
        sp = SPECIALS[spec["variant"]]
        seed = 7 if mode == "op-seed" else None
        assert sp.build is not None  # every special builds its call
        return sp.build(tf, seed), [], dict(sp.call), None
    if kind == "raw":
        return build_raw(tf, spec["op"].split(".")[-1], spec["cand"], mode)
    return build_public(tf, spec["op"], spec["cand"], mode)


def setup_mode(tf, mode: str) -> None:
    if mode == "global-seed":
        tf.random.set_seed(GLOBAL_SEED)


def plan(units: list[dict]) -> Callable[[int], dict]:
    """Import TensorFlow (before `ready`); then unit i's plan, for each index given."""
    tf = _tf()
    tf.config.experimental.enable_op_determinism()
    return lambda i: plan_one(tf, units[i])


def plan_one(tf, unit: dict) -> dict:
    kind = unit["kind"]
    variant = unit.get("variant", "")
    last = "no candidate"
    for cand in ([0] if kind == "special" else range(len(SHAPES))):
        spec = {"kind": kind, "op": unit["op"], "cand": cand, "variant": variant}
        call = dict(SPECIALS[variant].call) if kind == "special" else {}
        watched, dtype, fn = [], None, None
        try:
            fn, watched, call, dtype = build(tf, spec, "op-seed")
            _hash(tf, fn())
            ok = True
        except Exception as exc:  # noqa: BLE001
            last = error_message(exc)
            if not is_refusal(last):
                continue
            ok = False  # refuses even with op seeds: kept, the sweep says when
        if kind == "raw":
            modes = ["no-seed", "op-seed"] if "seed" in call else ["no-seed"]
        elif kind == "special":
            seeded = SPECIALS[variant].seeded or variant.startswith(("generator", "global-generator"))
            modes = ["no-seed", "global-seed", "op-seed"] if seeded else ["no-seed"]
        else:
            seeded = "seed" in call or unit["op"].startswith("tf.random.")
            modes = ["no-seed", "global-seed", "op-seed"] if seeded else ["no-seed"]
        if kind != "special":
            call = build(tf, spec, "no-seed")[2]  # the call as a user makes it: no seed given
        shown = {k: v for k, v in call.items() if kind == "raw" or k not in ("seed", "seed2")}
        mode_args = {"global-seed": {"tf.random.set_seed": GLOBAL_SEED},
                     "op-seed": dict(OP_SEED) if kind == "raw" or unit["op"].startswith("tf.raw_ops.") else {"seed": 7}}
        base = {"op": unit["op"], "variant": variant or kind,
                "case": variant if kind == "special" else "shape" + "x".join(map(str, SHAPES[cand])),
                "dtype": dtype, "call": shown, "spec": spec, "modes_run": modes,
                "mode_args": {m: mode_args[m] for m in modes if m in mode_args},
                "pass": SPECIALS[variant].passes if kind == "special" else "forward"}
        passes = [base]
        if kind != "special" and ok and watched:
            try:
                _hash(tf, _backward(tf, fn, watched)())
                passes.append(dict(base, **{"pass": "backward"}))
            except Exception:  # noqa: BLE001
                pass
        return {"cases": passes}
    return {"skipped": f"no candidate input could be built or run: {last}"}


def run_case(tf, case: dict, mode: str) -> dict:
    """One case in one mode, called twice: {"h1", "h2", "raised": None} or {"raised": message}."""
    try:
        setup_mode(tf, mode)
        fn, watched, _call, _ = build(tf, case["spec"], mode)
        if case["pass"] == "backward" and case["spec"]["kind"] != "special":  # specials differentiate themselves
            fn = _backward(tf, fn, watched)
        return {"h1": _hash(tf, fn()), "h2": _hash(tf, fn()), "raised": None}
    except Exception as exc:  # noqa: BLE001
        return {"raised": error_message(exc)}


def run(cases: list[dict], index: list[int], mode: str) -> Callable[[int], dict]:
    """Import TensorFlow (before `ready`); then the j-th case of this mode, for each j given."""
    tf = _tf()
    tf.config.experimental.enable_op_determinism()
    return lambda j: run_case(tf, cases[index[j]], mode)


def worker_main(argv: list[str] | None, list_units, plan, run) -> int:
    """The command line every CPU sweep worker shares: list its units; or plan units, or run one
    mode's cases, for each index the driver writes on stdin (kb/sweep/pool.py), one at a time."""
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("list", "plan", "run"))
    ap.add_argument("--only", default="")
    ap.add_argument("--units")
    ap.add_argument("--cases")
    ap.add_argument("--index")
    ap.add_argument("--mode")
    a = ap.parse_args(argv)
    only = [x for x in a.only.split(",") if x] or None
    if a.what == "list":
        emit({"units": list_units(only)})
        return 0
    if a.what == "plan":
        with open(a.units, encoding="utf-8") as handle:
            step = plan(json.load(handle))
    else:
        with open(a.cases, encoding="utf-8") as handle, open(a.index, encoding="utf-8") as index:
            step = run(json.load(handle), json.load(index), a.mode)
    emit({"ready": True})
    for line in sys.stdin:
        if not line.strip():
            continue
        i = int(line)
        emit({"start": i})
        result(i, {"i": i, **step(i)})
    return 0


def main(argv: list[str] | None = None) -> int:
    return worker_main(argv, list_units, plan, run)


if __name__ == "__main__":
    sys.exit(main())
