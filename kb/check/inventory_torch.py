"""PyTorch: every distinct framework call a program makes in its first steps, with the facts
the knowledge base's call conditions use, recorded by a TorchFunctionMode over the whole
process (not only inside modules: a loss computed in the training loop is a call too).

Why these facts: whether a call repeats depends on how it is called (the exact dtypes, the
input's rank, element count and layout, argument values, the attention backend PyTorch picks: see
kb.probe.calls, which the probe's per-module recording uses too), and on the device it runs
on. A call is recorded once per distinct (op, facts, device), with a count, the step it was
first seen in, and the modules it was made in. Also recorded: the DataLoaders made (their
workers), whether and when the program seeded PyTorch's generator before its first random
draw, and the program's own switches after the first steps.

Calls made inside a torch.compile'd module or function (run eagerly here: the inventory
process has TORCH_COMPILE_DISABLE=1) carry the fact `compiled` (the backend: `inductor`).
"""

from __future__ import annotations

import functools
import json

import torch
from torch.overrides import TorchFunctionMode

from kb.probe import calls as probe_calls
from kb.probe.blame import RANDOM

MAX_CALLS = 5000
MAX_COUNTS = 8
"""Distinct element counts (`input.numel`) recorded per call; further ones are recorded without it."""
NUMEL = "input.numel"
WRAPPED = "_kb_check"
"""The attribute that marks a seeding function this module has wrapped already (never twice)."""
ADAPTIVE_AVG = frozenset({"torch.nn.functional.adaptive_avg_pool1d", "torch.nn.functional.adaptive_avg_pool2d",
                          "torch.nn.functional.adaptive_avg_pool3d"})
# composite functionals whose inner calls have records of their own (nn.MultiheadAttention's
# forward calls scaled_dot_product_attention, whose backward kernels differ by backend)
EXPAND = frozenset({"multi_head_attention_forward"})
# tensor factories: their positional sizes are no call facts (the dtype is kept)
FACTORIES = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
                       "logspace", "eye", "empty_strided", "normal", "bernoulli", "multinomial", "poisson"})
# calls that only ask about a tensor or make one from Python data: not computations
IGNORED = frozenset({
    "dim", "size", "numel", "stride", "is_contiguous", "data_ptr", "element_size", "is_floating_point",
    "is_complex", "get_device", "requires_grad_", "item", "tolist", "backward", "register_hook", "retain_grad",
    "tensor", "as_tensor", "from_numpy", "manual_seed", "is_grad_enabled", "get_default_dtype", "numpy",
    "__get__", "__len__", "__format__", "__repr__", "__bool__", "__index__", "__int__", "__float__", "__hash__",
    "__iter__", "__contains__", "__reduce_ex__", "__setstate__", "__deepcopy__", "storage_offset", "untyped_storage",
    "is_set_to", "has_names", "is_sparse", "is_nested", "__array__", "dim_order", "device",
})
DUNDER = {"__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub",
          "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
          "__rtruediv__": "div", "__itruediv__": "div_", "__matmul__": "matmul", "__rmatmul__": "matmul",
          "__pow__": "pow", "__rpow__": "pow", "__neg__": "neg", "__getitem__": "__getitem__",
          "__setitem__": "__setitem__", "__and__": "bitwise_and", "__or__": "bitwise_or", "__floordiv__": "floor_divide",
          "__mod__": "remainder", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__eq__": "eq",
          "__ne__": "ne", "__abs__": "abs", "__invert__": "bitwise_not"}


def public_name(func) -> str | None:
    """The name the knowledge base knows a call by: torch.conv2d (what nn.Conv2d calls) is
    torch.nn.functional.conv2d, `x + y` is torch.Tensor.add; None for private internals."""
    qualified = getattr(func, "_qualified_op_name", None) or getattr(getattr(func, "_schema", None), "name", None)
    if isinstance(qualified, str) and "::" in qualified:  # torch.ops.<namespace>.<op> (torchvision's kernels)
        namespace, _, op = qualified.partition("::")
        if op.startswith("_") or namespace == "profiler":
            return None
        return {"torchvision": f"torchvision.ops.{op}", "aten": f"torch.{op}"}.get(namespace, f"torch.ops.{namespace}.{op}")
    name = probe_calls.op_name(func)
    head, _, short = name.rpartition(".")
    if short in DUNDER:
        short = DUNDER[short]
        name = f"{head}.{short}"
    elif short.startswith("__") and short.endswith("__"):
        return None
    if any(part.startswith("_") and not part.startswith("__") for part in name.split(".")):
        return None
    if short in IGNORED:
        return None
    if head == "torch" and getattr(torch.nn.functional, short, None) is func:
        return f"torch.nn.functional.{short}"
    return name


def _device(args: tuple, kwargs: dict) -> str:
    for t in probe_calls.tensors((args, kwargs)):
        return "gpu" if t.is_cuda else t.device.type
    return "cpu"


