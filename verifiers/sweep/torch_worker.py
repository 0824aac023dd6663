"""PyTorch sweep worker: one warm interpreter measuring op_db / module_db units from stdin.

Run by kb/verify/sweep.py (`kb verify --sweep pytorch-eager|pytorch-compiled`), never by hand
except to debug: `python -m verifiers.sweep.torch_worker --device cpu --list`, then type unit
names on stdin. Each unit is one operator (all its dtypes and passes); each case prints one
protocol line (kb/protocol.py). docs/sweep.md explains every input choice below.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from kb.case import Case
from kb.protocol import emit

TARGET = 2_000_000  # elements of the enlarged input: past one block's worth many times over
SMALL_TARGET = 65_536  # O(n^3) linear algebra: 256x256 matrices already take many blocks
CUBIC = re.compile(r"^(linalg\.|cholesky|svd|qr|lu|pinverse|inverse|det|logdet|slogdet|triangular_solve|ormqr|geqrf|"
                   r"matrix_exp|pca_lowrank|svd_lowrank|lobpcg|symeig|eig|matrix_power|nn\.functional\.pdist|cdist|cov|corrcoef)")
# Ops whose result depends on which of equal values wins: their inputs get ties (rounded values).
TIES = re.compile(r"(max|min|sort|topk|kthvalue|median|mode|pool|unique|argm|cumm|searchsorted|bucketize|"
                  r"histc|histogram|sign|unpool|embedding)")
# Scans: one long 1-D scan (4M elements along the scanned dim), as a user's sampler or loss has it;
# tiling a 3-D sample gives many short scans of ~100 elements, which one block covers.
SCAN = re.compile(r"^(cum|logcumsumexp)")
# Ops with an input whose values must keep a contract (pivots in 1..n, probabilities in [0, 1], sorted
# offsets): the enlargement breaks it (integers to 0/1, values times 2^k, offsets repeated) and on the
# GPU the op's device-side assert or illegal access ends the worker's CUDA context for every later case
# (lu_solve, lu_unpack, ldl_solve, bernoulli, binary_cross_entropy, embedding_bag on 2026-11-28). Their
# samples run as op_db/module_db builds them ("as sampled", inputs.enlarged "none").
CONTRACT = re.compile(r"(lu_solve|lu_unpack|ldl_solve|bernoulli|binary_cross_entropy$|BCELoss$|embedding_bag|EmbeddingBag)")
LONG = 4_000_000
MAX_SAMPLES = 24
MAX_ATTEMPTS = 8




POISONED = [False]
POISON = re.compile(r"CUDA error|device-side assert|illegal memory access|CUBLAS_STATUS_EXECUTION_FAILED|unspecified launch failure")


def message(exc: BaseException) -> str:
    """One line for the evidence; a CUDA error also marks the process as poisoned (its CUDA
    context is unusable), so the worker exits after this unit and the driver starts a new one."""
    text = f"{type(exc).__name__}: {exc}".strip()
    if POISON.search(text):
        POISONED[0] = True
    return text[:1500]


class Worker:
    def __init__(self, args):
        import torch

        self.torch = torch
        self.args = args
        self.device = args.device
        self.compiled = args.compiled
        if self.device == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError("CUDA is not available to PyTorch (no supported devices found)")
            torch.zeros(1, device="cuda").sum().item()
        self.dev_type = "cuda" if self.device.startswith("cuda") else "cpu"
        from verifiers.sweep import ensure_expecttest

        ensure_expecttest()
        from torch.testing._internal.common_methods_invocations import op_db

        # unit name -> its Case (kb/case.py): `build()` runs the unit (every dtype, sample and pass
        # it makes); `source` is the op_db entry an op unit comes from
        self.units: dict[str, Case] = {}
        # --dtypes int64/int32/uint8,bool: each comma-separated group runs the first of its dtypes the op takes
        self.dtype_groups = [tuple(getattr(torch, d) for d in g.split("/")) for g in args.dtypes.split(",")] if args.dtypes else [
            (torch.float32,), (torch.bfloat16,)]
        self.dtypes = tuple(d for g in self.dtype_groups for d in g)
        if args.branches:  # the branch units only (verifiers/sweep/torch_branches.py), planted ones with --planted
            from verifiers.sweep.torch_branch_runner import BranchRunner, unit_names

            self.branch_runner = BranchRunner(self, message)
            self.units.update({unit: Case(f"branch:{which[0]}", build=lambda unit=unit, which=which: self.branch_runner.run(unit, which),
                                          variant=which[1])
                               for unit, which in unit_names(args.planted, args.dtypes).items()})
            return
        for op in op_db:
            unit = f"{op.name}|{op.variant_test_name}"
            self.units[unit] = Case(op.name, build=lambda unit=unit, op=op: self.run_op(unit, op), variant=op.variant_test_name,
                                    source=op)
        if not self.compiled:
            try:
                from torch.testing._internal.common_modules import module_db

                for m in module_db:
                    cls = m.module_cls
                    where = "torch.nn" if getattr(torch.nn, cls.__name__, None) is cls else cls.__module__
                    key = f"module:{where}.{cls.__name__}|{getattr(m, 'variant_test_name', '')}"
                    self.units.setdefault(key, Case(key.split("|")[0], build=lambda key=key, m=m: self.run_module(key, m),
                                                    variant=getattr(m, "variant_test_name", "")))
            except Exception:  # the module catalog is optional: op_db alone is the sweep
                pass
        if args.planted:
            for name in PLANTED:
                self.units[f"planted:{name}|"] = Case(f"planted.{name}", build=lambda unit=f"planted:{name}|", name=name:
                                                      self.run_planted(unit, name))
        if self.compiled:
            import torch._dynamo  # noqa: F401
            import torch._inductor.config as icfg

            self.icfg = icfg
            torch._dynamo.config.cache_size_limit = 64

    # --- helpers ----------------------------------------------------------------------

    def sync(self) -> None:
        if self.dev_type == "cuda":
            self.torch.cuda.synchronize()

    def flat(self, out) -> list:
        torch = self.torch
        if isinstance(out, torch.Tensor):
            return [out]
        if isinstance(out, (list, tuple)):
            return [t for o in out for t in self.flat(o)]
        if isinstance(out, dict):
            return [t for k in sorted(out, key=str) for t in self.flat(out[k])]
        if isinstance(out, (bool, int, float, complex)):  # Tensor.item() of a complex tensor is a Python complex
            return [torch.tensor(out)]
        return []

    def bits(self, t):
        torch = self.torch
        t = t.detach()
        if t.layout != torch.strided:
            t = t.cpu().to_dense()  # the CPU's sequential conversion: the device's may itself differ
        if t.is_complex():
            t = torch.view_as_real(t.resolve_conj())
        t = t.contiguous().reshape(-1)
        if t.dtype == torch.bool:
            return t.to(torch.uint8)
        return t.view(torch.uint8)

    def snapshot(self, out) -> list:
        return [(tuple(t.shape), str(t.dtype), self.bits(t).clone()) for t in self.flat(out)]

    def equal(self, a, b) -> bool:
        if len(a) != len(b):
            return False
        return all(x[0] == y[0] and x[1] == y[1] and self.torch.equal(x[2], y[2]) for x, y in zip(a, b))

    def max_abs(self, a_raw, b_raw) -> float:
        torch = self.torch
        worst = 0.0
        for x, y in zip(a_raw, b_raw):
            if x.shape != y.shape:
                return math.inf
            if x.numel() == 0:
                continue
            if x.layout != torch.strided:  # sparse results: compared dense, converted on the CPU
                x, y = x.detach().cpu().to_dense(), y.detach().cpu().to_dense()
            if x.is_complex():
                x, y = torch.view_as_real(x.resolve_conj()), torch.view_as_real(y.resolve_conj())
            x, y = x.detach().double(), y.detach().double()
            d = (x - y).abs()
            both_nan = torch.isnan(x) & torch.isnan(y)
            d = torch.where(both_nan, torch.zeros_like(d), d)
            d = torch.nan_to_num(d, nan=math.inf, posinf=math.inf)
            worst = max(worst, float(d.max()))
        return worst

    def measure(self, call, runs: int) -> dict:
        """Call `runs` times (after one untimed warm-up), reseeding before each so random ops
        draw the same numbers: a difference can then come only from kernels."""
        torch = self.torch
        entry: dict[str, Any] = {"runs": runs, "distinct": None, "max_abs": None, "median_ms": None, "raised": None}
        try:
            torch.manual_seed(0)
            call()
            self.sync()
            reps: list = []
            first: list | None = None
            worst = 0.0
            times: list[float] = []
            for _ in range(runs):
                torch.manual_seed(0)
                self.sync()
                t0 = time.perf_counter()
                out = call()
                self.sync()
                times.append((time.perf_counter() - t0) * 1000)
                snap = self.snapshot(out)
                raw = [t.detach() for t in self.flat(out)]
                if first is None:
                    first = raw
                else:
                    worst = max(worst, self.max_abs(first, raw))
                if not any(self.equal(snap, r) for r in reps):
                    reps.append(snap)
            entry.update(distinct=len(reps), max_abs=(None if math.isinf(worst) else worst),
                         median_ms=round(statistics.median(times), 4))
            if math.isinf(worst):
                entry["max_abs_note"] = "shapes or NaN positions differ"
        except Exception as exc:  # the op (or the switch) raised: that is the outcome
            entry["raised"] = message(exc)
        return entry

    def pick_dtypes(self, supported) -> list:
        """Of each dtype group (--dtypes a/b/c), the first the op supports on this device."""
        return [next(d for d in g if d in supported) for g in self.dtype_groups if any(d in supported for d in g)]

    def set_switch(self, on: bool) -> None:
        self.torch.use_deterministic_algorithms(on)

    # --- inputs ------------------------------------------------------------------------

    def map_tensors(self, obj, fn):
        torch = self.torch
        if isinstance(obj, torch.Tensor):
            return fn(obj)
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return tuple(self.map_tensors(o, fn) for o in obj)
        if isinstance(obj, list):
            return [self.map_tensors(o, fn) for o in obj]
        if isinstance(obj, dict):
            return {k: self.map_tensors(v, fn) for k, v in obj.items()}
        return obj

    def tensors_in(self, obj) -> list:
        out: list = []

        def keep(t):
            out.append(t)
            return t
        self.map_tensors(obj, keep)
        return out

    def literal(self, value):
        torch = self.torch
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if isinstance(value, (list, tuple)) and all(not isinstance(v, torch.Tensor) for v in value):
            return [self.literal(v) for v in value]
        if isinstance(value, torch.dtype):
            return str(value).replace("torch.", "")
        if isinstance(value, torch.Tensor):
            return {"tensor": list(value.shape), "dtype": str(value.dtype).replace("torch.", "")}
        if isinstance(value, (list, tuple)):
            return [self.literal(v) for v in value]
        return repr(value)[:80]

    def transform(self, sample_parts, size: str, values: bool, target: int, ties: bool, near_one: bool = False):
        """Enlarge and reshape the values of one sample (docs/sweep.md, "Inputs")."""
        torch = self.torch
        inp = sample_parts[0]
        first = inp if isinstance(inp, torch.Tensor) else next(iter(self.tensors_in(inp)), None)
        if first is None:
            return None
        n = max(1, sum(t.numel() for t in self.tensors_in(inp)))
        gen = torch.Generator().manual_seed(1234)
        reps_all, f0 = None, 1
        if size == "long-1d":
            if not isinstance(inp, torch.Tensor) or inp.numel() == 0:
                return None
            flat = inp.detach().reshape(-1)
            flat = flat.repeat(math.ceil(LONG / flat.numel()))[:LONG]
            if values and flat.is_floating_point() and near_one:
                flat = (1 + (flat.float() / (flat.float().abs().max() + 1)) * 1e-2).to(flat.dtype)
            elif values and flat.is_floating_point():
                scale = torch.randint(-6, 7, flat.shape, generator=gen).to(flat.device, torch.float32).exp2()
                flat = (flat.float() * scale).to(flat.dtype)
            flat = flat.contiguous().requires_grad_(inp.requires_grad)
            args = tuple(0 if (isinstance(a, int) and not isinstance(a, bool)) else a for a in sample_parts[1])
            kwargs = {k: (0 if k == "dim" else v) for k, v in sample_parts[2].items()}
            if any(isinstance(t, torch.Tensor) for t in (*args, *kwargs.values())):
                return None
            return (flat, args, kwargs)
        if size == "tile-all":
            k = sum(1 for s in first.shape if s > 1)
            if k == 0 or n >= target:
                return None
            f = math.ceil((target / n) ** (1.0 / k))
            if f <= 1:
                return None
            reps_all = f
        elif size == "tile-0":
            if first.ndim == 0 or first.shape[0] <= 1 or n >= target:
                return None
            f0 = math.ceil(target / n)
            d0 = first.shape[0]

        def grow(t):
            new = t.detach()
            if new.layout != torch.strided:  # a sparse argument (sampled_addmm's CSR): repeat is unsupported
                return new
            # the enlarged size first: repeating past it raises a storage overflow or allocates
            # hundreds of GiB before the check below (as_strided_scatter, broadcast_tensors,
            # expand_as, column_stack, addmv on 2026-11-28)
            if reps_all and new.ndim >= 1:
                grown = new.numel() * reps_all ** sum(1 for s in new.shape if s > 1)
            elif f0 > 1 and new.ndim >= 1 and new.shape[0] == d0:
                grown = new.numel() * f0
            else:
                grown = new.numel()
            if grown > 16 * target:
                raise OverflowError("too large")
            if reps_all and new.ndim >= 1 and new.numel() > 0:
                new = new.repeat([reps_all if s > 1 else 1 for s in new.shape])
            elif f0 > 1 and new.ndim >= 1 and new.shape[0] == d0:
                new = new.repeat([f0] + [1] * (new.ndim - 1))
            if new.numel() > 16 * target:
                raise OverflowError("too large")
            if values and new.numel() > 1:
                if new.is_floating_point():
                    if near_one:
                        new = (1 + (new.float() / (new.float().abs().max() + 1)) * 1e-2).to(new.dtype)
                    elif ties:
                        new = new.round()
                    else:
                        scale = torch.randint(-6, 7, new.shape, generator=gen).to(new.device, torch.float32).exp2()
                        new = (new.float() * scale).to(new.dtype)
                elif new.dtype not in (torch.bool, torch.uint8) and not new.is_complex() and t is not inp and new.min() >= 0:
                    new = new.remainder(2)  # index arguments: many repeats of the same slots
            new = new.contiguous()
            if t.requires_grad and (new.is_floating_point() or new.is_complex()):
                new.requires_grad_(True)
            return new

        try:
            return self.map_tensors(sample_parts, grow)
        except OverflowError:
            return None

    def call_facts(self, name: str, parts, size: str, values: bool, ties: bool) -> dict:
        torch = self.torch
        inp, args, kwargs = parts
        facts = {}
        for k, v in kwargs.items():
            facts[k] = self.literal(v)
        for i, a in enumerate(args):
            facts[f"args[{i}]"] = self.literal(a)
        first = inp if isinstance(inp, torch.Tensor) else next(iter(self.tensors_in(inp)), None)
        if first is not None:
            facts["input.ndim"] = first.ndim
            facts["input.dtype"] = str(first.dtype).replace("torch.", "")
            facts["input.dtype_kind"] = ("floating" if first.is_floating_point() else "complex" if first.is_complex()
                                         else "bool" if first.dtype == torch.bool else "integer")
            facts["input.shape"] = list(first.shape)
        if not isinstance(inp, torch.Tensor):
            facts["input.kind"] = "tensor list"
        facts["inputs.enlarged"] = size
        facts["inputs.values"] = (("near one" if "prod" in name else "ties" if ties else "mixed magnitude")
                                  if values else "as sampled")
        return facts

    def samples(self, op, dtype, grad: bool) -> list:
        torch = self.torch
        out = []
        try:
            for i, s in enumerate(op.sample_inputs(self.device, dtype, requires_grad=grad)):
                if i >= MAX_SAMPLES:
                    break
                out.append(s)
        except Exception:
            if not out:
                raise
        def size(s):
            return sum(t.numel() for t in self.tensors_in(s.input)) if not isinstance(s.input, torch.Tensor) else s.input.numel()
        return sorted(out, key=size, reverse=True)[:3]

    # --- units -------------------------------------------------------------------------

    def public_name(self, op) -> str:
        torch = self.torch
        obj = torch
        for part in op.name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if op.name.startswith("torch."):
            return op.name
        if obj is not None:
            return "torch." + op.name
        if hasattr(torch.Tensor, op.name):
            return "torch.Tensor." + op.name
        return "torch." + op.name

    def run_unit(self, unit: str) -> None:
        case = self.units[unit]
        assert case.build is not None  # every unit is built here, in __init__
        case.build()

    @contextlib.contextmanager
    def building(self, unit, pub, variant, dtype_name):
        """One dtype of one op: inputs that cannot be built make an error case (the sweep goes on);
        either way the switch is off again and, on CUDA, the cached memory is freed."""
        try:
            yield
        except Exception as exc:
            case = self.base_case(unit, pub, variant, dtype_name, "forward")
            case["error"] = "building inputs: " + message(exc)
            emit({"case": case})
        finally:
            self.set_switch(False)
            if self.dev_type == "cuda":
                self.torch.cuda.empty_cache()

    def base_case(self, unit, pub, variant, dtype_name, pass_):
        made = self.units.get(unit)
        extra = {"catalog_marks_nondeterministic": True} if made is not None and getattr(made.source, "has_nondeterministic_output", False) else {}
        return {**extra, "op": pub, "variant": variant, "case": f"{unit}|{dtype_name}|{pass_}", "pass": pass_,
                "dtype": dtype_name, "call": {}, "numel": None, "modes": {}, "class": None, "error": None, "fixes": []}

    def run_op(self, unit: str, op) -> None:
        pub = self.public_name(op)
        supported = op.supported_dtypes(self.dev_type)
        dtypes = self.pick_dtypes(supported)
        if "empty" in op.name:
            case = self.base_case(unit, pub, op.variant_test_name, None, "forward")
            case.update({"class": "skipped", "skipped": "returns uninitialized memory by contract (op_db marks its output nondeterministic)"})
            emit({"case": case})
            return
        if self.compiled:
            dtypes = dtypes[:1]
        if not dtypes:
            case = self.base_case(unit, pub, op.variant_test_name, None, "forward")
            case.update({"class": "skipped", "skipped": f"none of {', '.join(map(str, self.dtypes))} on {self.dev_type}"})
            emit({"case": case})
            return
        target = SMALL_TARGET if CUBIC.match(op.name) else TARGET
        ties = bool(TIES.search(op.name))
        for dtype in dtypes:
            dname = str(dtype).replace("torch.", "")
            grad = bool(op.supports_autograd) and dtype in op.supported_backward_dtypes(self.dev_type)
            with self.building(unit, pub, op.variant_test_name, dname):
                self.one_dtype(unit, op, pub, dtype, dname, grad, target, ties)

    def pick(self, op, dtype, grad, target, ties):
        """The first (sample, enlargement) that runs once by default; (parts, facts) or raise."""
        torch = self.torch
        last = None
        attempts = 0
        for s in self.samples(op, dtype, grad):
            parts = (s.input, tuple(s.args), dict(s.kwargs))
            sizes = ((("long-1d", True), ("long-1d", False)) if SCAN.match(op.name) else ()) + (("tile-all", True), ("tile-all", False), ("tile-0", True), ("tile-0", False),
                                 ("none", True), ("none", False))
            if CONTRACT.search(op.name):
                sizes = (("none", False),)
            for size, values in sizes:
                if attempts >= MAX_ATTEMPTS and size != "none":
                    continue
                new = parts if (size == "none" and not values) else self.transform(parts, size, values, target, ties, "prod" in op.name)
                if new is None:
                    continue
                attempts += 1
                try:
                    torch.manual_seed(0)
                    out = op.op(new[0], *new[1], **new[2])
                    self.sync()
                    if not self.flat(out):
                        raise ValueError("no tensor output")
                    if sum(o.numel() for o in self.flat(out)) > 64 * target:
                        # a broadcast view of enlarged inputs (broadcast_tensors on 2026-11-28: 3.3M x 1.3M
                        # x 2M): any later copy of it overflows
                        raise OverflowError("output of the enlarged inputs too large")
                    return new, self.call_facts(op.name, new, size, values, ties), out
                except Exception as exc:
                    last = exc
                    if self.dev_type == "cuda":
                        torch.cuda.empty_cache()
        raise RuntimeError("no sample input ran by default: " + (message(last) if last else "no samples"))

    def one_dtype(self, unit, op, pub, dtype, dname, grad, target, ties) -> None:
        torch = self.torch
        parts, facts, out = self.pick(op, dtype, grad, target, ties)
        first = parts[0] if isinstance(parts[0], torch.Tensor) else next(iter(self.tensors_in(parts[0])), None)
        numel = int(first.numel()) if first is not None else None
        leaves = [t for t in self.tensors_in(parts) if t.requires_grad]
        outs = [o for o in self.flat(out) if o.requires_grad and (o.is_floating_point() or o.is_complex())]
        gen = torch.Generator().manual_seed(4321)
        cot = [torch.randn(o.shape, generator=gen, dtype=torch.float32).to(o.device, o.dtype) if o.is_floating_point()
               else torch.randn(o.shape, generator=gen, dtype=o.dtype).to(o.device) for o in outs]

        def fwd():
            return op.op(parts[0], *parts[1], **parts[2])

        def bwd_of(f):
            def bwd():
                o = [x for x in self.flat(f()) if x.requires_grad and (x.is_floating_point() or x.is_complex())]
                g = torch.autograd.grad(o, leaves, cot, allow_unused=True)
                return [x for x in g if x is not None]
            return bwd

        passes = [("forward", fwd)]
        if grad and leaves and outs and "backward" in self.args.passes:
            passes.append(("backward", bwd_of(fwd)))
        del out
        for pass_, call in passes:
            case = self.base_case(unit, pub, op.variant_test_name, dname, pass_)
            case["call"] = dict(facts)
            case["numel"] = numel
            if self.compiled:
                self.compiled_case(case, op, parts, leaves, cot, pass_)
            else:
                for mode in ("default", "switch"):
                    self.set_switch(mode == "switch")
                    case["modes"][mode] = self.measure(call, self.args.runs)
                self.set_switch(False)
                sw = case["modes"]["switch"]
                if sw["raised"] is None and (sw["distinct"] or 0) > 1:
                    case["fixes"] = self.eager_fixes(op, parts, pass_, dtype, sw)
            emit({"case": case})

    def eager_fixes(self, op, parts, pass_, dtype, sw) -> list:
        """For a silent case: the same op in float64 (cast back) and on the CPU, under the switch."""
        torch = self.torch
        fixes = []
        for fix, dev, dt in (("float64 then cast back", self.device, torch.float64), ("cpu", "cpu", None)):
            def conv(t, dev=dev, dt=dt):
                new = t.detach().to(dev)
                if dt is not None and new.is_floating_point():
                    new = new.to(dt)
                if t.requires_grad:
                    new.requires_grad_(True)
                return new
            try:
                p2 = self.map_tensors(parts, conv)
                leaves2 = [t for t in self.tensors_in(p2) if t.requires_grad]

                def f2(p2=p2):
                    return op.op(p2[0], *p2[1], **p2[2])

                def call(p2=p2, leaves2=leaves2, f2=f2):
                    out = self.flat(f2())
                    if pass_ == "forward":
                        return [o.to(self.device, dtype) if o.is_floating_point() else o.to(self.device) for o in out]
                    o = [x for x in out if x.requires_grad and (x.is_floating_point() or x.is_complex())]
                    gen = torch.Generator().manual_seed(4321)
                    cot = [torch.randn(x.shape, generator=gen, dtype=torch.float32).to(dtype).to(x.device, x.dtype) for x in o]
                    g = torch.autograd.grad(o, leaves2, cot, allow_unused=True)
                    return [x.to(self.device, dtype) for x in g if x is not None]

                self.set_switch(True)
                m = self.measure(call, self.args.runs)
            except Exception as exc:
                m = {"runs": self.args.runs, "distinct": None, "median_ms": None, "raised": message(exc)}
            finally:
                self.set_switch(False)
            ratio = (round(m["median_ms"] / sw["median_ms"], 3) if m.get("median_ms") and sw.get("median_ms") else None)
            fixes.append({"fix": fix, "distinct": m.get("distinct"), "runs": self.args.runs, "time_ratio": ratio,
                          "raised": m.get("raised")})
        return fixes

    # --- compiled ----------------------------------------------------------------------

    def inductor_config(self) -> dict:
        cfg = {}
        for key in ("deterministic", "fallback_random", "max_autotune", "coordinate_descent_tuning"):
            cfg[key] = getattr(self.icfg, key, "absent") if hasattr(self.icfg, key) else "absent"
        cfg["TORCHINDUCTOR_DETERMINISTIC"] = os.environ.get("TORCHINDUCTOR_DETERMINISTIC")
        return cfg

    def kernel_kinds(self, codes: list[str]) -> dict:
        """What Inductor generated, read from its source: the static candidate list."""
        text = "\n".join(codes)
        heuristics = sorted(set(re.findall(r"@triton_heuristics\.(\w+)", text)))
        atomic = bool(re.search(r"tl\.atomic_add\(", text))
        cross_scan = "split_scan" in heuristics or bool(re.search(r"exclusive_scan_decoupled_lookback\w*\(", text))
        scan = cross_scan or "scan" in heuristics or bool(re.search(r"tl\.associative_scan\(|tl\.cumsum\(|tl\.cumprod\(", text))
        reduction = any("reduction" in h for h in heuristics)
        template = "template" in heuristics or bool(re.search(r"def triton_tem_", text))
        extern = sorted(set(re.findall(r"extern_kernels\.(\w+)", text)) | set(re.findall(r"aten\.(\w+)\.\w+\(", text)))[:30]
        return {"modules": len(codes), "triton_kernels": len(re.findall(r"@triton\.jit", text)), "heuristics": heuristics,
                "atomic_add": atomic, "scan": scan, "cross_block_scan": cross_scan, "reduction": reduction,
                "template": template, "extern": extern, "candidate": bool(atomic or cross_scan)}

    def compiled_case(self, case, op, parts, leaves, cot, pass_) -> None:
        torch = self.torch
        from torch._inductor.utils import run_and_get_code

        tensors = self.tensors_in(parts)
        ids = {id(t): i for i, t in enumerate(tensors)}

        def rebuild(ts):
            return self.map_tensors(parts, lambda t: ts[ids[id(t)]])

        def f(*ts):
            p = rebuild(ts)
            return op.op(p[0], *p[1], **p[2])

        def runner(cf):
            if pass_ == "forward":
                return lambda: cf(*tensors)

            def bwd():
                o = [x for x in self.flat(cf(*tensors)) if x.requires_grad and (x.is_floating_point() or x.is_complex())]
                g = torch.autograd.grad(o, leaves, cot, allow_unused=True)
                return [x for x in g if x is not None]
            return bwd

        kernel = None
        for mode in ("default", "switch"):
            torch._dynamo.reset()
            self.set_switch(mode == "switch")
            try:
                cf = torch.compile(f)
                call = runner(cf)
                torch.manual_seed(0)
                _, codes = run_and_get_code(call)
                if pass_ == "backward":
                    codes = codes[1:] if len(codes) > 1 else codes  # the forward module comes first
                if mode == "default" or kernel is None:
                    kernel = self.kernel_kinds(codes)
                    kernel["config"] = self.inductor_config()
                case["modes"][mode] = self.measure(call, self.args.runs)
            except Exception as exc:
                case["modes"][mode] = {"runs": self.args.runs, "distinct": None, "max_abs": None, "median_ms": None,
                                       "raised": message(exc)}
        case["kernel"] = kernel
        sw = case["modes"].get("switch", {})
        if sw.get("raised") is None and (sw.get("distinct") or 0) > 1:
            case["fixes"] = self.compiled_fixes(f, runner, sw)
        torch._dynamo.reset()
        self.set_switch(False)

    def compiled_fixes(self, f, runner, sw) -> list:
        """For a silent compiled case: the op kept eager inside the compiled function, and
        Inductor's own `deterministic` setting where this version has it (under the switch)."""
        torch = self.torch
        fixes = []
        # The user's fix: the op called through torch.compiler.disable INSIDE the compiled function
        # (a graph break; the op runs eager). torch.compile(torch.compiler.disable(f)) is not that:
        # on 2.11 Dynamo traced f anyway (seen on the H100), so the disabled call must be inner.
        def make_disabled():
            inner = torch.compiler.disable(f)
            return torch.compile(lambda *ts: inner(*ts))

        trials: list[tuple[str, Callable[[], Any], dict[str, bool] | None]] = [
            ("torch.compiler.disable(op) called inside the compiled function", make_disabled, None)]
        if hasattr(self.icfg, "deterministic"):
            trials.append(("torch._inductor.config.deterministic=True", lambda: torch.compile(f), {"deterministic": True}))
        if hasattr(self.icfg, "fallback_random"):
            pass
        for name, make, patch in trials:
            torch._dynamo.reset()
            self.set_switch(True)
            try:
                if patch:
                    with self.icfg.patch(patch):
                        call = runner(make())
                        m = self.measure(call, self.args.runs)
                else:
                    call = runner(make())
                    m = self.measure(call, self.args.runs)
            except Exception as exc:
                m = {"distinct": None, "median_ms": None, "raised": message(exc)}
            ratio = (round(m["median_ms"] / sw["median_ms"], 3) if m.get("median_ms") and sw.get("median_ms") else None)
            fixes.append({"fix": name, "distinct": m.get("distinct"), "runs": self.args.runs, "time_ratio": ratio,
                          "raised": m.get("raised")})
        torch._dynamo.reset()
        self.set_switch(False)
        return fixes

    # --- modules -----------------------------------------------------------------------

    def run_module(self, unit: str, info) -> None:
        """A torch.nn module from module_db: its forward input tiled along the batch dim."""
        torch = self.torch
        pub = unit.split("|")[0][len("module:"):]
        variant = unit.split("|", 1)[1]
        supported = info.dtypes if hasattr(info, "dtypes") else (torch.float32,)
        try:
            supported = set(info.supported_dtypes(self.dev_type))
        except Exception:
            supported = set(supported)
        if self.args.any_module_dtype:  # the module in a dtype module_db leaves out: its functional op's kernels
            supported |= set(self.dtypes)
        dtypes = self.pick_dtypes(supported)
        if not dtypes:
            case = self.base_case(unit, pub, variant, None, "forward")
            case.update({"class": "skipped", "skipped": f"none of {', '.join(map(str, self.dtypes))} on {self.dev_type}"})
            emit({"case": case})
            return
        ties = bool(TIES.search(pub.lower()))
        for dtype in dtypes:
            dname = str(dtype).replace("torch.", "")
            with self.building(unit, pub, variant, dname):
                self.module_dtype(unit, info, pub, variant, dtype, dname, ties)

    def module_dtype(self, unit, info, pub, variant, dtype, dname, ties) -> None:
        torch = self.torch
        # requires_grad only where autograd takes the dtype: module_db's builders raise ValueError for an
        # integer or bool dtype with requires_grad=True (every module's int and bool case on 2026-11-28)
        grad = dtype.is_floating_point or dtype.is_complex
        inputs = info.module_inputs_func(info, device=self.device, dtype=dtype, requires_grad=grad, training=True)
        inputs = [mi for mi in inputs if mi.forward_input is not None][:6]
        last = None
        for mi in sorted(inputs, key=lambda mi: sum(t.numel() for t in self.tensors_in((mi.forward_input.args, mi.forward_input.kwargs))), reverse=True):
            ca, ck = mi.constructor_input.args, mi.constructor_input.kwargs
            for size in (("none",) if CONTRACT.search(pub) else ("tile-0", "none")):
                try:
                    torch.manual_seed(0)
                    m = info.module_cls(*ca, **ck)
                    # a module without parameters or buffers (pads, activations) takes an integer or bool
                    # input as it is; one with them is cast, and nn.Module.to's own error for a
                    # non-float dtype is the case's message
                    holds = grad or any(True for _ in m.parameters()) or any(True for _ in m.buffers())
                    m = m.to(self.device, dtype) if holds else m.to(self.device)
                    m.train()
                    parts = (list(mi.forward_input.args), (), dict(mi.forward_input.kwargs))
                    if size != "none":
                        parts = self.transform(parts, size, True, TARGET // 4, ties)
                        if parts is None:
                            continue
                    fa, _, fk = parts
                    out = m(*fa, **fk)
                    if not self.flat(out):
                        raise ValueError("no tensor output")
                    break
                except Exception as exc:
                    last = exc
                    parts = None
            if parts is not None:
                break
        else:
            raise RuntimeError("no module input ran by default: " + (message(last) if last else "no inputs"))
        if parts is None:
            raise RuntimeError("no module input ran by default: " + (message(last) if last else "no inputs"))
        facts = {f"ctor[{i}]": self.literal(a) for i, a in enumerate(ca)}
        facts.update({f"ctor.{k}": self.literal(v) for k, v in ck.items()})
        first = next(iter(self.tensors_in(fa)), None)
        if first is not None:
            facts.update({"input.ndim": first.ndim, "input.dtype": str(first.dtype).replace("torch.", ""),
                          "input.dtype_kind": "floating" if first.is_floating_point() else "integer",
                          "input.shape": list(first.shape)})
        facts["inputs.enlarged"] = size
        facts["inputs.values"] = "ties" if ties else "mixed magnitude"
        params = [p for p in m.parameters() if p.requires_grad]
        leaves = [t for t in self.tensors_in(fa) if t.requires_grad] + params
        outs = [o for o in self.flat(out) if o.requires_grad and o.is_floating_point()]
        gen = torch.Generator().manual_seed(4321)
        cot = [torch.randn(o.shape, generator=gen).to(o.device, o.dtype) for o in outs]

        def fwd():
            return m(*fa, **fk)

        def bwd():
            o = [x for x in self.flat(fwd()) if x.requires_grad and x.is_floating_point()]
            return [x for x in torch.autograd.grad(o, leaves, cot, allow_unused=True) if x is not None]

        passes = [("forward", fwd)] + ([("backward", bwd)] if leaves and outs and "backward" in self.args.passes else [])
        for pass_, call in passes:
            case = self.base_case(unit, pub, variant, dname, pass_)
            case["call"] = facts
            case["numel"] = int(first.numel()) if first is not None else None
            for mode in ("default", "switch"):
                self.set_switch(mode == "switch")
                case["modes"][mode] = self.measure(call, self.args.runs)
            self.set_switch(False)
            emit({"case": case})

    # --- planted (harness proofs on the CPU) -------------------------------------------

    def run_planted(self, unit: str, name: str) -> None:
        torch = self.torch
        x = torch.linspace(0, 1, 1000, device=self.device)
        counter = [0]

        def silent():
            counter[0] += 1
            return x * (1 + counter[0] * 1e-3)

        def fixed():
            counter[0] += 1
            return x if torch.are_deterministic_algorithms_enabled() else x * (1 + counter[0] * 1e-3)

        def raises():
            if torch.are_deterministic_algorithms_enabled():  # the message PyTorch's own alerts use
                raise RuntimeError("planted_op does not have a deterministic implementation, but you set "
                                   "'torch.use_deterministic_algorithms(True)'")
            counter[0] += 1
            return x * (1 + counter[0] * 1e-3)

        def crash():
            os._exit(3)

        def hang():
            time.sleep(3600)

        fn = {"silent": silent, "fixed": fixed, "raises": raises, "same": lambda: x.cumsum(0),
              "crash": crash, "hang": hang}[name]
        case = self.base_case(unit, f"planted.{name}", "", "float32", "forward")
        case["call"] = {"input.ndim": 1, "input.dtype": "float32", "input.dtype_kind": "floating"}
        case["numel"] = 1000
        for mode in ("default", "switch"):
            self.set_switch(mode == "switch")
            case["modes"][mode] = self.measure(fn, self.args.runs)
        self.set_switch(False)
        emit({"case": case})


PLANTED = ("silent", "fixed", "raises", "same", "crash", "hang")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--compiled", action="store_true", help="wrap each op in torch.compile")
    ap.add_argument("--planted", action="store_true", help="add planted units (harness proofs)")
    ap.add_argument("--list", action="store_true", help="print the unit list and exit")
    ap.add_argument("--branches", action="store_true", help="the branch units (torch_branches.py) instead of op_db")
    ap.add_argument("--branch-scale", type=float, default=None, help="size factor of the branch units (default 1 on CUDA, 0.02 on the CPU)")
    ap.add_argument("--dtypes", default="", help="op_db dtypes, comma-separated (default float32,bfloat16); "
                    "a/b/c runs the first of a, b, c the op takes (int64/int32/uint8)")
    ap.add_argument("--any-module-dtype", action="store_true", help="modules: the dtypes asked even where module_db lists fewer")
    ap.add_argument("--passes", default="forward,backward", help="op_db and module passes to run (forward only: dtype branches)")
    args = ap.parse_args(argv)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        worker = Worker(args)
    except Exception as exc:
        emit({"ready": False, "error": message(exc)})
        return 1
    if args.list:
        emit({"units": list(worker.units)})
        return 0
    emit({"ready": True})
    for line in sys.stdin:
        unit = line.strip()
        if not unit:
            continue
        emit({"start": unit})
        try:
            if unit not in worker.units:
                raise KeyError(f"unknown unit {unit!r}")
            worker.run_unit(unit)
        except Exception as exc:
            case = worker.base_case(unit, unit.split("|")[0], "", None, "unit")
            case["error"] = message(exc) + " | " + traceback.format_exc(limit=2)[-400:]
            emit({"case": case})
        emit({"done": unit})
        if POISONED[0]:
            return 3  # a fresh worker (new CUDA context) takes the next unit
    return 0


if __name__ == "__main__":
    sys.exit(main())
