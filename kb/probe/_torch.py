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

Why a torch.compile'd module is watched at its boundary only (`_Watcher`): TorchDynamo
traces the hooks of the modules inside compiled code, breaks the graph at each and compiles
again whenever the state they read changes (minutes for a two-layer model on a CPU); the
hooks on torch.compile's wrapper run outside the compiled code and the parameter hooks in
the autograd engine, so one graph is compiled and the records around it are exact. A
difference made inside is put on the compiled module as a whole (kb.probe.blame); with
TORCH_COMPILE_DISABLE=1 the same script runs it eagerly and every module and call inside is
watched.

Every hook and callback here is wrapped by `recorder.guard` (or catches inside): a failure
of the probe's own recording is noted in the log and the training goes on unchanged.

Why one module of about 680 lines: the hooks, the call recorder and the watcher share one
process-wide state (the busy guard, the open frames, the outputs remembered for the step) and
all of it runs only once the user's script imported torch; the parts that stand alone (call
facts, device settings, the fused-kernel calls) are already their own modules.
"""

from __future__ import annotations

import enum
import functools
import json
import weakref
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode

from kb.probe import _torch_calls, _torch_device, recorder
from kb.probe.nest import map_with_path




class _Busy:
    """Set while the probe's own code makes tensor calls: those are not ops of the user's
    module, so the call-recording mode passes them by. A depth, so nested uses restore it."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        self.depth = 0

    def __bool__(self) -> bool:
        return self.depth > 0

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc) -> None:
        self.depth -= 1


_busy = _Busy()
_collector = _torch_device.Collector()
_registered = [False]  # the collector's step-boundary work is registered with the recorder
_DTYPES: dict = {}  # torch.bfloat16 -> "bfloat16"


def _record_tensor(t, name: str, kind: str, *, path: str = "", op: str | None = None) -> None:
    with _busy:
        _record(t, name, kind, path=path, op=op)


def _record(t, name: str, kind: str, *, path: str, op: str | None) -> None:
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


def _record_any(value, name: str, kind: str, *, op: str | None = None) -> None:
    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, name, kind, path=path, op=op)
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
                _record_tensor(grad, name, "dout", path=path, op=op)
        except Exception as exc:
            recorder.not_recorded("probe.monitor's backward (gradient)", exc)
        return grad, None, None, None


def monitor(value, name: str, ops: list[str]):
    op = ",".join(ops) or None
    if ops:
        recorder.describe(name, ops=ops, framework="pytorch")

    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, name, "forward", path=path, op=op)
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
    qual, name = str(qual), str(name)
    if module is None and qual.startswith(("TensorBase.", "Tensor.")):
        return f"torch.Tensor.{name}"
    if module in ("torch._C._nn",):
        return f"torch.nn.functional.{name}"
    for private, public in (("torch._C._fft", "fft"), ("torch._C._linalg", "linalg"), ("torch._C._special", "special"),
                            ("torch._C._sparse", "sparse")):
        if module == private:  # torch._C._fft.fft_rfft -> torch.fft.rfft; torch._C._sparse._sparse_mm -> torch.sparse.mm
            return f"torch.{public}.{name.lstrip('_').removeprefix(public + '_')}"
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
        self.paused = False  # off the torch-function stack while a compiled module runs

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)  # the user's call: once, its exceptions are the user's
        if self.frames and not _busy:
            _busy.depth += 1
            try:
                name = op_name(func)
                short = name.rsplit(".", 1)[-1]
                recordable = short not in _CREATION and not short.startswith("_")
                if not self.learn:
                    pass
                elif recordable:
                    self._note(func, name, args, kwargs, result=result)
                elif short not in _CREATION:  # indexing and the like: not a suspect, but the data flows on
                    frame = self.frames[-1]
                    frame.mark(result, frame.origin(args, kwargs), frame.made_by(args, kwargs))
                if ((self.record_calls or self.learn) and recordable and short not in _SHAPE_ONLY
                        and not self.frames[-1].leaf and recorder.enabled()):
                    step = recorder.current_step()
                    for i, t in enumerate(_torch_calls.tensors(result)):
                        _record(t, self.frames[-1].label, "call", path=f":{short}[{i}]", op=None)
                        _remember(t, step)
            except Exception as exc:
                recorder.not_recorded("the calls a module makes (TorchFunctionMode)", exc)
            finally:
                _busy.depth -= 1
        return result

    def _note(self, func, name: str, args: tuple, kwargs: dict, *, result) -> None:
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

    def pause(self) -> None:
        """Off the torch-function stack while a compiled module runs (`resume` puts it back)."""
        self.__exit__(None, None, None)
        self.paused = True

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            self.__enter__()

    def _feeds(self, frame: _Frame, values, target: str) -> None:
        """The calls of `frame` upstream of `values` feed `target` (a child, or "output")."""
        seen = self.calls.get(frame.label, {})
        for key in frame.made_by(values):
            if key in seen:
                seen[key]["to"].add(target)

    def enter_module(self, label: str, module, args: tuple, kwargs: dict, *, leaf: bool = False) -> None:
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
                _record_tensor(grad, label, "dout", path=path)
        except Exception as exc:
            recorder.not_recorded("tensor hook (gradient at a module's output)", exc)
        return None

    return hook


