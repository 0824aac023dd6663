"""PyTorch probes: module hooks (forward, backward, parameter gradients) and `monitor`.

Why these hooks: a forward hook sees a module's output; a full backward hook sees the
gradient its backward produced for its inputs; a post-accumulate-grad hook on each parameter
sees the weight gradient (where e.g. embedding backward's atomics show up). They fire in
execution order, so the first differing record is the place that introduced the difference.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from kb.probe import recorder
from kb.probe.nest import map_with_path

_RAW_VIEW = {torch.bfloat16: torch.int16, torch.float16: torch.int16}
for _name in ("float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _RAW_VIEW[getattr(torch, _name)] = torch.uint8


_busy = [False]  # the probe's own tensor calls are not ops of the user's module


def _record_tensor(t, name: str, kind: str, path: str = "", op: str | None = None) -> None:
    _busy[0] = True
    try:
        _record(t, name, kind, path, op)
    finally:
        _busy[0] = False


def _record(t, name: str, kind: str, path: str, op: str | None) -> None:
    t = t.detach()
    device = "gpu" if t.device.type == "cuda" else t.device.type
    raw = None
    if t.dtype in _RAW_VIEW and t.dtype is not torch.float16:
        raw = t.view(_RAW_VIEW[t.dtype]).cpu().numpy()
        t = t.float()
    if t.is_complex() or t.dtype in (torch.float16, torch.float32, torch.float64) or not t.is_floating_point():
        value = t.cpu().numpy() if not t.is_sparse else t.to_dense().cpu().numpy()
    else:
        value = t.float().cpu().numpy()
    recorder.record(name, kind, value, path=path, framework="pytorch", device=device, op=op, raw=raw)


def _record_any(value, name: str, kind: str, op: str | None = None) -> None:
    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, name, kind, path, op)
        elif leaf is not None:
            recorder.record(name, kind, leaf, path=path, framework="pytorch", op=op)
        return leaf

    map_with_path(one, value)


class _Monitor(torch.autograd.Function):
    """Identity whose backward records the incoming gradient: makes `monitor` back-propagatable."""

    @staticmethod
    def forward(ctx, x, name, path, op):
        ctx.place = (name, path, op)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        name, path, op = ctx.place
        if grad is not None:
            _record_tensor(grad, name, "dout", path, op)
        return grad, None, None, None


def monitor(value, name: str, ops: list[str]):
    op = ",".join(ops) or None
    if ops:
        recorder.describe(name, ops=ops, framework="pytorch")

    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, name, "forward", path, op)
            if leaf.requires_grad and torch.is_grad_enabled():
                return _Monitor.apply(leaf, name, path, op)
        elif leaf is not None:
            recorder.record(name, "forward", leaf, path=path, framework="pytorch", op=op)
        return leaf

    return map_with_path(one, value)


def _named_params(obj, name: str):
    if hasattr(obj, "named_parameters"):
        return list(obj.named_parameters())
    if isinstance(obj, dict):
        return list(obj.items())
    items = list(obj)
    if items and isinstance(items[0], tuple):
        return items
    return [(f"{name}[{i}]", p) for i, p in enumerate(items)]


def monitor_gradients(grads, name: str):
    if hasattr(grads, "named_parameters") or _pairs(grads):
        for pname, p in _named_params(grads, name):
            if p.grad is not None:
                _record_tensor(p.grad, pname, "grad")
        return grads
    _record_any(grads, name, "grad")
    return grads


def _pairs(obj) -> bool:
    return isinstance(obj, (list, tuple)) and bool(obj) and isinstance(obj[0], tuple)


def summarize(variables, name: str) -> None:
    for pname, p in _named_params(variables, name):
        _record_tensor(p, pname, "param")


def module_type(module) -> str:
    """Public name of a module's class: torch.nn.Embedding for torch.nn.modules.sparse.Embedding."""
    cls = type(module)
    if cls.__module__.startswith("torch.nn.modules."):
        return f"torch.nn.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def op_name(func) -> str:
    """Public name of a function seen by a TorchFunctionMode (torch._C._nn.linear -> torch.nn.functional.linear)."""
    qual = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    name = getattr(func, "__name__", qual)
    module = getattr(func, "__module__", None)
    if module is None and qual.startswith(("TensorBase.", "Tensor.")):
        return f"torch.Tensor.{name}"
    if module in ("torch._C._nn",):
        return f"torch.nn.functional.{name}"
    if module in ("torch._C._VariableFunctions", "torch", None):
        return f"torch.{name}"
    return f"{module}.{name}"


