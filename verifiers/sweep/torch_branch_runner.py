"""Runs the PyTorch branch units (verifiers/sweep/torch_branches.py) inside a torch sweep worker.

Each unit's Case (kb/case.py, made by branch_inputs.Spec) is one case per pass: forward, and backward
(the gradient of a fixed cotangent with respect to the case's leaves) where it has leaves, by default and under the switch, measured by
the worker's own `measure` (the same runs, reseeding and bitwise comparison as the op_db sweep).
Before measuring, one profiled call records what the case REACHED: the CUDA kernels that ran (the
profiler's kernel names) and the autograd nodes of its graph (`CudnnGridSamplerBackward0` and
`GridSampler2DBackward0` are two branches of one op), so a static candidate is settled with the
case that reached its kernel. A silent case gets the eager replacements: the same spec built in
float64 (cast back), and on the CPU.
"""

from __future__ import annotations

import re
from typing import Any

from kb.case import Case
from kb.protocol import emit
from verifiers.sweep.torch_branches import DTYPES, FLOATS, PLANTED_UNITS, UNITS

UNSUPPORTED = re.compile(r"not implemented for|not supported|Unsupported|unsupported|expected scalar type|"
                         r"must be|only supports|does not support|is not implemented|NYI|not available|no kernel|No viable backend|"
                         r"expected target dtype|expected .{0,40} dtype", re.I)
MAX_KERNELS = 30


def unit_names(planted: bool, dtypes: str = "") -> dict[str, tuple[str, str]]:
    """unit name -> (units key, dtype): `branch:<key>|<dtype>` for each branch unit and dtype it
    takes (DTYPES), narrowed to `dtypes` (comma-separated) when given; the planted unit in float32."""
    keep = tuple(d for d in dtypes.split(",") if d)
    out = {f"branch:{key}|{d}": (key, d) for key in UNITS for d in DTYPES.get(key, FLOATS) if not keep or d in keep}
    if planted:
        out.update({f"branch:{key}|float32": (key, "float32") for key in PLANTED_UNITS})
    return out


def _builder(key):
    return UNITS.get(key) or PLANTED_UNITS[key]


