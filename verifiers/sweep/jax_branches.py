"""JAX branch units: one lowering/XLA branch of a public function per unit, with inputs BUILT TO COLLIDE.

The JAX sweep's catalog units call each function on one or two float32 matrices. The branches
that real code takes are chosen by other things: the indexed-update method and its `mode`, sorted
or unsorted segment ids, int32 or int64 indices (with x64 on), the window and stride of a
pooling (overlapping windows make the backward a select-and-scatter), an attention
`implementation`, a convolution's feature groups or input dilation, a resize's method, a scan's
length, a decomposition's size (cuSOLVER picks Jacobi or QR by size). Each unit here is one of
them, with inputs where eight or more addends meet at one target.

A unit is written as name -> builder(dtype) -> (fn, float_args, other_args, facts), the form of
jax_worker's special units, and handed to the worker as builder(dtype) -> Case (kb/case.py, by
`cased`); the worker (`--branches`) runs each forward and through `jax.vjp`,
in each XLA mode. `DTYPES` says which dtypes a unit takes (float64 needs x64, which the worker
turns on in branch mode).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kb.case import Case

F16, BF16, F32, F64 = "float16", "bfloat16", "float32", "float64"
ALL = (F32, BF16, F16, F64)


def cased(op: str, builder: Callable[[Any], tuple], variant: str | None = None) -> Callable[[Any], Case]:
    """builder(dtype) -> (fn, float_args, other_args, facts), the form the units are written in, as
    builder(dtype) -> Case: the worker reads only Case. The float arguments are the case's leaves
    (the backward differentiates them), the others its args; `build()` returns fn, which is called
    with both (every array an argument of the jitted function, never a constant it closes over)."""
    def build(dt: Any) -> Case:
        fn, floats, others, facts = builder(dt)
        return Case(op, facts, passes="both", build=lambda: fn, variant=variant, leaves=tuple(floats), args=tuple(others),
                    numel=int(floats[0].size) if floats else None)
    return build


def units(w) -> tuple[dict, dict]:
    """(unit name -> builder, unit name -> dtypes) for a jax_worker `w` (its floats/ints helpers)."""
    import numpy as np

    jax, jnp = w.jax, w.jnp
    lax = jax.lax
    S: dict = {}
    D: dict = {}
    # 256K updates into 8 slots (32K addends each): on the GPU's default path half-precision atomics
    # retry on contention, and 2M updates into 8 slots ran past the unit's 90 s (the first H100 run)
    N, SLOTS = 1 << 18, 8

    def ints(shape, high, dtype="int32", sort=False):
        rng = np.random.default_rng(7)
        a = rng.integers(0, high, shape).astype(dtype)
        if sort:
            a = np.sort(a, axis=None).reshape(shape)
        return jax.device_put(jnp.asarray(a), w.dev)

    def idx_facts(name, arr):
        return {f"{name}.dtype": str(arr.dtype), f"{name}.ndim": arr.ndim}

    def add(name, builder, dtypes=ALL):
        S[name] = cased(name.split("|")[0], builder, name.split("|")[1])
        D[name] = dtypes

    # --- indexed updates: x.at[idx].<method>(v), 8 slots ----------------------------------
    for method in ("add", "multiply", "min", "max", "set"):
        for idt in ("int32", "int64"):
            for mode in (None, "drop", "clip"):
                def b1(dt, method=method, idt=idt, mode=mode):
                    base, vals, idx = w.floats((SLOTS,), dt), w.floats((N,), dt), ints((N,), SLOTS, idt)
                    if method == "multiply":
                        vals = (1 + vals * 1e-3).astype(dt)
                    kw = {} if mode is None else {"mode": mode}
                    return (lambda x, v, i: getattr(x.at[i], method)(v, **kw)), [base, vals], [idx], {
                        "at.method": method, "unique_indices": False, "mode": mode, **idx_facts("indices", idx),
                        "input.ndim": 1, "inputs.collide": f"{N} updates into {SLOTS} slots", "inputs.addends": N // SLOTS}
                add(f"jax.numpy.ndarray.at.{method}|b:1d;indices={idt};mode={mode}", b1)
        def rows(dt, method=method):
            base, vals, idx = w.floats((SLOTS, 256), dt), w.floats((N // 256, 256), dt), ints((N // 256,), SLOTS)
            return (lambda x, v, i: getattr(x.at[i], method)(v)), [base, vals], [idx], {
                "at.method": method, "unique_indices": False, **idx_facts("indices", idx), "input.ndim": 2,
                "inputs.collide": f"{N // 256} rows into {SLOTS}", "inputs.addends": N // 256 // SLOTS}
        add(f"jax.numpy.ndarray.at.{method}|b:2d-rows", rows)
        def sorted_rows(dt, method=method):
            base, vals, idx = w.floats((SLOTS,), dt), w.floats((N,), dt), ints((N,), SLOTS, sort=True)
            return (lambda x, v, i: getattr(x.at[i], method)(v, indices_are_sorted=True)), [base, vals], [idx], {
                "at.method": method, "unique_indices": False, "indices_are_sorted": True, **idx_facts("indices", idx),
                "input.ndim": 1, "inputs.collide": f"{N} sorted updates into {SLOTS} slots", "inputs.addends": N // SLOTS}
        add(f"jax.numpy.ndarray.at.{method}|b:1d;indices_are_sorted=True", sorted_rows)

    def get_bwd(dt):
        table, idx = w.floats((SLOTS, 256), dt), ints((1 << 14,), SLOTS)
        return (lambda t, i: t.at[i].get()), [table], [idx], {"at.method": "get", "unique_indices": False,
                                                              **idx_facts("indices", idx), "input.ndim": 2,
                                                              "inputs.collide": "16384 reads of 8 rows: the gradient adds 2048 per row",
                                                              "inputs.addends": 2048}
    add("jax.numpy.ndarray.at.get|b:gradient", get_bwd)

    # --- segment reductions ----------------------------------------------------------------
    for name in ("segment_sum", "segment_prod", "segment_max", "segment_min"):
        fn = getattr(jax.ops, name)
        for srt in (False, True):
            for idt in ("int32", "int64"):
                def b2(dt, fn=fn, srt=srt, idt=idt, name=name):
                    data = w.floats((N,), dt, ties=name in ("segment_max", "segment_min"))
                    if name == "segment_prod":
                        data = (1 + data * 1e-3).astype(dt)
                    ids = ints((N,), SLOTS, idt, sort=srt)
                    return (lambda d, i: fn(d, i, num_segments=SLOTS, indices_are_sorted=srt)), [data], [ids], {
                        "num_segments": SLOTS, "indices_are_sorted": srt, **idx_facts("segment_ids", ids), "input.ndim": 1,
                        "inputs.collide": f"{N} values into {SLOTS} segments", "inputs.addends": N // SLOTS}
                add(f"jax.ops.{name}|b:sorted={srt};segment_ids={idt}", b2)

    # --- gathers whose gradient is a scatter-add ------------------------------------------
    for mode in (None, "clip", "fill"):
        def b3(dt, mode=mode):
            table, idx = w.floats((SLOTS, 256), dt), ints((1 << 14,), SLOTS)
            kw = {} if mode is None else {"mode": mode}
            return (lambda t, i: jnp.take(t, i, axis=0, **kw)), [table], [idx], {"axis": 0, "mode": mode, **idx_facts("indices", idx),
                                                                               "input.ndim": 2, "inputs.addends": 2048,
                                                                               "inputs.collide": "16384 reads of 8 rows"}
        add(f"jax.numpy.take|b:mode={mode}", b3)
    for idt in ("int32", "int64"):
        def b4(dt, idt=idt):
            x, idx = w.floats((1024, 1024), dt), ints((1024, 1024), 8, idt)
            return (lambda a, i: jnp.take_along_axis(a, i, axis=1)), [x], [idx], {"axis": 1, **idx_facts("indices", idx),
                                                                                "input.ndim": 2, "inputs.addends": 128,
                                                                                "inputs.collide": "each row read 1024 times from 8 columns"}
        add(f"jax.numpy.take_along_axis|b:indices={idt}", b4)

    def ufunc_at(dt):
        base, vals, idx = w.floats((SLOTS,), dt), w.floats((N,), dt), ints((N,), SLOTS)
        return (lambda x, v, i: jnp.add.at(x, i, v, inplace=False)), [base, vals], [idx], {
            **idx_facts("indices", idx), "input.ndim": 1, "inputs.addends": N // SLOTS, "inputs.collide": f"{N} into {SLOTS}"}
    add("jax.numpy.add.at|b:8-slots", ufunc_at)

    def bincount(dt):
        idx, wt = ints((N,), SLOTS), w.floats((N,), dt)
        return (lambda v, i: jnp.bincount(i, weights=v, length=SLOTS)), [wt], [idx], {"weights": "float", "length": SLOTS,
                                                                                      "inputs.addends": N // SLOTS,
                                                                                      "inputs.collide": f"{N} weights into {SLOTS} bins"}
    add("jax.numpy.bincount|b:weights;8-bins", bincount)

    def hist(dt):
        x, wt = w.floats((N,), dt, scale=False), w.floats((N,), dt)
        return (lambda a, v: jnp.histogram(a, bins=8, range=(-3.0, 3.0), weights=v)[0]), [x, wt], [], {
            "bins": 8, "weights": "float", "inputs.addends": N // 8, "inputs.collide": f"{N} weights into 8 bins"}
    add("jax.numpy.histogram|b:weights;8-bins", hist)

    def interp(dt):
        xp = jnp.linspace(-1.0, 1.0, 16).astype(dt)
        fp = w.floats((16,), dt)
        # 64K points, not N: with N, the default mode's worker ran past 90 s (2026-11-28T035909Z-jax-branches.json)
        x = (w.floats((1 << 16,), dt, scale=False) * 0.01).astype(dt)
        return (lambda a, b, c: jnp.interp(a, b, c)), [x, xp, fp], [], {"inputs.addends": (1 << 16) // 2,
                                                                        "inputs.collide": "every point within 0.03 of 0: the gradient of fp adds into 2 entries"}
    add("jax.numpy.interp|b:converge", interp)

    # --- pooling: overlapping windows with peaks (the backward is a select-and-scatter) -----
    for op_name in ("max", "add"):
        for d in (1, 2, 3):
            def b5(dt, op_name=op_name, d=d):
                side = {1: 1 << 16, 2: 256, 3: 32}[d]
                k = {1: 9, 2: 5, 3: 3}[d]
                shape = (8,) + (side,) * d + (16,)
                x = np.random.default_rng(3).random(shape).astype(np.float32) * 0.01
                sl = (slice(None),) + (slice(k // 2, None, k),) * d + (slice(None),)
                x[sl] = 10.0
                xa = jax.device_put(jnp.asarray(x, dtype=dt), w.dev)
                # a concrete init value (numpy, not traced): lax recognises the monoid and gives a gradient
                init = np.array(-np.inf if op_name == "max" else 0, dtype=jnp.dtype(dt))
                comp = lax.max if op_name == "max" else lax.add
                win, st = (1,) + (k,) * d + (1,), (1,) * (d + 2)
                return (lambda a: lax.reduce_window(a, init, comp, win, st, "SAME")), [xa], [], {
                    "computation": op_name, "window_dimensions": list(win), "window_strides": list(st), "input.ndim": d + 2,
                    "inputs.addends": k ** d, "inputs.collide": f"window {k}, stride 1: each peak is the maximum of {k ** d} windows"}
            add(f"jax.lax.reduce_window.{op_name}|b:{d}d;overlap-peaks", b5)

    # --- resize: upsampling 8x -------------------------------------------------------------
    for method in ("nearest", "linear", "cubic", "lanczos3", "lanczos5"):
        def b6(dt, method=method):
            x = w.floats((8, 32, 32, 16), dt)
            return (lambda a: jax.image.resize(a, (8, 256, 256, 16), method)), [x], [], {
                "method": method, "antialias": True, "input.ndim": 4, "inputs.addends": 64,
                "inputs.collide": "output 8x the input per spatial dim"}
        add(f"jax.image.resize|b:method={method};upsample", b6)
        def dn(dt, method=method):
            x = w.floats((8, 256, 256, 16), dt)
            return (lambda a: jax.image.resize(a, (8, 64, 64, 16), method, antialias=True)), [x], [], {
                "method": method, "antialias": True, "input.ndim": 4, "inputs.addends": 16,
                "inputs.collide": "4x antialiased downsampling: overlapping kernels"}
        add(f"jax.image.resize|b:method={method};downsample", dn)

    # --- convolution: groups, dilation, layouts -------------------------------------------
    for d in (1, 2, 3):
        for groups in (1, 32):
            for lhs_dil in (1, 2):
                def b7(dt, d=d, groups=groups, lhs_dil=lhs_dil):
                    side = {1: 4096, 2: 64, 3: 16}[d]
                    x = w.floats((16, 32) + (side,) * d, dt)
                    k = w.floats((32, 32 // groups) + (3,) * d, dt)
                    return (lambda a, f: lax.conv_general_dilated(a, f, (1,) * d, [(1, 1)] * d, lhs_dilation=(lhs_dil,) * d,
                                                                  feature_group_count=groups)), [x, k], [], {
                        "feature_group_count": groups, "lhs_dilation": [lhs_dil] * d, "input.ndim": d + 2,
                        "inputs.addends": 16 * side ** d, "inputs.collide": "the kernel gradient sums over batch and positions"}
                add(f"jax.lax.conv_general_dilated|b:{d}d;groups={groups};lhs_dilation={lhs_dil}", b7, ALL)
    def nhwc(dt):
        x, k = w.floats((16, 64, 64, 32), dt), w.floats((3, 3, 32, 32), dt)
        return (lambda a, f: lax.conv_general_dilated(a, f, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))), [x, k], [], {
            "dimension_numbers": "NHWC,HWIO,NHWC", "input.ndim": 4, "inputs.addends": 65536,
            "inputs.collide": "the kernel gradient sums over batch and positions"}
    add("jax.lax.conv_general_dilated|b:2d;NHWC", nhwc, ALL)

    # --- attention implementations ----------------------------------------------------------
    for impl in (None, "xla", "cudnn"):
        for causal in (False, True):
            def b8(dt, impl=impl, causal=causal):
                q, k, v = (w.floats((4, 2048, 8, 64), dt, scale=False) for _ in range(3))
                return (lambda a, bb, c: jax.nn.dot_product_attention(a, bb, c, is_causal=causal, implementation=impl)), [q, k, v], [], {
                    "implementation": impl, "is_causal": causal, "input.ndim": 4, "inputs.addends": 2048,
                    "inputs.collide": "2048 keys per query"}
            add(f"jax.nn.dot_product_attention|b:implementation={impl};is_causal={causal}", b8,
                (BF16, F16, F32) if impl == "cudnn" else ALL)  # cuDNN takes no float64 (jax-0.11.reasons.yaml)

    # --- sorts and selections with ties -------------------------------------------------------
    for name, fn, kw in (("jax.numpy.sort", lambda a: jnp.sort(a, axis=1, stable=False), {"axis": 1, "stable": False}),
                         ("jax.numpy.argsort", lambda a: jnp.argsort(a, axis=1, stable=False), {"axis": 1, "stable": False}),
                         ("jax.numpy.argsort", lambda a: jnp.argsort(a, axis=1, stable=True), {"axis": 1, "stable": True}),
                         ("jax.lax.top_k", lambda a: lax.top_k(a, 16), {"k": 16}),
                         ("jax.numpy.argmax", lambda a: jnp.argmax(a, axis=1), {"axis": 1}),
                         ("jax.numpy.unique", lambda a: jnp.unique(a.ravel(), size=8, fill_value=0), {"size": 8})):
        def b9(dt, fn=fn, kw=kw, name=name):
            # sort's rows: 64, not 2048: its gradient's scatter ran past 90 s under --xla_gpu_deterministic_ops
            # (2026-11-28T035909Z-jax-branches.json); each row still holds 1024 rounded values
            x = w.floats((64 if name == "jax.numpy.sort" else 2048, 1024), dt, ties=True)
            return fn, [x], [], {**kw, "input.ndim": 2, "inputs.addends": 256, "inputs.collide": "rounded values: hundreds of ties per row"}
        add(f"{name}|b:ties;" + ";".join(f"{k}={v}" for k, v in kw.items()), b9)

    # --- scans: one long scan and 2-D scans, reverse -------------------------------------
    for name, fn in (("jax.numpy.cumsum", jnp.cumsum), ("jax.lax.cumsum", lax.cumsum), ("jax.lax.cumlogsumexp", lax.cumlogsumexp),
                     ("jax.lax.cumprod", lax.cumprod), ("jax.lax.cummax", lax.cummax)):
        for shape, axis, rev in (((1 << 22,), 0, False), ((1 << 22,), 0, True), ((2048, 2048), 1, False), ((2048, 2048), 0, False)):
            if name == "jax.numpy.cumsum" and rev:
                continue
            def b10(dt, fn=fn, shape=shape, axis=axis, rev=rev, name=name):
                x = w.floats(shape, dt, ties=name.endswith("cummax"))
                if name.endswith("cumprod"):
                    x = (1 + x * 1e-3).astype(dt)
                kw = {"axis": axis} if not rev else {"axis": axis, "reverse": True}
                return (lambda a: fn(a, **kw)), [x], [], {**kw, "input.ndim": len(shape), "inputs.addends": shape[axis],
                                                          "inputs.collide": f"scans of {shape[axis]} values"}
            add(f"{name}|b:{len(shape)}d;axis={axis};reverse={rev}", b10)

    # --- decompositions and transforms: the library and algorithm by size --------------------
    for name, fn in (("jax.numpy.linalg.eigh", lambda a: jnp.linalg.eigh(a @ a.T)), ("jax.numpy.linalg.svd", lambda a: jnp.linalg.svd(a)),
                     ("jax.numpy.linalg.qr", lambda a: jnp.linalg.qr(a)), ("jax.numpy.linalg.cholesky", lambda a: jnp.linalg.cholesky(a @ a.T + a.shape[0] * jnp.eye(a.shape[0], dtype=a.dtype))),
                     ("jax.numpy.linalg.solve", lambda a: jnp.linalg.solve(a + a.shape[0] * jnp.eye(a.shape[0], dtype=a.dtype), a)),
                     ("jax.numpy.linalg.inv", lambda a: jnp.linalg.inv(a + a.shape[0] * jnp.eye(a.shape[0], dtype=a.dtype)))):
        for n in (32, 1024):
            def b11(dt, fn=fn, n=n):
                return fn, [w.floats((n, n), dt, scale=False)], [], {"input.ndim": 2, "input.shape": [n, n],
                                                                       "inputs.collide": f"a {n}x{n} matrix (the library picks its algorithm by size)"}
            add(f"{name}|b:n={n}", b11)  # every float: the inventory lists a float16 and a bfloat16 branch of each
    for name, fn in (("jax.numpy.fft.fft", lambda a: jnp.fft.fft(a).real), ("jax.numpy.fft.rfft2", lambda a: jnp.fft.rfft2(a).real),
                     ("jax.numpy.fft.irfft", lambda a: jnp.fft.irfft(a))):
        def b12(dt, fn=fn):
            return fn, [w.floats((1024, 1024), dt)], [], {"input.ndim": 2, "inputs.collide": "1024-point transforms"}
        add(f"{name}|b:2d", b12)
    for pet in (None, "float32"):
        def b13(dt, pet=pet):
            a, bb = w.floats((2048, 4096), dt), w.floats((4096, 1024), dt)
            kw = {} if pet is None else {"preferred_element_type": jnp.float32}
            return (lambda x, y: jnp.matmul(x, y, **kw)), [a, bb], [], {"preferred_element_type": pet, "input.ndim": 2,
                                                                       "inputs.addends": 4096, "inputs.collide": "4096-long dot products"}
        add(f"jax.numpy.matmul|b:preferred_element_type={pet}", b13)
    # --- functions whose catalog inputs (2M values) were too large: a small input --------------
    def diagflat(dt):
        return jnp.diagflat, [w.floats((2048,), dt)], [], {"input.ndim": 1, "inputs.collide": "a 2048x2048 result, one input per diagonal cell"}
    add("jax.numpy.diagflat|b:n=2048", diagflat)

    def lexsort(dt):
        keys = w.floats((2, 1 << 16), dt, ties=True)
        return (lambda k: jnp.lexsort(k).astype(dt)), [], [keys], {"input.ndim": 2, "inputs.collide": "two keys with ties"}
    add("jax.numpy.lexsort|b:2x65536", lexsort)
    return S, D