_CREATION = {"tensor", "zeros", "ones", "empty", "full", "arange", "zeros_like", "ones_like", "empty_like",
             "randn", "rand", "manual_seed", "is_grad_enabled", "get_default_dtype"}


class _OpsMode(TorchFunctionMode):
    """Notes which torch functions each module calls directly (first forward only)."""

    def __init__(self, stack: list[str]) -> None:
        super().__init__()
        self.stack = stack
        self.seen: dict[str, list[str]] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.stack and not _busy[0]:
            name = op_name(func)
            if name.rsplit(".", 1)[-1] not in _CREATION and not name.rsplit(".", 1)[-1].startswith("_"):
                ops = self.seen.setdefault(self.stack[-1], [])
                if name not in ops:
                    ops.append(name)
        return func(*args, **(kwargs or {}))


class Watch:
    """The hooks `watch()` installed; `.remove()` takes them off."""

    def __init__(self) -> None:
        self.handles: list = []
        self.mode: _OpsMode | None = None

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def watch(model, optimizer=None, *, params: bool = True, ops: bool = True) -> Watch:
    w = Watch()
    stack: list[str] = []
    state = {"mode": None, "done": not ops}
    root_name = type(model).__name__
    names = {}
    for mname, module in model.named_modules():
        label = mname or root_name
        names[id(module)] = label
        recorder.describe(label, type=module_type(module), framework="pytorch")
        leaf = not any(True for _ in module.children())

        def pre(mod, args, label=label, is_root=(module is model)):
            if is_root and not state["done"] and recorder.enabled():
                state["mode"] = _OpsMode(stack)
                state["mode"].__enter__()
            stack.append(label)

        def post(mod, args, output, label=label, is_root=(module is model)):
            if stack and stack[-1] == label:
                stack.pop()
            if recorder.enabled():
                _record_any(output, label, "forward")
            if is_root and state["mode"] is not None:
                mode, state["mode"] = state["mode"], None
                mode.__exit__(None, None, None)
                state["done"] = True
                for place, found in mode.seen.items():
                    recorder.describe(place, ops=found)

        w.handles.append(module.register_forward_pre_hook(pre))
        w.handles.append(module.register_forward_hook(post))
        if leaf:
            def back(mod, grad_input, grad_output, label=label):
                if recorder.enabled():
                    grads = [g for g in grad_input if g is not None and (g.is_floating_point() or g.is_complex())]
                    _record_any(grads[0] if len(grads) == 1 else tuple(grads), label, "backward")

            w.handles.append(module.register_full_backward_hook(back))
    if params:
        for mname, module in model.named_modules():
            for pname, p in module.named_parameters(recurse=False):
                full = f"{mname}.{pname}" if mname else pname
                recorder.describe(full, type=module_type(module), module=names[id(module)], framework="pytorch")
                if p.requires_grad:
                    def grad_hook(param, full=full):
                        if recorder.enabled() and param.grad is not None:
                            _record_tensor(param.grad, full, "grad")

                    w.handles.append(p.register_post_accumulate_grad_hook(grad_hook))
    if optimizer is not None:
        named = [(f"{m}.{p}" if m else p, param) for m, mod in model.named_modules()
                 for p, param in mod.named_parameters(recurse=False)]

        def after_step(opt, args, kwargs):
            if recorder.enabled():
                if params:
                    for full, param in named:
                        _record_tensor(param, full, "update")
                recorder.set_step()

        w.handles.append(optimizer.register_step_post_hook(after_step))
    return w
