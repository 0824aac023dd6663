"""PyTorch probes: module hooks (forward output, the gradient arriving at it, parameter
gradients), the calls each module makes, and `monitor`.

Why these hooks: a forward hook sees a module's output; a hook on that output tensor sees
the gradient arriving at it in backward (a tensor hook, not a full backward hook: it costs
nothing when unused and tolerates in-place consumers such as ReLU(inplace=True)); a
post-accumulate-grad hook on each parameter sees the weight gradient (where e.g. embedding
backward's atomics show up). They fire in execution order, so the first differing record is
where the difference appeared, and the calls recorded with their data flow say which call
made it (kb.probe.diff).
"""

from __future__ import annotations

import json

import torch
from torch.overrides import TorchFunctionMode

from kb.probe import _torch_calls, _torch_device, recorder
from kb.probe.nest import map_with_path


_busy = [False]  # the probe's own tensor calls are not ops of the user's module
_collector = _torch_device.Collector()
_registered = [False]  # the collector's step-boundary work is registered with the recorder
_DTYPES: dict = {}  # torch.bfloat16 -> "bfloat16"


def _record_tensor(t, name: str, kind: str, path: str = "", op: str | None = None) -> None:
    was, _busy[0] = _busy[0], True
    try:
        _record(t, name, kind, path, op)
    finally:
        _busy[0] = was


def _record(t, name: str, kind: str, path: str, op: str | None) -> None:
    """Reserve the record now (execution order), fingerprint on the device, fill in later."""
    t = t.detach()
    if t.is_sparse:
        t = t.to_dense()
    device = "gpu" if t.is_cuda else t.device.type
    dtype = _DTYPES.get(t.dtype)
    if dtype is None:
        dtype = _DTYPES[t.dtype] = str(t.dtype).replace("torch.", "")
    entry = recorder.reserve(name, kind, path=path, framework="pytorch", device=device, op=op,
                             shape=list(t.shape), dtype=dtype)
    if entry is None:
        return
    if not _registered[0]:
        recorder.on_boundary(_collector.submit, _collector.resolve)
        _registered[0] = True
    _collector.add(t, entry, recorder.want_stats())


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
             "randn", "rand", "manual_seed", "is_grad_enabled", "get_default_dtype", "dim", "size", "numel",
             "stride", "is_contiguous", "data_ptr", "element_size", "is_floating_point", "get_device", "requires_grad_"}