class Inventory(TorchFunctionMode):
    """The recorder: `where()` gives the module stack (innermost last) and the compile
    backend in force (kb.check.inside keeps them); `step()` the current step."""

    def __init__(self, where, step, error) -> None:
        super().__init__()
        self.where = where
        self.step = step
        self.error = error
        self.calls: dict[tuple, dict] = {}
        self.counts: dict[tuple, set[int]] = {}  # the element counts seen per call without them (counted)
        self.busy = False
        self.seeded_at: int | None = None  # the step of the first manual_seed, if any
        self.draws_before_seed: dict[str, int] = {}
        self.loaders: list[dict] = []
        self.started = False  # a module's forward or a backward has run: setup is over
        self.reseeded: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.busy and getattr(func, "__name__", None) in EXPAND and func is getattr(
                torch.nn.functional, func.__name__, None):
            result = self.expanded(func, args, kwargs)
        else:
            result = func(*args, **kwargs)  # the program's call, once; its exceptions are the program's
        if not self.busy:
            self.busy = True
            try:
                self.note(func, args, kwargs)
            except Exception as exc:
                self.error("the call inventory (TorchFunctionMode)", exc)
            finally:
                self.busy = False
        return result

    def expanded(self, func, args: tuple, kwargs: dict):
        """Run a composite functional with the calls inside it recorded too. A Python-level
        functional hands itself to the mode at its first line (has_torch_function), and the
        mode is off while it runs, so what it calls is not seen: here its module's check
        answers False once (the call itself is recorded by the caller) while a second
        recorder is on, and the body runs exactly as it would."""
        module = torch.nn.functional
        names = [n for n in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic")
                 if n in vars(module)]
        saved = {n: vars(module)[n] for n in names}

        def once(*_args, **_kwargs):
            for n, original in saved.items():
                setattr(module, n, original)
            return False

        for n in names:
            setattr(module, n, once)
        try:
            with _Inner(self):
                return func(*args, **kwargs)
        finally:
            for n, original in saved.items():
                setattr(module, n, original)

    def note(self, func, args: tuple, kwargs: dict) -> None:
        name = public_name(func)
        if name is None:
            return
        schema = getattr(func, "_schema", None)
        if schema is None and getattr(func, "_qualified_op_name", None):
            schema = getattr(getattr(func, "default", None), "_schema", None)
        facts = _schema_facts(schema, args, kwargs) if schema is not None else probe_calls.facts(func, name, args, kwargs)
        if name.count(".") == 1 and name.rsplit(".", 1)[-1] in FACTORIES and "input.dtype" not in facts:
            facts = {k: v for k, v in kwargs.items() if k in ("dtype",)}
            facts = {k: str(v).replace("torch.", "") for k, v in facts.items()}
        modules, backend = self.where()
        if backend:
            facts["compiled"] = backend
        device = _device(args, kwargs)
        facts = self.counted(name, facts, device)
        key = (name, json.dumps(facts, sort_keys=True, default=str), device)
        entry = self.calls.get(key)
        if entry is None:
            if len(self.calls) >= MAX_CALLS:
                return
            entry = self.calls[key] = {"op": name, "call": _plain(facts), "device": device, "count": 0,
                                       "step": self.step(), "modules": [], "setup": not self.started, "grad": False,
                                       "shown": probe_calls.show(func, name, facts)}
        entry["count"] += 1
        if not entry.get("grad") and torch.is_grad_enabled():
            entry["grad"] = any(t.requires_grad for t in probe_calls.tensors((args, kwargs)))
        if name in ADAPTIVE_AVG:
            size = args[1] if len(args) > 1 else kwargs.get("output_size")
            ones = all(v == 1 for v in (size if isinstance(size, (tuple, list)) else (size,)))
            entry["output_ones"] = entry.get("output_ones", True) and ones
        if name.endswith(("__getitem__", "__setitem__")):
            index = "tensor" if probe_calls.tensors(args[1:2]) else "basic"
            entry["index"] = "tensor" if entry.get("index") == "tensor" else index
        if modules and modules[-1] not in entry["modules"] and len(entry["modules"]) < 4:
            entry["modules"].append(modules[-1])
        if name.rsplit(".", 1)[-1] in RANDOM and self.seeded_at is None:
            self.draws_before_seed[name] = self.draws_before_seed.get(name, 0) + 1

    def counted(self, name: str, facts: dict, device: str) -> dict:
        """The facts with the input's element count while the same call (op, other facts, device) has been
        seen with at most MAX_COUNTS counts; past that, without it (unknown: a record that depends on it
        still applies). Why a bound: a program whose sizes vary step to step (sequences of many lengths)
        would otherwise make one entry per size and reach MAX_CALLS, after which calls go unrecorded."""
        if NUMEL not in facts:
            return facts
        rest = {k: v for k, v in facts.items() if k != NUMEL}
        seen = self.counts.setdefault((name, json.dumps(rest, sort_keys=True, default=str), device), set())
        if facts[NUMEL] in seen or len(seen) < MAX_COUNTS:
            seen.add(facts[NUMEL])
            return facts
        return rest

    def seeded(self) -> None:
        if self.seeded_at is None:
            self.seeded_at = self.step()

    def unseeded(self, name: str) -> None:
        """torch.seed(): a seed from the clock; draws after it differ from run to run."""
        self.seeded_at = None
        if name not in self.reseeded:
            self.reseeded.append(name)

    def loader(self, num_workers: object, shuffle: object, generator: bool, worker_init_fn: bool) -> None:
        if len(self.loaders) < 20:
            self.loaders.append({"op": "torch.utils.data.DataLoader", "device": "any",
                                 "call": {"num_workers": num_workers if isinstance(num_workers, int) else None,
                                          "shuffle": bool(shuffle)},
                                 "generator": generator, "worker_init_fn": worker_init_fn, "step": self.step()})

    def result(self) -> dict:
        return {"calls": list(self.calls.values()), "loaders": self.loaders, "seeded_at": self.seeded_at,
                "draws_before_seed": self.draws_before_seed, "reseeded": self.reseeded}


