"""Dump what an installed framework says about its own catalog, for the branch inventory
(scripts/branch_inventory.py; docs/sweep.md, "Branches").

Run where the release of the inventory is installed (the GPU machine has PyTorch 2.11.0 and JAX
0.11.2; nothing here needs a GPU):

    python scripts/branch_dump.py torch OUT.json   # op_db and module_db: CUDA dtypes, sparse support, aten names
    python scripts/branch_dump.py jax OUT.json     # the sweep's JAX catalog: the primitives each function's jaxpr
                                                   # and vjp hold, and which have a CUDA-only lowering (file:line)

Both write plain JSON with the framework's version; the inventory is built from these files and
the release's source, never from the framework installed where it is built.
"""

from __future__ import annotations

import inspect
import json
import os
import sys


def torch_dump() -> dict:
    import torch

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from verifiers.sweep import ensure_expecttest

    ensure_expecttest()
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db

    def names(dts) -> list[str]:
        return sorted(str(d).replace("torch.", "") for d in dts)

    ops = []
    for op in op_db:
        entry = {"name": op.name, "variant": op.variant_test_name, "aten_name": getattr(op, "aten_name", None),
                 "aten_backward_name": getattr(op, "aten_backward_name", None),
                 "dtypes_cuda": names(op.supported_dtypes("cuda")),
                 "backward_dtypes_cuda": names(op.supported_backward_dtypes("cuda")) if op.supports_autograd else [],
                 "autograd": bool(op.supports_autograd),
                 "nondeterministic_output": bool(getattr(op, "has_nondeterministic_output", False))}
        entry["sparse"] = [k[len("supports_"):] for k in ("supports_sparse", "supports_sparse_csr", "supports_sparse_csc",
                                                          "supports_sparse_bsr", "supports_sparse_bsc") if getattr(op, k, False)]
        ops.append(entry)
    modules = []
    for m in module_db:
        try:
            dts = names(m.supported_dtypes("cuda")) if hasattr(m, "supported_dtypes") else names(m.dtypes)
        except Exception:
            dts = names(getattr(m, "dtypes", ()))
        modules.append({"name": f"torch.nn.{m.module_cls.__name__}", "variant": getattr(m, "variant_test_name", ""), "dtypes_cuda": dts})
    return {"framework": "pytorch", "version": torch.__version__, "ops": ops, "modules": modules}


def _prims(jaxpr, out: set) -> None:
    from jax._src import core  # ClosedJaxpr and Jaxpr (jax.core no longer exports them)

    for eqn in jaxpr.eqns:
        out.add(str(eqn.primitive))
        for value in eqn.params.values():
            for sub in (value if isinstance(value, (list, tuple)) else (value,)):
                if isinstance(sub, core.ClosedJaxpr):
                    _prims(sub.jaxpr, out)
                elif isinstance(sub, core.Jaxpr):
                    _prims(sub, out)


def _where(rule) -> dict | None:
    import functools

    rule = getattr(rule, "rule", rule)  # mlir.LoweringRuleEntry(rule=..., inline=...)
    while isinstance(rule, functools.partial):
        rule = rule.func
    rule = getattr(rule, "__wrapped__", rule)
    try:
        path = inspect.getsourcefile(rule)
        line = inspect.getsourcelines(rule)[1]
    except (TypeError, OSError):
        return None
    if path and "site-packages" in path:
        path = path.split("site-packages" + os.sep, 1)[1]
    return {"file": path, "line": line, "name": getattr(rule, "__qualname__", getattr(rule, "__name__", ""))}


def jax_dump() -> dict:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    from jax._src.interpreters import mlir

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from verifiers.sweep.jax_worker import Worker

    class Args:
        device, runs, mode, planted, branches = "cpu", 2, "default", False, False

    w = Worker(Args())
    units = [u for u in w.catalog() if not u.endswith("|special")]
    x = jax.ShapeDtypeStruct((8, 16), jnp.float32)
    functions = {}
    for unit in units:
        name, kind = unit.split("|")
        mod, attr = name.rsplit(".", 1)
        import importlib

        fn = getattr(importlib.import_module(mod), attr)
        args = (x,) if kind == "unary" else (x, x)
        entry: dict = {"kind": kind}
        try:
            fwd: set = set()
            _prims(jax.make_jaxpr(fn)(*args).jaxpr, fwd)
            entry["forward"] = sorted(fwd)
            out = jax.eval_shape(fn, *args)
            if hasattr(out, "dtype") and jnp.issubdtype(out.dtype, jnp.floating):
                bwd: set = set()
                ct = jax.ShapeDtypeStruct(out.shape, out.dtype)
                _prims(jax.make_jaxpr(lambda *a: jax.vjp(fn, *a[:-1])[1](a[-1]))(*args, ct).jaxpr, bwd)
                entry["backward"] = sorted(bwd - fwd)
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
        functions[name] = entry
    # the hand-built units of the JAX sweep and of its branch sweep (x64 on, as the branch worker runs)
    Args.branches = True
    wb = Worker(Args())
    for table in (w._special(), wb.branch):
        for unit, build in table.items():
            entry = {"kind": "special" if table is not wb.branch else "branch"}
            try:
                fn, fargs, oargs, _ = build(jnp.float32)
                fwd = set()
                _prims(jax.make_jaxpr(fn)(*fargs, *oargs).jaxpr, fwd)
                entry["forward"] = sorted(fwd)
                out = jax.eval_shape(fn, *fargs, *oargs)
                if hasattr(out, "dtype") and jnp.issubdtype(out.dtype, jnp.floating):
                    nf = len(fargs)
                    ct = jax.ShapeDtypeStruct(out.shape, out.dtype)

                    def bwd(*a, fn=fn, nf=nf):
                        return jax.vjp(lambda *f: fn(*f, *a[nf:-1]), *a[:nf])[1](a[-1])
                    bw = set()
                    _prims(jax.make_jaxpr(bwd)(*fargs, *oargs, ct).jaxpr, bw)
                    entry["backward"] = sorted(bw - fwd)
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
            functions[unit] = entry
    lowerings = {}
    prims = {p for e in functions.values() for p in e.get("forward", []) + e.get("backward", [])}
    by_name = {str(p): p for p in mlir._lowerings}
    for table in mlir._platform_specific_lowerings.values():
        by_name.update({str(p): p for p in table})
    for name in sorted(prims):
        prim = by_name.get(name)
        if prim is None:
            continue
        entry = {"default": _where(mlir._lowerings[prim]) if prim in mlir._lowerings else None}
        for plat in ("cuda", "rocm", "gpu"):
            table = mlir._platform_specific_lowerings.get(plat, {})
            if prim in table:
                entry[plat] = _where(table[prim])
        lowerings[name] = entry
    import jaxlib

    return {"framework": "jax", "version": jax.__version__, "jaxlib": jaxlib.__version__, "functions": functions,
            "lowerings": lowerings}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("torch", "jax"):
        print(__doc__, file=sys.stderr)
        return 2
    doc = torch_dump() if argv[0] == "torch" else jax_dump()
    with open(argv[1], "w", encoding="utf-8") as handle:
        json.dump(doc, handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(f"wrote {argv[1]}: {doc['framework']} {doc['version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