class BranchRunner:
    def __init__(self, worker, message):
        global _MESSAGE
        self.w = worker
        self.torch = worker.torch
        _MESSAGE = message  # the worker's own: it marks the process poisoned after a CUDA error

    # --- what the case reached ------------------------------------------------------------

    def graph(self, out) -> list[str]:
        """Names of the autograd nodes behind the outputs (breadth first, at most 40)."""
        seen: set = set()
        names: list[str] = []
        todo = [o.grad_fn for o in self.w.flat(out) if getattr(o, "grad_fn", None) is not None]
        while todo and len(names) < 40:
            node = todo.pop(0)
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            names.append(node.name())
            todo.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)
        return list(dict.fromkeys(n for n in names if n != "AccumulateGrad"))

    def reached(self, call) -> dict:
        """The kernels (CUDA) and aten ops one profiled call ran."""
        torch = self.torch
        try:
            from torch.autograd import DeviceType
            from torch.profiler import ProfilerActivity, profile

            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.w.dev_type == "cuda" else [])
            with profile(activities=acts) as prof:
                call()
                self.w.sync()
            kernels, aten = [], []
            for e in prof.events():
                if getattr(e, "device_type", None) == DeviceType.CUDA:
                    kernels.append(e.name[:160])
                elif e.name.startswith("aten::"):
                    aten.append(e.name)
            return {"kernels": list(dict.fromkeys(kernels))[:MAX_KERNELS], "aten": list(dict.fromkeys(aten))[:MAX_KERNELS]}
        except Exception as exc:  # the profiler is evidence of the path, never a reason to lose the case
            return {"error": self.w_message(exc)}
        finally:
            torch.manual_seed(0)

    def w_message(self, exc) -> str:
        return w_message(exc)

    # --- passes ---------------------------------------------------------------------------

    def as_dense(self, t):
        torch = self.torch
        return t.to_dense() if t.layout != torch.strided else t

    def backward_of(self, spec: Case, cot_seed=4321):
        torch = self.torch
        cache = {}
        assert spec.build is not None  # a branch unit's case is built
        fn = spec.build()

        def bwd():
            outs = [o for o in self.w.flat(fn()) if o.requires_grad and (o.is_floating_point() or o.is_complex())]
            if not outs:
                raise ValueError("no differentiable output")
            dense = [self.as_dense(o) for o in outs]
            if "cot" not in cache:
                gen = torch.Generator().manual_seed(cot_seed)
                cache["cot"] = [torch.randn(d.shape, generator=gen, dtype=torch.float32).to(d.device, d.dtype) for d in dense]
            loss = sum((d * c).sum() for d, c in zip(dense, cache["cot"]))
            grads = torch.autograd.grad(loss, spec.leaves, allow_unused=True)
            return [g for g in grads if g is not None]
        return bwd

    def run(self, unit: str, which: tuple[str, str]) -> None:
        torch = self.torch
        w = self.w
        key, only = which
        dtypes = (only,)
        scale = w.args.branch_scale if w.args.branch_scale else (1.0 if w.dev_type == "cuda" else 0.02)
        for dname in dtypes:
            dt = getattr(torch, dname)
            try:
                specs = _builder(key)(torch, w.device, dt, scale)
            except Exception as exc:
                case = w.base_case(unit, f"branch:{key}", "", dname, "forward")
                case["error"] = "building inputs: " + w_message(exc)
                emit({"case": case})
                continue
            for spec in specs:
                try:
                    self.one(unit, key, spec, dname, dt, scale)
                except Exception as exc:
                    case = self.case(unit, spec, dname, "forward")
                    case["error"] = "measuring: " + w_message(exc)
                    emit({"case": case})
                finally:
                    w.set_switch(False)
            del specs
            if w.dev_type == "cuda":
                torch.cuda.empty_cache()

    def case(self, unit, spec: Case, dname, pass_) -> dict:
        assert spec.branch is not None and spec.op is not None  # a branch unit's case names both
        variant = spec.branch[len(spec.op) + 1:] if spec.branch.startswith(spec.op + "|") else spec.branch
        return {"op": spec.op, "variant": variant, "branch": spec.branch, "case": f"{unit.split('|')[0]}|{spec.branch}|{dname}|{pass_}",
                "pass": pass_, "dtype": dname, "call": dict(spec.call), "numel": spec.numel, "modes": {}, "class": None,
                "error": None, "fixes": []}

    def one(self, unit, key, spec: Case, dname, dt, scale) -> None:
        torch = self.torch
        w = self.w
        assert spec.build is not None  # a branch unit's case is built
        fn = spec.build()
        try:
            torch.manual_seed(0)
            out = fn()
            w.sync()
        except Exception as exc:
            text = w_message(exc)
            case = self.case(unit, spec, dname, "forward")
            if UNSUPPORTED.search(text):
                case.update({"class": "skipped", "skipped": f"the op does not take this call on {w.dev_type}: {text[:400]}"})
            else:
                case["error"] = "default mode raised: " + text
            emit({"case": case})
            return
        nodes = self.graph(out)
        passes = [("forward", fn)]
        if spec.leaves and any(o.requires_grad for o in w.flat(out)):
            passes.append(("backward", self.backward_of(spec)))
        del out
        for pass_, call in passes:
            case = self.case(unit, spec, dname, pass_)
            case["reached"] = dict(self.reached(call), autograd=nodes)
            for mode in ("default", "switch"):
                w.set_switch(mode == "switch")
                case["modes"][mode] = w.measure(call, w.args.runs)
            w.set_switch(False)
            sw = case["modes"]["switch"]
            if sw.get("raised") is None and (sw.get("distinct") or 0) > 1 and key not in PLANTED_UNITS:
                case["fixes"] = self.fixes(key, spec, pass_, dt, scale, sw)
            emit({"case": case})

    def fixes(self, key, spec, pass_, dt, scale, sw) -> list:
        """For a silent case: the same branch built in float64 (cast back) and on the CPU, under the switch."""
        torch = self.torch
        w = self.w
        out = []
        for fix, dev, fdt in (("float64 then cast back", w.device, torch.float64), ("cpu", "cpu", dt)):
            m: dict[str, Any] = {"distinct": None, "median_ms": None, "raised": None}
            try:
                twin = next(s for s in _builder(key)(torch, dev, fdt, scale) if s.branch == spec.branch)
                inner = twin.build() if pass_ == "forward" else self.backward_of(twin)

                def call(inner=inner):
                    return [o.to(w.device, dt) if o.is_floating_point() and o.layout == torch.strided else o.to(w.device)
                            for o in w.flat(inner())]
                w.set_switch(True)
                m = w.measure(call, w.args.runs)
            except StopIteration:
                m["raised"] = "no such branch in that dtype"
            except Exception as exc:
                m["raised"] = w_message(exc)
            finally:
                w.set_switch(False)
            ratio = round(m["median_ms"] / sw["median_ms"], 3) if m.get("median_ms") and sw.get("median_ms") else None
            out.append({"fix": fix, "distinct": m.get("distinct"), "runs": w.args.runs, "time_ratio": ratio, "raised": m.get("raised")})
        return out


_MESSAGE = None


def w_message(exc) -> str:
    if _MESSAGE is not None:
        return _MESSAGE(exc)
    return f"{type(exc).__name__}: {exc}".strip()[:1500]