class _Inner(TorchFunctionMode):
    """The recorder inside a composite functional (Inventory.expanded)."""

    def __init__(self, outer: Inventory) -> None:
        super().__init__()
        self.outer = outer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.outer.__torch_function__(func, types, args, kwargs)


def _schema_facts(schema, args: tuple, kwargs: dict) -> dict:
    """A torch.ops call's facts by its schema's argument names (`torch.ops.torchvision.roi_align`
    takes `rois`, `pooled_height`, ... where the Python function takes `boxes`, `output_size`)."""
    names = [a.name for a in schema.arguments]
    out: dict = {}
    first = None
    for key, value in [*zip(names, args), *kwargs.items()]:
        if isinstance(value, torch.Tensor):
            if first is None:
                first = value
            else:
                out[key] = probe_calls.dtype_name(value)
        elif isinstance(value, (str, bool, int, float)) or value is None:
            out[key] = value
    if first is not None:
        out["input.ndim"] = first.dim()
        out["input.numel"] = first.numel()
        out["input.dtype"] = probe_calls.dtype_name(first)
        out["input.layout"] = "strided" if first.layout is torch.strided else str(first.layout).replace("torch.", "")
    return out


def _plain(facts: dict) -> dict:
    """Facts as JSON values (an unusual scalar becomes its text)."""
    out = {}
    for key, value in facts.items():
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            value = str(value)  # JSON has no NaN or Infinity
        out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
    return out


def watch_seeding(torch_module, inventory: Inventory) -> None:
    """torch.manual_seed (and torch.random.manual_seed, torch.cuda.manual_seed_all) note that
    the program seeded, torch.seed (a seed from the clock) that it unseeded; then each does
    as before."""
    for owner, name in ((torch_module, "seed"), (torch_module.random, "seed")):
        original = getattr(owner, name, None)
        if original is None or getattr(original, WRAPPED, False):
            continue

        def unseeded(*args, __original=original, __name=f"{owner.__name__}.{name}", **kwargs):
            result = __original(*args, **kwargs)
            inventory.unseeded(__name)  # after: torch.seed() itself calls torch.cuda.manual_seed_all
            return result

        functools.update_wrapper(unseeded, original)
        setattr(unseeded, WRAPPED, True)
        setattr(owner, name, unseeded)
    for owner, name in ((torch_module, "manual_seed"), (torch_module.random, "manual_seed"),
                        (torch_module.cuda, "manual_seed_all"), (torch_module.cuda, "manual_seed")):
        original = getattr(owner, name, None)
        if original is None or getattr(original, WRAPPED, False):
            continue

        def seeded(*args, __original=original, **kwargs):
            inventory.seeded()
            return __original(*args, **kwargs)

        functools.update_wrapper(seeded, original)
        setattr(seeded, WRAPPED, True)
        setattr(owner, name, seeded)


def watch_loaders(torch_module, inventory: Inventory) -> None:
    """Each DataLoader made: its workers, shuffling, and whether it was given a generator and
    a worker_init_fn (the facts of the knowledge base's DataLoader record)."""
    loader = torch_module.utils.data.DataLoader
    original = loader.__init__

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            inventory.loader(self.num_workers, kwargs.get("shuffle", args[2] if len(args) > 2 else False),
                             kwargs.get("generator") is not None, self.worker_init_fn is not None)
        except Exception as exc:
            inventory.error("the DataLoader inventory", exc)

    loader.__init__ = init


def settings(torch_module) -> dict:
    """The program's own switches, read after its first steps."""
    out: dict = {}
    try:
        out["deterministic_algorithms"] = bool(torch_module.are_deterministic_algorithms_enabled())
        out["deterministic_warn_only"] = bool(torch_module.is_deterministic_algorithms_warn_only_enabled())
        out["cudnn_deterministic"] = bool(torch_module.backends.cudnn.deterministic)
        out["cudnn_benchmark"] = bool(torch_module.backends.cudnn.benchmark)
        out["cuda"] = bool(torch_module.cuda.is_available())
        out["version"] = torch_module.__version__
    except Exception as exc:  # an unusual build: what could be read
        out["error"] = f"{type(exc).__name__}: {exc}"[:200]
    return out