class _Frame:
    """One module invocation during the recorded step: where its tensors came from."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.sources: dict[int, frozenset[str]] = {}
        self.keep: list = []  # holds the tensors whose ids are keys, so an id is never reused

    def mark(self, value, sources: frozenset[str]) -> None:
        if not sources:
            return
        for t in _torch_calls.tensors(value):
            old = self.sources.get(id(t), frozenset())
            self.sources[id(t)] = old | sources
            self.keep.append(t)

    def origin(self, *values) -> frozenset[str]:
        found: frozenset[str] = frozenset()
        for value in values:
            for t in _torch_calls.tensors(value):
                found |= self.sources.get(id(t), frozenset())
        return found


class _OpsMode(TorchFunctionMode):
    """Records the framework calls each module makes itself during the first step: the op,
    its call facts, and which of the module's inputs, parameters and children's outputs
    its tensor arguments came from."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[_Frame] = []
        self.calls: dict[str, dict[tuple, dict]] = {}
        self.children: dict[str, dict[str, set[str]]] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if self.frames and not _busy[0]:
            name = op_name(func)
            short = name.rsplit(".", 1)[-1]
            if short not in _CREATION and not short.startswith("_"):
                _busy[0] = True
                try:
                    self._note(func, name, args, kwargs, result)
                finally:
                    _busy[0] = False
        return result

    def _note(self, func, name: str, args: tuple, kwargs: dict, result) -> None:
        frame = self.frames[-1]
        sources = frame.origin(args, kwargs)
        call = _torch_calls.facts(func, name, args, kwargs)
        key = (name, json.dumps(call, sort_keys=True, default=str))
        seen = self.calls.setdefault(frame.label, {})
        entry = seen.get(key)
        if entry is None:
            entry = seen[key] = {"op": name, "call": call, "from": set(),
                                 "shown": _torch_calls.show(func, name, call)}
        entry["from"] |= sources
        frame.mark(result, sources)

    def enter_module(self, label: str, module, args: tuple, kwargs: dict) -> None:
        if self.frames:
            parent = self.frames[-1]
            into = self.children.setdefault(parent.label, {}).setdefault(label, set())
            into |= parent.origin(args, kwargs)
        frame = _Frame(label)
        frame.mark((args, kwargs), frozenset({"input"}))
        for pname, p in module.named_parameters(recurse=False):
            frame.mark(p, frozenset({f"param:{pname}"}))
        for bname, b in module.named_buffers(recurse=False):
            frame.mark(b, frozenset({f"buffer:{bname}"}))
        self.frames.append(frame)

    def exit_module(self, label: str, output) -> None:
        if self.frames and self.frames[-1].label == label:
            self.frames.pop()
        if self.frames:
            self.frames[-1].mark(output, frozenset({label}))

    def places(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for label, calls in self.calls.items():
            out.setdefault(label, {})["calls"] = [
                {"op": c["op"], "call": c["call"], "shown": c["shown"], "from": sorted(c["from"])} for c in calls.values()]
            out[label]["ops"] = list(dict.fromkeys(c["op"] for c in calls.values()))
        for label, kids in self.children.items():
            out.setdefault(label, {})["children"] = {k: sorted(v) for k, v in kids.items()}
        return out


class Watch:
    """The hooks `watch()` installed; `.remove()` takes them off."""

    def __init__(self) -> None:
        self.handles: list = []

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles.clear()


def _watch_output(output, label: str) -> None:
    """Record the output, and (via a tensor hook) the gradient that arrives at it."""
    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, label, "forward", path)
            if leaf.requires_grad and torch.is_grad_enabled():
                leaf.register_hook(lambda g, path=path: _record_tensor(g, label, "dout", path) if
                                   recorder.enabled() and g is not None else None)
        elif leaf is not None:
            recorder.record(label, "forward", leaf, path=path, framework="pytorch")
        return leaf

    map_with_path(one, output)


def watch(model, optimizer=None, *, params: bool = True, ops: bool = True) -> Watch:
    w = Watch()
    state: dict = {"mode": None, "done": not ops}
    root_name = type(model).__name__
    names = {}
    for mname, module in model.named_modules():
        label = mname or root_name
        names[id(module)] = label
        recorder.describe(label, type=module_type(module), framework="pytorch",
                          parent=(mname.rsplit(".", 1)[0] if "." in mname else root_name) if mname else None,
                          leaf=not any(True for _ in module.children()))

        def pre(mod, args, kwargs, label=label, is_root=(module is model)):
            if is_root and not state["done"] and state["mode"] is None and recorder.enabled():
                state["mode"] = _OpsMode()
                state["mode"].__enter__()
            if state["mode"] is not None:
                state["mode"].enter_module(label, mod, args, kwargs)

        def post(mod, args, kwargs, output, label=label, is_root=(module is model)):
            mode = state["mode"]
            if mode is not None:
                mode.exit_module(label, output)
            if recorder.enabled():
                _busy[0] = True
                try:
                    _watch_output(output, label)
                finally:
                    _busy[0] = False
            if is_root and mode is not None:
                state["mode"] = None
                mode.__exit__(None, None, None)
                state["done"] = True
                for place, info in mode.places().items():
                    recorder.describe(place, **info)

        w.handles.append(module.register_forward_pre_hook(pre, with_kwargs=True))
        w.handles.append(module.register_forward_hook(post, with_kwargs=True))
    if params:
        for mname, module in model.named_modules():
            for pname, p in module.named_parameters(recurse=False):
                full = f"{mname}.{pname}" if mname else pname
                recorder.describe(full, type=module_type(module), module=names[id(module)], param=pname,
                                  framework="pytorch")
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
                # parameters after the step only where statistics are kept: a difference made
                # by the optimizer itself also shows in the next step's first forward
                if params and recorder.want_stats():
                    for full, param in named:
                        _record_tensor(param, full, "update")
                recorder.set_step()

        w.handles.append(optimizer.register_step_post_hook(after_step))
    return w
