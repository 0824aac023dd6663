"""PyTorch probes: module hooks (forward output, the gradient arriving at it, parameter
gradients), the calls each module makes, and `monitor`.

Why these hooks: a forward hook sees a module's output; a hook on that output tensor sees
the gradient arriving at it in backward (a tensor hook, not a full backward hook: it costs
nothing when unused and tolerates in-place consumers such as ReLU(inplace=True)); a
post-accumulate-grad hook on each parameter sees the weight gradient (where e.g. embedding
backward's atomics show up). They fire in execution order, so the first differing record is
where the difference appeared, and the calls recorded with their data flow say which call
made it (kb.probe.diff).

Why each module's inputs are recorded too (kind `input`, in the forward pre-hook): a module
handed a different input is not a suspect; the diff blames the first record that differs
while the inputs before it matched, so a difference made between two children by the
parent's own calls (`F.dropout`, `torch.cat`) is put on those calls, not on the child that
received it. An input that is the very tensor a watched module returned earlier in the
step, unmodified since (same version counter), is not recorded again: its fingerprint is
that output's.

Every hook and callback here is wrapped by `recorder.guard` (or catches inside): a failure
of the probe's own recording is noted in the log and the training goes on unchanged.
"""

from __future__ import annotations

import json
import weakref

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
    if t.layout is not torch.strided:
        t = t.to_dense()
    device = "gpu" if t.is_cuda else t.device.type
    dtype = _DTYPES.get(t.dtype)
    if dtype is None:
        dtype = _DTYPES[t.dtype] = str(t.dtype).replace("torch.", "")
    entry = recorder.reserve(name, kind, path=path, framework="pytorch", device=device, op=op,
                             shape=list(t.shape), dtype=dtype)
    if entry is None:
        return
    try:
        if not _registered[0]:
            recorder.on_boundary(_collector.submit, _collector.resolve)
            _registered[0] = True
        _collector.add(t, entry, recorder.want_stats())
    except Exception:
        recorder.discard(entry)  # never a reserved record that holds back the ones after it
        raise


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
        try:
            name, path, op = ctx.place
            if grad is not None and recorder.enabled():
                _record_tensor(grad, name, "dout", path, op)
        except Exception as exc:
            recorder.not_recorded("probe.monitor's backward (gradient)", exc)
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
    for private, public in (("torch._C._fft", "fft"), ("torch._C._linalg", "linalg"), ("torch._C._special", "special")):
        if module == private:  # torch._C._fft.fft_rfft -> torch.fft.rfft
            return f"torch.{public}.{name.removeprefix(public + '_')}"
    if module in ("torch._C._VariableFunctions", "torch", "torch.functional", None):
        return f"torch.{name}"
    return f"{module}.{name}"


_CREATION = {"tensor", "zeros", "ones", "empty", "full", "arange", "zeros_like", "ones_like", "empty_like",
             "manual_seed", "is_grad_enabled", "get_default_dtype", "dim", "size", "numel",
             "stride", "is_contiguous", "data_ptr", "element_size", "is_floating_point", "get_device", "requires_grad_"}