def _watch_output(output, label: str) -> None:
    """Record the output, and (via a tensor hook) the gradient that arrives at it."""
    step = recorder.current_step()

    def one(leaf, path):
        if isinstance(leaf, torch.Tensor):
            _record_tensor(leaf, label, "forward", path=path)
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
            _record_tensor(leaf, label, "input", path=path)
            _remember(leaf, step)
        return leaf

    for i, value in enumerate(args):
        map_with_path(one, value, f"[{i}]")
    for key, value in kwargs.items():
        map_with_path(one, value, f"[{key!r}]")


class RunnerState(enum.Enum):
    """Where the call recording of one watched model stands (`_Watcher.state`)."""

    LEARNING = "learning"  # before and during the first recorded forward: the calls are learnt
    RECORDING = "recording"  # the mode is on in every forward (calls=True): call outputs each step
    DONE = "done"  # the calls are learnt; forwards run without the mode


def _optimized_module():
    """torch.compile's module wrapper class (OptimizedModule), or None where this torch has none."""
    try:
        from torch._dynamo.eval_frame import OptimizedModule
    except Exception:  # a torch without TorchDynamo
        return None
    return OptimizedModule


def _dynamo_on() -> bool:
    """Does a torch.compile'd module run compiled here? Not under TORCH_COMPILE_DISABLE=1
    (torch._dynamo.config.disable), where its wrapper calls the original module eagerly."""
    try:
        import torch._dynamo.config as config
    except Exception:
        return False
    return not getattr(config, "disable", False)


@dataclass(frozen=True)
class _Unit:
    """One module as watch() sees it: `label` (its dotted path, the root by its class name),
    `hooked` (the module the hooks go on), `real` (the module itself; for torch.compile's
    wrapper, the original module), `compiled` (a torch.compile'd module that runs compiled:
    its hooks go on the wrapper, outside the compiled code), `inside` (the label of the
    compiled module it runs inside, if any: it gets no module hooks of its own)."""

    label: str
    hooked: torch.nn.Module
    real: torch.nn.Module
    parent: str | None
    leaf: bool
    compiled: bool = False
    inside: str | None = None


def _units(model) -> list[_Unit]:
    """Every module once (as named_modules() lists them), torch.compile's wrappers seen
    through: `torch.compile(Block())` is watched as `Block` at its boundary."""
    wrapper = _optimized_module()
    dynamo = _dynamo_on() if wrapper is not None else False
    out: list[_Unit] = []
    seen: set[int] = set()

    def walk(module, mname: str, parent: str | None, inside: str | None) -> None:
        is_wrapper = wrapper is not None and isinstance(module, wrapper)
        real = module._orig_mod if is_wrapper else module
        if id(real) in seen:
            return
        seen.add(id(real))
        label = mname or type(real).__name__
        in_place = getattr(real, "_compiled_call_impl", None) is not None  # module.compile()
        compiled = (is_wrapper or in_place) and dynamo and inside is None
        out.append(_Unit(label, module if compiled else real, real, parent,
                         leaf=not any(True for _ in real.children()), compiled=compiled, inside=inside))
        for cname, child in real.named_children():
            if child is None:
                continue
            walk(child, f"{mname}.{cname}" if mname else cname, label, inside or (label if compiled else None))

    walk(model, "", None, None)
    return out


