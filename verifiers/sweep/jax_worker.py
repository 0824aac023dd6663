"""JAX sweep worker: one warm interpreter in ONE XLA mode, measuring units read from stdin.

XLA reads XLA_FLAGS when its backend starts, so kb/verify/sweep.py starts separate workers for
each mode (default, --xla_gpu_deterministic_ops, --xla_gpu_exclude_nondeterministic_ops).

The catalog: every public function of jax.numpy, jax.lax and jax.nn that traces (jax.eval_shape,
no compile) as a one-array or two-array function on a float32 matrix ("unary"/"binary" units),
plus hand-built units for what needs more than that: scatters and segment reductions with many
repeated indices, gathers (their gradient is a scatter-add), pooling with ties, convolutions,
matrix products, scans and sorts along an axis, attention. Every array is an ARGUMENT of the
jitted function: a closure over an array becomes a constant that XLA may fold on the host, so
the GPU kernel would never run.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import re
import statistics
import sys
import time
import traceback

from kb.case import Case
from kb.protocol import emit

ROWS, COLS = 2048, 1024  # 2M elements: many blocks per reduction, scan and scatter
TIES = re.compile(r"(max|min|sort|top_k|argm|median|percentile|quantile|partition|unique|sign|round|floor|ceil|clip|relu|reduce_window)")
SKIP = {"array", "asarray", "copy", "zeros_like", "ones_like", "empty_like", "full_like", "shape", "size", "ndim",
        "result_type", "promote_types", "can_cast", "iscomplexobj", "isrealobj", "isscalar", "issubdtype", "dtype",
        "finfo", "iinfo", "from_dlpack", "frombuffer", "fromfunction", "fromiter", "fromstring", "load", "save",
        "savez", "printoptions", "set_printoptions", "get_printoptions", "vectorize", "frompyfunc", "piecewise",
        "apply_along_axis", "apply_over_axes", "broadcast_shapes", "isdtype", "astype", "block",
        "stop_gradient", "optimization_barrier", "device_put", "with_sharding_constraint", "pvary", "pcast",
        "create_token", "after_all", "infeed", "outfeed", "rng_uniform", "rng_bit_generator", "iota", "broadcasted_iota",
        "full", "zeros", "ones", "empty", "eye", "identity", "arange", "linspace", "logspace", "geomspace", "tri",
        "indices", "mask_indices", "diag_indices", "tril_indices", "triu_indices", "ogrid", "mgrid",
        "composite", "custom_root", "custom_linear_solve", "fori_loop", "while_loop", "scan", "map", "cond", "switch",
        "select_n", "platform_dependent", "axis_index", "axis_size", "psum", "pmean", "pmax", "pmin", "ppermute",
        "all_gather", "all_to_all", "psum_scatter", "pshuffle", "pswapaxes", "pbroadcast", "ragged_all_to_all",
        "initializers", "tracer", "cache", "array_repr", "array_str", "show_config", "debug_print"}
# Functions whose cost grows with the product of their inputs' sizes (set membership, polynomial
# evaluation of a 2M-degree polynomial, outer products; select, whose first argument is a list of conditions, one
# per row: 2048 rows ran past 150 s in every mode at 2026-11-28T035906Z): a 64x64 input instead.
QUADRATIC = re.compile(r"^(isin|in1d|polyval|polymul|polydiv|polyadd|polysub|polyfit|polyint|polyder|convolve|correlate|"
                       r"outer|kron|vander|intersect1d|setdiff1d|setxor1d|union1d|tensordot|inner|dot|vdot|matmul|cross|"
                       r"einsum|kronecker|cdist|histogram2d|histogramdd|lstsq|solve|inv|pinv|det|slogdet|svd|eig|eigh|qr|cholesky|select)$")
# Functions whose gradient scatters into every input position (sort's and median's vjp: a scatter-add of the
# cotangent through the sorting permutation): under --xla_gpu_deterministic_ops that scatter ran past 150 s a unit on
# 2M values (data/sweeps/h200-x1-14c028f6/2026-11-28T035906Z-jax.json), so 256 x 256 values, still with ties.
SMALL = re.compile(r"^(sort|median|nanmedian)$")
SMALL_SHAPE = (256, 256)
NAMESPACES = (("jax.numpy", "jnp"), ("jax.lax", "lax"), ("jax.nn", "nn"))




def message(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:1500]


class Worker:
    def __init__(self, args):
        import jax
        import jax.numpy as jnp
        import numpy as np

        self.jax, self.jnp, self.np = jax, jnp, np
        self.args = args
        if args.device == "cuda":
            try:
                devs = jax.devices("gpu")
            except RuntimeError as exc:
                raise RuntimeError(f"JAX has no GPU backend here: {exc}") from None
            self.dev = devs[0]
        else:
            self.dev = jax.devices("cpu")[0]
        self.rng = np.random.default_rng(0)
        self.branch: dict = {}
        self.branch_dtypes: dict = {}
        if args.branches:  # the branch units (verifiers/sweep/jax_branches.py): int64 indices and float64 need x64
            from verifiers.sweep.jax_branches import units

            jax.config.update("jax_enable_x64", True)
            self.branch, self.branch_dtypes = units(self)
            self.special = {}
        else:
            if "float64" in args.dtypes.split(","):  # float64 arrays need x64 (else they are float32)
                jax.config.update("jax_enable_x64", True)
            self.special = self._special()
        self.dtypes = tuple(d for d in args.dtypes.split(",") if d) or ("float32", "bfloat16")

    # --- catalog -----------------------------------------------------------------------

    def modules(self):
        import importlib

        return [(prefix, importlib.import_module(prefix)) for prefix, _ in NAMESPACES]

    def catalog(self) -> list[str]:
        jax, jnp = self.jax, self.jnp
        if self.branch:
            return list(self.branch)
        units = []
        x = jax.ShapeDtypeStruct((8, 16), jnp.float32)
        for prefix, mod in self.modules():
            for name in sorted(dir(mod)):
                if name.startswith("_") or name in SKIP:
                    continue
                fn = getattr(mod, name)
                if not callable(fn) or isinstance(fn, type):
                    continue
                for kind, shapes in (("unary", (x,)), ("binary", (x, x))):
                    try:
                        out = jax.eval_shape(fn, *shapes)
                    except Exception:
                        continue
                    leaves = jax.tree_util.tree_leaves(out)
                    if leaves and all(hasattr(o, "shape") for o in leaves):
                        units.append(f"{prefix}.{name}|{kind}")
                        break
        # the hand-built units first: they hold the scatters and scans most likely to differ
        return [f"{name}|special" for name in self.special] + units

    # --- inputs ------------------------------------------------------------------------

    def floats(self, shape, dtype, ties=False, scale=True):
        np = self.np
        rng = np.random.default_rng(abs(hash(shape)) % (2**32))
        x = rng.standard_normal(shape).astype(np.float32)
        if ties:
            x = np.round(x * 2)
        elif scale:
            x = x * np.exp2(rng.integers(-6, 7, shape)).astype(np.float32)
        return self.jax.device_put(self.jnp.asarray(x, dtype=dtype), self.dev)

    def ints(self, shape, high):
        np = self.np
        rng = np.random.default_rng(7)
        return self.jax.device_put(self.jnp.asarray(rng.integers(0, high, shape).astype(np.int32)), self.dev)

    def _special(self) -> dict:
        """name -> builder(dtype) -> Case (kb/case.py); each is written below as builder(dtype)
        returning (fn, float_args, other_args, call_facts) and made a Case by jax_branches.cased."""
        from verifiers.sweep.jax_branches import cased

        jax, jnp = self.jax, self.jnp
        lax = jax.lax
        N, SLOTS = 2_000_000, 1024
        S = {}

        def scatter(method):
            def build(dt):
                base = self.floats((SLOTS,), dt)
                vals = self.floats((N,), dt)
                idx = self.ints((N,), SLOTS)
                return (lambda b, v, i: getattr(b.at[i], method)(v)), [base, vals], [idx], {
                    "indices.repeats": N // SLOTS, "input.ndim": 1, "slots": SLOTS}
            return build

        for m in ("add", "mul", "min", "max", "set"):
            S[f"jax.numpy.ndarray.at.{m}"] = scatter(m)

        def segment(name):
            def build(dt):
                data = self.floats((N,), dt, ties=name in ("segment_max", "segment_min"))
                ids = self.ints((N,), SLOTS)
                fn = getattr(jax.ops, name)
                return (lambda d, i: fn(d, i, num_segments=SLOTS)), [data], [ids], {
                    "num_segments": SLOTS, "indices_are_sorted": False, "input.ndim": 1}
            return build

        for name in ("segment_sum", "segment_max", "segment_min", "segment_prod"):
            S[f"jax.ops.{name}"] = segment(name)

        def take(dt):
            table = self.floats((SLOTS, 256), dt)
            idx = self.ints((8192,), SLOTS)
            return (lambda t, i: jnp.take(t, i, axis=0)), [table], [idx], {"axis": 0, "input.ndim": 2, "indices.repeats": 8}
        S["jax.numpy.take"] = take

        def take_along(dt):
            x = self.floats((ROWS, COLS), dt)
            idx = self.ints((ROWS, COLS), 8)
            return (lambda a, i: jnp.take_along_axis(a, i, axis=1)), [x], [idx], {"axis": 1, "input.ndim": 2}
        S["jax.numpy.take_along_axis"] = take_along

        def bincount(dt):
            idx = self.ints((N,), SLOTS)
            w = self.floats((N,), dt)
            return (lambda wt, i: jnp.bincount(i, weights=wt, length=SLOTS)), [w], [idx], {"weights": "float", "length": SLOTS}
        S["jax.numpy.bincount"] = bincount

        def histogram(dt):
            x = self.floats((N,), dt, scale=False)
            return (lambda a: jnp.histogram(a, bins=64, range=(-4.0, 4.0))[0]), [x], [], {"bins": 64, "input.ndim": 1}
        S["jax.numpy.histogram"] = histogram

        def conv(dt):
            x = self.floats((256, 3, 32, 32), dt)
            w = self.floats((64, 3, 3, 3), dt)
            return (lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME")), [x, w], [], {
                "window_strides": [1, 1], "padding": "SAME", "input.ndim": 4}
        S["jax.lax.conv_general_dilated"] = conv

        def pool(op_name):
            def build(dt):
                x = self.floats((32, 64, 64, 32), dt, ties=True)
                init = -jnp.inf if op_name == "max" else 0.0
                comp = lax.max if op_name == "max" else lax.add
                return (lambda a: lax.reduce_window(a, jnp.asarray(init, a.dtype), comp, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")), [x], [], {
                    "computation": op_name, "window_dimensions": [1, 3, 3, 1], "window_strides": [1, 2, 2, 1], "input.ndim": 4}
            return build
        S["jax.lax.reduce_window.max"] = pool("max")
        S["jax.lax.reduce_window.add"] = pool("add")

        def mm(dt):
            a, b = self.floats((2048, 1024), dt), self.floats((1024, 1024), dt)
            return (lambda x, y: jnp.matmul(x, y)), [a, b], [], {"input.ndim": 2}
        S["jax.numpy.matmul"] = mm

        def dot_general(dt):
            a, b = self.floats((16, 256, 512), dt), self.floats((16, 512, 256), dt)
            return (lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))), [a, b], [], {"batch_dims": 1, "input.ndim": 3}
        S["jax.lax.dot_general"] = dot_general

        def einsum(dt):
            a, b = self.floats((64, 512, 64), dt), self.floats((64, 64, 512), dt)
            return (lambda x, y: jnp.einsum("bij,bjk->bik", x, y)), [a, b], [], {"subscripts": "bij,bjk->bik", "input.ndim": 3}
        S["jax.numpy.einsum"] = einsum

        def axis_fn(name, fn, axis, ties=False, shape=(ROWS, COLS)):
            def build(dt):
                x = self.floats(shape, dt, ties=ties)
                return (lambda a: fn(a, axis=axis)), [x], [], {"axis": axis, "input.ndim": len(shape)}
            S[f"{name}.axis{axis}"] = build

        for name, fn in (("jax.numpy.sum", jnp.sum), ("jax.numpy.mean", jnp.mean), ("jax.numpy.prod", jnp.prod),
                         ("jax.numpy.var", jnp.var), ("jax.numpy.std", jnp.std), ("jax.numpy.cumsum", jnp.cumsum),
                         ("jax.numpy.cumprod", jnp.cumprod), ("jax.numpy.max", jnp.max), ("jax.numpy.argmax", jnp.argmax),
                         ("jax.numpy.sort", jnp.sort), ("jax.numpy.argsort", jnp.argsort),
                         ("jax.nn.softmax", jax.nn.softmax), ("jax.nn.logsumexp", jax.nn.logsumexp),
                         ("jax.numpy.linalg.norm", jnp.linalg.norm)):
            for axis in (0, 1):
                small = SMALL.match(name.rsplit(".", 1)[1])
                axis_fn(name, fn, axis, ties=bool(TIES.search(name)), shape=SMALL_SHAPE if small else (ROWS, COLS))
        for name, fn in (("jax.lax.cumsum", lax.cumsum), ("jax.lax.cumprod", lax.cumprod),
                         ("jax.lax.cumlogsumexp", lax.cumlogsumexp), ("jax.lax.cummax", lax.cummax)):
            axis_fn(name, fn, 0, shape=(4_000_000,))

        def assoc(dt):
            x = self.floats((4_000_000,), dt)
            return (lambda a: lax.associative_scan(jnp.add, a)), [x], [], {"fn": "add", "input.ndim": 1}
        S["jax.lax.associative_scan"] = assoc

        def top_k(dt):
            x = self.floats((ROWS, COLS), dt, ties=True)
            return (lambda a: lax.top_k(a, 16)[0]), [x], [], {"k": 16, "input.ndim": 2}
        S["jax.lax.top_k"] = top_k

        def attention(dt):
            q, k, v = (self.floats((8, 1024, 8, 64), dt, scale=False) for _ in range(3))
            return (lambda a, b, c: jax.nn.dot_product_attention(a, b, c)), [q, k, v], [], {"input.ndim": 4}
        S["jax.nn.dot_product_attention"] = attention

        def interp(dt):
            xp = self.jnp.sort(self.floats((4096,), dt, scale=False))
            fp = self.floats((4096,), dt)
            x = self.floats((N,), dt, scale=False)
            return (lambda a, b, c: jnp.interp(a, b, c)), [x, xp, fp], [], {"input.ndim": 1}
        S["jax.numpy.interp"] = interp

        def embedding_grad(dt):
            table = self.floats((SLOTS, 512), dt)
            idx = self.ints((16384,), SLOTS)
            return (lambda t, i: t[i]), [table], [idx], {"indexing": "x[i]", "input.ndim": 2, "indices.repeats": 16}
        S["jax.numpy.ndarray.__getitem__"] = embedding_grad
        # an axis unit's name says its axis (jax.numpy.sum.axis0), the case's op is the function
        return {name: cased(re.sub(r"\.axis\d+$", "", name), build, "special") for name, build in S.items()}

    # --- measuring ---------------------------------------------------------------------

    def digest(self, out) -> tuple[str, list]:
        np = self.np
        leaves = [np.asarray(o) for o in self.jax.tree_util.tree_leaves(out)]
        h = hashlib.sha256()
        for a in leaves:
            h.update(str(a.shape).encode() + str(a.dtype).encode())
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest(), leaves

    def max_abs(self, a, b) -> float:
        np = self.np
        worst = 0.0
        for x, y in zip(a, b):
            if x.shape != y.shape:
                return math.inf
            if x.size == 0 or x.dtype == bool:
                if x.dtype == bool and not np.array_equal(x, y):
                    worst = max(worst, 1.0)
                continue
            x64, y64 = np.atleast_1d(x.astype(np.float64)), np.atleast_1d(y.astype(np.float64))
            d = np.abs(x64 - y64)
            d[np.isnan(x64) & np.isnan(y64)] = 0
            d = np.nan_to_num(d, nan=math.inf, posinf=math.inf)
            worst = max(worst, float(d.max()))
        return worst

    def measure(self, fn, args, runs) -> dict:
        jax = self.jax
        entry = {"runs": runs, "distinct": None, "max_abs": None, "median_ms": None, "raised": None}
        try:
            jitted = jax.jit(fn)
            jax.block_until_ready(jitted(*args))
            hashes, first, worst, times = set(), None, 0.0, []
            for _ in range(runs):
                t0 = time.perf_counter()
                out = jax.block_until_ready(jitted(*args))
                times.append((time.perf_counter() - t0) * 1000)
                h, leaves = self.digest(out)
                hashes.add(h)
                if first is None:
                    first = leaves
                else:
                    worst = max(worst, self.max_abs(first, leaves))
            entry.update(distinct=len(hashes), max_abs=None if math.isinf(worst) else worst,
                         median_ms=round(statistics.median(times), 4))
        except Exception as exc:
            entry["raised"] = message(exc)
        return entry

    def build(self, unit: str, dt) -> Case:
        """The unit's case in dtype `dt`, its inputs made."""
        import importlib

        if unit in self.branch:
            return self.branch[unit](dt)
        name, kind = unit.split("|")
        if kind == "special":
            return self.special[name](dt)
        mod_name, attr = name.rsplit(".", 1)
        fn = getattr(importlib.import_module(mod_name), attr)
        ties = bool(TIES.search(attr))
        shape = (64, 64) if QUADRATIC.match(attr) else SMALL_SHAPE if SMALL.match(attr) else (ROWS, COLS)
        x = self.floats(shape, dt, ties=ties)
        facts = {"input.ndim": 2, "inputs.values": "ties" if ties else "mixed magnitude"}
        if kind == "unary":
            return Case(name, facts, build=lambda: fn, variant=kind, leaves=(x,), numel=int(x.size))
        y = self.floats(shape, dt, ties=ties, scale=True)
        y = self.jnp.flip(y, 0)
        return Case(name, facts, build=lambda: fn, variant=kind, leaves=(x, y), numel=int(x.size))

    def run_unit(self, unit: str) -> None:
        jax, jnp = self.jax, self.jnp
        mode = self.args.mode
        want = self.branch_dtypes.get(unit, self.dtypes)
        if unit in self.branch_dtypes and self.args.dtypes:  # --dtypes narrows a branch unit to those it takes
            want = tuple(d for d in want if d in self.args.dtypes.split(","))
        for dt in [getattr(jnp, d) for d in want]:
            dname = jnp.dtype(dt).name
            base = {"op": unit.split("|")[0], "variant": unit.split("|")[1], "dtype": dname, "call": {}, "numel": None,
                    "modes": {}, "class": None, "error": None, "fixes": []}
            if unit in self.branch:
                base["branch"] = unit
            try:
                case = self.build(unit, dt)
                assert case.build is not None  # every unit's case is built
                fn = case.build()
            except Exception as exc:
                emit({"case": {**base, "case": f"{unit}|{dname}|forward", "pass": "forward",
                               "error": "building inputs: " + message(exc)}})
                continue
            fargs, oargs = list(case.leaves), list(case.args)
            facts = dict(case.call, **{"input.dtype": dname, "input.dtype_kind": "floating"})
            numel = case.numel
            nf = len(fargs)

            def fwd(*a, fn=fn):
                return fn(*a)

            entry = self.measure(fwd, [*fargs, *oargs], self.args.runs)
            emit({"case": {**base, "case": f"{unit}|{dname}|forward", "pass": "forward", "call": facts, "numel": numel,
                           "modes": {mode: entry}}})
            # backward: the vjp of a fixed random cotangent w.r.t. the float arguments
            try:
                out_shape = jax.eval_shape(fwd, *fargs, *oargs)
                if not hasattr(out_shape, "shape") or not jnp.issubdtype(out_shape.dtype, jnp.floating):
                    continue

                def bwd(*a, fn=fn, nf=nf):
                    floats, rest, ct = a[:nf], a[nf:-1], a[-1]
                    _, pull = jax.vjp(lambda *f: fn(*f, *rest), *floats)
                    return pull(ct)

                ct = self.floats(tuple(out_shape.shape), out_shape.dtype, scale=False)
                jax.eval_shape(bwd, *fargs, *oargs, ct)
            except Exception:
                continue  # not differentiable in its float arguments: forward only
            entry = self.measure(bwd, [*fargs, *oargs, ct], self.args.runs)
            emit({"case": {**base, "case": f"{unit}|{dname}|backward", "pass": "backward", "call": facts, "numel": numel,
                           "modes": {mode: entry}}})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--mode", default="default", help="the XLA mode this process was started in (XLA_FLAGS)")
    ap.add_argument("--planted", action="store_true", help="accepted for symmetry; JAX has no planted units")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--branches", action="store_true", help="the branch units (jax_branches.py) instead of the catalog")
    ap.add_argument("--dtypes", default="", help="the catalog's dtypes, comma-separated (default float32,bfloat16; branch units their own)")
    args = ap.parse_args(argv)
    if args.device == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"
    try:
        worker = Worker(args)
    except Exception as exc:
        emit({"ready": False, "error": message(exc)})
        return 1
    if args.list:
        emit({"units": worker.catalog()})
        return 0
    emit({"ready": True})
    for line in sys.stdin:
        unit = line.strip()
        if not unit:
            continue
        emit({"start": unit})
        try:
            worker.run_unit(unit)
        except Exception as exc:
            emit({"case": {"op": unit.split("|")[0], "variant": "", "case": f"{unit}|unit", "pass": "unit", "dtype": None,
                           "call": {}, "numel": None, "modes": {}, "class": None,
                           "error": message(exc) + " | " + traceback.format_exc(limit=2)[-400:], "fixes": []}})
        emit({"done": unit})
    return 0


if __name__ == "__main__":
    sys.exit(main())