class _Frame:
    """One module invocation during the recorded step: where its tensors came from (its
    inputs, parameters, children's outputs) and which of its own calls made them."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.leaf = False
        self.sources: dict[int, frozenset[str]] = {}
        self.producers: dict[int, frozenset] = {}  # tensor id -> keys of this frame's calls upstream of it
        self.keep: list = []  # holds the tensors whose ids are keys, so an id is never reused

    def mark(self, value, sources: frozenset[str], producers: frozenset = frozenset()) -> None:
        if not sources and not producers:
            return
        for t in _torch_calls.tensors(value):
            if sources:
                self.sources[id(t)] = self.sources.get(id(t), frozenset()) | sources
            if producers:
                self.producers[id(t)] = self.producers.get(id(t), frozenset()) | producers
            self.keep.append(t)

    def origin(self, *values) -> frozenset[str]:
        found: frozenset[str] = frozenset()
        for value in values:
            for t in _torch_calls.tensors(value):
                found |= self.sources.get(id(t), frozenset())
        return found

    def made_by(self, *values) -> frozenset:
        found: frozenset = frozenset()
        for value in values:
            for t in _torch_calls.tensors(value):
                found |= self.producers.get(id(t), frozenset())
        return found


_SHAPE_ONLY = {"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "unsqueeze", "squeeze",
               "flatten", "unflatten", "contiguous", "expand", "expand_as", "chunk", "split", "unbind", "t",
               "narrow", "select", "movedim", "detach", "clone", "to", "float", "half", "bfloat16", "type_as"}


class _OpsMode(TorchFunctionMode):
    """Records the framework calls each module makes itself during the first step (`learn`):
    the op, its call facts, which of the module's inputs, parameters and children's outputs
    its tensor arguments came from, and which children (or the module's output) its result
    flowed into; and the output of each call a module with children makes between them
    (kind `call`), so that the diff can single out one call of a chain (dropout, then an add,
    then a cat) instead of naming the whole chain. After the first step the mode is off
    (every framework call through Python costs time), unless `record_calls`
    (`watch(..., calls=True)`, KB_PROBE_CALLS=1) keeps it on to record those outputs every
    step."""

    def __init__(self, learn: bool = True, record_calls: bool = False) -> None:
        super().__init__()
        self.learn = learn
        self.record_calls = record_calls
        self.frames: list[_Frame] = []
        self.calls: dict[str, dict[tuple, dict]] = {}
        self.children: dict[str, dict[str, set[str]]] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)  # the user's call: once, its exceptions are the user's
        if self.frames and not _busy[0]:
            _busy[0] = True
            try:
                name = op_name(func)
                short = name.rsplit(".", 1)[-1]
                recordable = short not in _CREATION and not short.startswith("_")
                if not self.learn:
                    pass
                elif recordable:
                    self._note(func, name, args, kwargs, result)
                elif short not in _CREATION:  # indexing and the like: not a suspect, but the data flows on
                    frame = self.frames[-1]
                    frame.mark(result, frame.origin(args, kwargs), frame.made_by(args, kwargs))
                if ((self.record_calls or self.learn) and recordable and short not in _SHAPE_ONLY
                        and not self.frames[-1].leaf and recorder.enabled()):
                    step = recorder.current_step()
                    for i, t in enumerate(_torch_calls.tensors(result)):
                        _record(t, self.frames[-1].label, "call", f":{short}[{i}]", None)
                        _remember(t, step)
            except Exception as exc:
                recorder.not_recorded("the calls a module makes (TorchFunctionMode)", exc)
            finally:
                _busy[0] = False
        return result

    def _note(self, func, name: str, args: tuple, kwargs: dict, result) -> None:
        frame = self.frames[-1]
        sources = frame.origin(args, kwargs)
        upstream = frame.made_by(args, kwargs)
        call = _torch_calls.facts(func, name, args, kwargs)
        key = (name, json.dumps(call, sort_keys=True, default=str))
        seen = self.calls.setdefault(frame.label, {})
        entry = seen.get(key)
        if entry is None:
            entry = seen[key] = {"op": name, "call": call, "from": set(), "to": set(),
                                 "shown": _torch_calls.show(func, name, call)}
        entry["from"] |= sources
        frame.mark(result, sources, upstream | {key})

    def _feeds(self, frame: _Frame, values, target: str) -> None:
        """The calls of `frame` upstream of `values` feed `target` (a child, or "output")."""
        seen = self.calls.get(frame.label, {})
        for key in frame.made_by(values):
            if key in seen:
                seen[key]["to"].add(target)

    def enter_module(self, label: str, module, args: tuple, kwargs: dict, leaf: bool = False) -> None:
        if not self.learn:
            frame = _Frame(label)
            frame.leaf = leaf
            self.frames.append(frame)
            return
        if self.frames:
            parent = self.frames[-1]
            into = self.children.setdefault(parent.label, {}).setdefault(label, set())
            into |= parent.origin(args, kwargs)
            self._feeds(parent, (args, kwargs), label)
        frame = _Frame(label)
        frame.leaf = leaf
        frame.mark((args, kwargs), frozenset({"input"}))
        for pname, p in module.named_parameters(recurse=False):
            frame.mark(p, frozenset({f"param:{pname}"}))
        for bname, b in module.named_buffers(recurse=False):
            frame.mark(b, frozenset({f"buffer:{bname}"}))
        self.frames.append(frame)

    def exit_module(self, label: str, output) -> None:
        if self.frames and self.frames[-1].label == label:
            if self.learn:
                self._feeds(self.frames[-1], output, "output")
            self.frames.pop()
        if self.frames and self.learn:
            self.frames[-1].mark(output, frozenset({label}))

    def places(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for label, calls in self.calls.items():
            out.setdefault(label, {})["calls"] = [
                {"op": c["op"], "call": c["call"], "shown": c["shown"], "from": sorted(c["from"]), "to": sorted(c["to"])}
                for c in calls.values()]
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


_outputs: dict[int, tuple] = {}  # id -> (weakref to a recorded module input or output, its version, step)


def _dout_hook(label: str, path: str):
    """The tensor hook on a module output: records the gradient arriving there. Returns None
    (the gradient is left as it is), also when recording fails."""
    def hook(grad):
        try:
            if grad is not None and recorder.enabled():
                _record_tensor(grad, label, "dout", path)
        except Exception as exc:
            recorder.not_recorded("tensor hook (gradient at a module's output)", exc)
        return None

    return hook


def _watch_output(output, label: str) -> None:
    """Record the output, and (via a tensor hook) the gradient that arrives at it."""
    step = recorder.current_step()

    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, label, "forward", path)
            _remember(leaf, step)
            if leaf.requires_grad and torch.is_grad_enabled():
                leaf.register_hook(_dout_hook(label, path))
        elif leaf is not None:
            recorder.record(label, "forward", leaf, path=path, framework="pytorch")
        return leaf

    map_with_path(one, output)


def _remember(t, step: int) -> None:
    try:
        _outputs[id(t)] = (weakref.ref(t), t._version, step)
    except TypeError:  # a tensor subclass without weak references: recorded each time
        pass


def _recorded_output(t) -> bool:
    """Is `t` a module's input or output recorded in this step and not modified since?"""
    seen = _outputs.get(id(t))
    return (seen is not None and seen[0]() is t and seen[1] == t._version
            and seen[2] == recorder.current_step())


def _watch_input(args: tuple, kwargs: dict, label: str) -> None:
    """Record the tensors a module was handed (kind `input`), but not those recorded already
    in this step (a watched module's output or its parent's input), unchanged since: their
    fingerprint is in the log."""
    if len(_outputs) > 100_000:  # tensors of past steps: their entries are dead weight
        _outputs.clear()
    step = recorder.current_step()

    def one(leaf, path):
        if isinstance(leaf, torch.Tensor) and not _recorded_output(leaf):
            _record_tensor(leaf, label, "input", path)
            _remember(leaf, step)
        return leaf

    for i, value in enumerate(args):
        map_with_path(one, value, f"[{i}]")
    for key, value in kwargs.items():
        map_with_path(one, value, f"[{key!r}]")


def watch(model, optimizer=None, *, params: bool = True, ops: bool = True, calls: bool | None = None) -> Watch:
    """Install the hooks (see the module's docstring). A hook that cannot be attached is noted
    in the log and the others are still installed; the hooks never raise into training.
    `calls` (None: KB_PROBE_CALLS=1, which `kb probe run --calls` sets): also record the
    output of each call made between children, every step (slower: every framework call
    of the forward then passes through the probe)."""
    import os

    w = Watch()
    if calls is None:
        calls = os.environ.get("KB_PROBE_CALLS") == "1"
    state: dict = {"mode": None, "done": not ops}
    root_name = type(model).__name__
    names = {}
    for mname, module in model.named_modules():
        label = mname or root_name
        names[id(module)] = label
        try:
            recorder.describe(label, type=module_type(module), framework="pytorch",
                              parent=(mname.rsplit(".", 1)[0] if "." in mname else root_name) if mname else None,
                              leaf=not any(True for _ in module.children()))
        except Exception as exc:
            recorder.not_recorded("watch() (describing a module)", exc)

        @recorder.guard("module forward pre-hook (a module's inputs, its calls)")
        def pre(mod, args, kwargs, label=label, is_root=(module is model),
                leaf=not any(True for _ in module.children())):
            if is_root and (calls or not state["done"]) and state["mode"] is None and recorder.enabled():
                mode = _OpsMode(learn=not state["done"], record_calls=calls)
                mode.__enter__()
                state["mode"] = mode
            if state["mode"] is not None:
                try:
                    state["mode"].enter_module(label, mod, args, kwargs, leaf)
                except Exception as exc:
                    recorder.not_recorded("module forward pre-hook (a module's inputs, its calls)", exc)
            if recorder.enabled():
                was, _busy[0] = _busy[0], True
                try:
                    _watch_input(args, kwargs, label)
                finally:
                    _busy[0] = was

        @recorder.guard("module forward hook (a module's output)")
        def post(mod, args, kwargs, output, label=label, is_root=(module is model)):
            mode = state["mode"]
            try:
                if mode is not None:
                    mode.exit_module(label, output)
                if recorder.enabled():
                    was, _busy[0] = _busy[0], True
                    try:
                        _watch_output(output, label)
                    finally:
                        _busy[0] = was
            finally:  # the call recording ends with the root's forward, whatever failed
                if is_root and mode is not None:
                    state["mode"] = None
                    state["done"] = True
                    mode.__exit__(None, None, None)
                    if mode.learn:
                        for place, info in mode.places().items():
                            recorder.describe(place, **info)

        try:
            w.handles.append(module.register_forward_pre_hook(pre, with_kwargs=True))
            w.handles.append(module.register_forward_hook(post, with_kwargs=True))
        except Exception as exc:
            recorder.not_recorded("watch() (attaching a module hook)", exc)
    if params:
        for mname, module in model.named_modules():
            for pname, p in module.named_parameters(recurse=False):
                full = f"{mname}.{pname}" if mname else pname
                try:
                    recorder.describe(full, type=module_type(module), module=names[id(module)], param=pname,
                                      framework="pytorch")
                    if p.requires_grad:
                        @recorder.guard("parameter post-accumulate-grad hook (a parameter's gradient)")
                        def grad_hook(param, full=full):
                            if recorder.enabled() and param.grad is not None:
                                _record_tensor(param.grad, full, "grad")

                        w.handles.append(p.register_post_accumulate_grad_hook(grad_hook))
                except Exception as exc:
                    recorder.not_recorded("watch() (attaching a parameter hook)", exc)
    if optimizer is not None:
        named = [(f"{m}.{p}" if m else p, param) for m, mod in model.named_modules()
                 for p, param in mod.named_parameters(recurse=False)]

        def after_step(opt, args, kwargs):
            try:
                if recorder.enabled() and params and recorder.want_stats():
                    # parameters after the step only where statistics are kept: a difference made
                    # by the optimizer itself also shows in the next step's first forward
                    for full, param in named:
                        _record_tensor(param, full, "update")
            except Exception as exc:
                recorder.not_recorded("optimizer step hook (parameters after the step)", exc)
            try:
                if recorder.enabled():
                    recorder.set_step()
            except Exception as exc:
                recorder.not_recorded("optimizer step hook (starting the next step)", exc)

        try:
            w.handles.append(optimizer.register_step_post_hook(after_step))
        except Exception as exc:
            recorder.not_recorded("watch() (attaching the optimizer step hook)", exc)
    return w