class _Watcher(Watch):
    """The hooks watch() installs on one model and the state they share: the call-recording
    mode of the current forward (`mode`) and where the call recording stands (`state`).

    A torch.compile'd module (compiled, TorchDynamo on) is watched at its boundary only: its
    input, output, the gradient at its output and its parameters' gradients, with hooks on
    torch.compile's wrapper, which run outside the compiled code; no hook is put on the
    modules inside it (TorchDynamo would trace them: a graph break at each, and a recompile
    whenever the state they read changes) and the call-recording mode is off while it runs.
    A difference made inside it is put on the compiled module as a whole (kb.probe.blame)."""

    def __init__(self, *, calls: bool, learn: bool) -> None:
        super().__init__()
        self.calls = calls
        self.mode: _OpsMode | None = None
        self.state = RunnerState.LEARNING if learn else (RunnerState.RECORDING if calls else RunnerState.DONE)

    def _wants_mode(self) -> bool:
        return self.calls or self.state is RunnerState.LEARNING

    def pre(self, mod, args, kwargs, *, label: str, is_root: bool, leaf: bool, compiled: bool):
        if is_root and self._wants_mode() and self.mode is None and recorder.enabled() and not compiled:
            mode = _OpsMode(learn=self.state is RunnerState.LEARNING, record_calls=self.calls)
            mode.__enter__()
            self.mode = mode
        if self.mode is not None:
            try:
                self.mode.enter_module(label, mod, args, kwargs, leaf=leaf or compiled)
                if compiled:  # compiled code runs without the mode (TorchDynamo would trace it)
                    self.mode.pause()
            except Exception as exc:
                recorder.not_recorded("module forward pre-hook (a module's inputs, its calls)", exc)
        if recorder.enabled():
            with _busy:
                _watch_input(args, kwargs, label)

    def post(self, mod, args, kwargs, output, *, label: str, is_root: bool, compiled: bool):
        mode = self.mode
        try:
            if mode is not None:
                if compiled:
                    mode.resume()
                mode.exit_module(label, output)
            if recorder.enabled():
                with _busy:
                    _watch_output(output, label)
        finally:  # the call recording ends with the root's forward, whatever failed
            if is_root and mode is not None:
                self.mode = None
                if self.state is RunnerState.LEARNING:
                    self.state = RunnerState.RECORDING if self.calls else RunnerState.DONE
                mode.__exit__(None, None, None)
                if mode.learn:
                    for place, info in mode.places().items():
                        recorder.describe(place, **info)

    def attach(self, unit: _Unit, *, is_root: bool) -> None:
        """The forward pre- and post-hook of one module (not for modules inside compiled code)."""
        pre = recorder.guard("module forward pre-hook (a module's inputs, its calls)")(
            functools.partial(self.pre, label=unit.label, is_root=is_root, leaf=unit.leaf, compiled=unit.compiled))
        post = recorder.guard("module forward hook (a module's output)")(
            functools.partial(self.post, label=unit.label, is_root=is_root, compiled=unit.compiled))
        if unit.compiled and unit.hooked is unit.real:
            # module.compile(): the module's own hooks run inside its compiled call; TorchDynamo
            # runs a disabled function as it is (one graph break) and guards on nothing in it
            import torch._dynamo

            pre, post = torch._dynamo.disable(pre), torch._dynamo.disable(post)
        self.handles.append(unit.hooked.register_forward_pre_hook(pre, with_kwargs=True))
        self.handles.append(unit.hooked.register_forward_hook(post, with_kwargs=True))

    def attach_params(self, unit: _Unit) -> None:
        """Each parameter's gradient (a post-accumulate-grad hook: it runs in the autograd
        engine, also for the parameters of a compiled module)."""
        for pname, p in unit.real.named_parameters(recurse=False):
            full = f"{unit.label}.{pname}" if unit.parent is not None else pname
            try:
                owner = unit.inside or unit.label
                # a parameter inside a compiled module belongs to it, by its path in it (the
                # compiled root's path is empty)
                local = (full.removeprefix(owner + ".") if unit.inside else pname)
                recorder.describe(full, type=module_type(unit.real), module=owner, param=local, framework="pytorch")
                if p.requires_grad:
                    self.handles.append(p.register_post_accumulate_grad_hook(
                        recorder.guard("parameter post-accumulate-grad hook (a parameter's gradient)")(
                            functools.partial(_grad_hook, full=full))))
            except Exception as exc:
                recorder.not_recorded("watch() (attaching a parameter hook)", exc)

    def attach_optimizer(self, optimizer, named: list[tuple[str, object]], *, params: bool) -> None:
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
            self.handles.append(optimizer.register_step_post_hook(after_step))
        except Exception as exc:
            recorder.not_recorded("watch() (attaching the optimizer step hook)", exc)


def _grad_hook(param, *, full: str) -> None:
    if recorder.enabled() and param.grad is not None:
        _record_tensor(param.grad, full, "grad")


def _describe(unit: _Unit) -> None:
    info: dict = {"type": module_type(unit.real), "framework": "pytorch", "parent": unit.parent, "leaf": unit.leaf}
    if unit.compiled:
        info["compiled"] = "torch.compile"
    if unit.inside:
        info["inside"] = unit.inside
    recorder.describe(unit.label, **info)


def watch(model, optimizer=None, *, params: bool = True, ops: bool = True, calls: bool | None = None) -> Watch:
    """Install the hooks (see the module's docstring and `_Watcher`). A hook that cannot be
    attached is noted in the log and the others are still installed; the hooks never raise
    into training. `calls` (None: KB_PROBE_CALLS=1, which `kb probe run --calls` sets): also
    record the output of each call made between children, every step (slower: every
    framework call of the forward then passes through the probe)."""
    import os

    if calls is None:
        calls = os.environ.get("KB_PROBE_CALLS") == "1"
    w = _Watcher(calls=calls, learn=ops)
    units = _units(model)
    for unit in units:
        try:
            _describe(unit)
        except Exception as exc:
            recorder.not_recorded("watch() (describing a module)", exc)
        if unit.inside is not None:
            continue
        try:
            w.attach(unit, is_root=unit.parent is None)
        except Exception as exc:
            recorder.not_recorded("watch() (attaching a module hook)", exc)
    if params:
        for unit in units:
            w.attach_params(unit)
    if optimizer is not None:
        named = [(f"{u.label}.{p}" if u.parent is not None else p, param)
                 for u in units for p, param in u.real.named_parameters(recurse=False)]
        w.attach_optimizer(optimizer, named, params=params)
    return w
