"""What runs inside the checked program: started by the start-up hook (kb/check/boot.py)
before the program's first line, it waits for PyTorch or JAX to be imported and then
follows the training.

- Steps. PyTorch: a step ends with `optimizer.step()` (the first optimizer that steps; a
  program without an optimizer: each `backward()` after the first starts a step). JAX: a
  step is one call of a jitted function that takes a gradient (jax.grad, value_and_grad or
  vjp ran while it was traced). After N steps (KB_CHECK_STEPS) the process writes what it
  saw and ends (exit status 0): the check compares the first N steps.
- `run` mode: the loss (each tensor `backward()` is called on) and every parameter after
  each step (every output of a JAX step) go to a probe log (kb.probe's fingerprints), and a
  recipe's in-process switches are applied (kb/check/switches.py). With KB_CHECK_WATCH=1
  every top-level module is also `probe.watch()`ed, so a difference is put on a call.
- `inventory` mode: every call of the first steps is recorded with its facts
  (kb/check/inventory_torch.py, kb/check/inventory_jax.py), and the program's own switches.

Nothing here raises into the program: each hook catches what it raises, notes it in
check.json (`errors`) and on stderr once, and the program goes on with the same results. An
exception of the program itself is noted (`raised`) and re-raised as it was.
"""

from __future__ import annotations

import atexit
import functools
import importlib.abc
import importlib.util
import json
import os
import sys
import time
import traceback
import weakref
from typing import TYPE_CHECKING, Any

from kb.check import boot

if TYPE_CHECKING:  # imports torch: loaded only once the program has imported it
    from kb.check.inventory_torch import Inventory


class _Loader(importlib.abc.Loader):
    """The real loader, then `after(module)` once the module has run."""

    def __init__(self, real, after) -> None:
        self.real, self.after = real, after

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module) -> None:
        self.real.exec_module(module)
        self.after(module)

    def __getattr__(self, name):
        return getattr(self.real, name)


class _PostImport(importlib.abc.MetaPathFinder):
    """Calls `wanted[name](module)` right after a top-level module `name` is imported."""

    def __init__(self, wanted: dict) -> None:
        self.wanted, self.busy = dict(wanted), set[str]()

    def find_spec(self, name, path=None, target=None):
        if name not in self.wanted or name in self.busy:
            return None
        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader, self.wanted.pop(name))
        return spec


class Session:
    """One checked process: its mode, its steps, and what it saw."""

    def __init__(self) -> None:
        env = os.environ
        self.mode = env.get(boot.ENV_MODE, "run")
        self.out = env.get(boot.ENV_OUT) or "."
        self.steps = _positive(env.get(boot.ENV_STEPS), 5)
        self.limit = self.steps
        self.codes = [c for c in env.get(boot.ENV_RECIPE, "").split(",") if c]
        self.watch = env.get(boot.ENV_WATCH) == "1"
        self.started = time.perf_counter()
        self.step = 0
        self.times: list[float] = []
        self.errors: dict[tuple[str, str], dict] = {}
        self.notes: list[dict] = []
        self.recipe: dict = {"applied": [], "failed": []}
        self.counting: str | None = None
        self.raised: dict | None = None
        self.finished = False
        self.log_open = False
        self.frameworks: dict[str, str] = {}
        # PyTorch
        self.torch: Any = None
        self.inventory: Inventory | None = None
        self.primary: weakref.ref | None = None
        self.optimizers: list = []
        self.made_optimizers = 0
        self.backwards = 0
        self.stack: list[str] = []
        self.backends: list[str] = []
        self.compiled: dict[int, str] = {}
        self.watched: set[int] = set()
        self.compiles: list[dict] = []
        # JAX
        self.jax = None
        self.grad_seen = False
        self.jax_calls: list[dict] = []
        self.jax_functions: list[dict] = []
        self.jax_ops: dict[str, list[str]] = {}
        if self.mode == "inventory":
            self.limit = min(self.steps, _positive(env.get("KB_CHECK_INVENTORY_STEPS"), 2))

    # --- bookkeeping -------------------------------------------------------------------

    def error(self, where: str, exc: BaseException) -> None:
        """A failure of the check's own hooks: noted, told once, never raised."""
        try:
            why = f"{type(exc).__name__}: {exc}"[:300]
            entry = self.errors.get((where, why))
            if entry is None:
                if len(self.errors) >= 50:
                    return
                entry = self.errors[(where, why)] = {"where": where, "why": why, "count": 0}
                print(f"kb check: not recorded ({where}): {why}; the program goes on", file=sys.stderr)
            entry["count"] += 1
        except Exception:
            pass

    def guarded(self, where: str, fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                self.error(where, exc)
                return None
        return inner

    def note(self, kind: str, text: str) -> None:
        if len(self.notes) < 50 and {"kind": kind, "text": text} not in self.notes:
            self.notes.append({"kind": kind, "text": text})

    def open_log(self) -> None:
        if self.mode == "run" and not self.log_open:
            from kb import probe

            probe.configure(self.out)
            self.log_open = True

    # --- steps -------------------------------------------------------------------------

    def end_step(self) -> None:
        self._sync()
        self.times.append(time.perf_counter() - self.started)
        if self.mode == "run":
            self._record_params()
            from kb import probe

            probe.step()
        self.step += 1
        del self.stack[:], self.backends[:]
        if self.step >= self.limit:
            self.finish("steps")

    def _sync(self) -> None:
        torch = self.torch
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()

    def _record_params(self) -> None:
        from kb import probe

        pairs: list[tuple[str, Any]] = []
        for i, ref in enumerate(self.optimizers):
            optimizer = ref()
            if optimizer is None:
                continue
            for g, group in enumerate(optimizer.param_groups):
                pairs.extend((f"opt{i}.group{g}.p{j}", p) for j, p in enumerate(group["params"]))
        if pairs:
            probe.summarize_trainable_variables(pairs, "param")

    def finish(self, stopped: str) -> None:
        """Write what was seen; after N steps also end the process (exit status 0)."""
        if self.finished:
            return
        self.finished = True
        try:
            self._write(stopped)
        except Exception as exc:
            self.error("writing check.json", exc)
        if stopped == "steps":
            try:
                if self.log_open:
                    from kb import probe

                    probe.close()
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(0)

    def _write(self, stopped: str) -> None:
        from kb.atomic import write_atomic
        from pathlib import Path

        data = {
            "format": 1, "mode": self.mode, "steps_asked": self.steps, "steps": self.step, "stopped": stopped,
            "counting": self.counting, "step_times": [round(t, 6) for t in self.times],
            "wall_s": round(time.perf_counter() - self.started, 6), "recipe": self.recipe,
            "notes": self.notes, "errors": list(self.errors.values()), "raised": self.raised,
            "frameworks": self.frameworks, "device": self._device(), "compiles": self.compiles,
            "watched": len(self.watched),
        }
        if "torchvision" in sys.modules:
            version = getattr(sys.modules["torchvision"], "__version__", None)
            if isinstance(version, str):
                self.frameworks["torchvision"] = version.split("+")[0]
        if self.torch is not None:
            from kb.check.inventory_torch import settings

            data["settings"] = settings(self.torch)
        Path(self.out).mkdir(parents=True, exist_ok=True)
        write_atomic(Path(self.out) / boot.CHECK_FILE, json.dumps(data, indent=1, sort_keys=True) + "\n")
        if self.mode == "inventory":
            inventory: dict = self.inventory.result() if self.inventory is not None else {"calls": [], "loaders": []}
            inventory["calls"] = inventory["calls"] + self.jax_calls
            inventory["jax_functions"] = self.jax_functions
            inventory["compiles"] = self.compiles
            write_atomic(Path(self.out) / boot.INVENTORY_FILE, json.dumps(inventory, indent=1, sort_keys=True) + "\n")

    def _device(self) -> str | None:
        torch, jax = self.torch, self.jax
        try:
            if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
                return "gpu"
            if jax is not None and jax.default_backend() in ("gpu", "cuda", "rocm"):
                return "gpu"
        except Exception:
            return None
        return "cpu" if (torch is not None or jax is not None) else None

    def at_exit(self) -> None:
        self.finish("exit")

    def excepthook(self, original):
        def hook(kind, value, tb):
            try:
                frames = traceback.extract_tb(tb)[-4:]
                self.raised = {"type": kind.__name__, "message": str(value)[:2000],
                               "where": [f"{f.filename}:{f.lineno}: {f.line or ''}"[:300] for f in frames]}
            except Exception as exc:
                self.error("noting the program's exception", exc)
            original(kind, value, tb)
        return hook

    # --- PyTorch -----------------------------------------------------------------------

    def on_torch(self, torch) -> None:
        self.torch = torch
        self.frameworks["pytorch"] = str(torch.__version__).split("+")[0]
        if self.mode == "run" and self.codes:
            from kb.check import switches

            self.recipe = switches.apply_torch(torch, self.codes, self.note)
        self.open_log()
        from torch.optim.optimizer import register_optimizer_step_post_hook

        register_optimizer_step_post_hook(self.guarded("the optimizer step hook", self._after_step))
        self._wrap_optimizer_init(torch)
        self._wrap_backward(torch)
        if self.mode == "inventory" or self.watch:
            from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

            register_module_forward_pre_hook(self.guarded("the module pre-hook", self._pre))
            register_module_forward_hook(self.guarded("the module hook", self._post))
        self._wrap_compile(torch)
        if self.mode == "inventory":
            from kb.check import inventory_torch

            self.inventory = inventory_torch.Inventory(self._where, lambda: self.step, self.error)
            inventory_torch.watch_seeding(torch, self.inventory)
            inventory_torch.watch_loaders(torch, self.inventory)
            self.inventory.__enter__()

    def _compiling(self) -> bool:
        compiler = getattr(self.torch, "compiler", None)
        return bool(compiler is not None and compiler.is_compiling())

    def _after_step(self, optimizer, args, kwargs) -> None:
        if self._compiling():
            return
        if not any(ref() is optimizer for ref in self.optimizers):
            self.optimizers.append(weakref.ref(optimizer))
        if self.primary is None:
            self.primary = weakref.ref(optimizer)
            self.counting = "optimizer"
        if optimizer is self.primary():
            self.end_step()

    def _wrap_optimizer_init(self, torch) -> None:
        original = torch.optim.Optimizer.__init__
        session = self

        @functools.wraps(original)
        def init(self, *args, **kwargs):
            session.made_optimizers += 1
            return original(self, *args, **kwargs)

        torch.optim.Optimizer.__init__ = init

    def _wrap_backward(self, torch) -> None:
        original = torch.Tensor.backward
        before = self.guarded("recording the loss", self._before_backward)

        @functools.wraps(original)
        def backward(tensor, *args, **kwargs):
            before(tensor)
            return original(tensor, *args, **kwargs)

        torch.Tensor.backward = backward

    def _before_backward(self, tensor) -> None:
        if self._compiling():
            return
        self.backwards += 1
        if self.inventory is not None:
            self.inventory.started = True
        if self.made_optimizers == 0 and self.backwards > 1:  # no optimizer: a backward starts a step
            self.counting = "backward"
            self.end_step()
        if self.mode == "run":
            from kb import probe

            probe.monitor(tensor.detach(), "loss")

    def _where(self):
        return self.stack, (self.backends[-1] if self.backends else None)

    def _pre(self, module, args) -> None:
        if self._compiling():
            return
        if not self.stack and self.watch and id(module) not in self.watched and len(self.watched) < 16:
            self.watched.add(id(module))
            from kb import probe

            probe.watch(module, None)
        self.stack.append(type(module).__name__)
        backend = self.compiled.get(id(module))
        if backend:
            self.backends.append(backend)

    def _post(self, module, args, output) -> None:
        if self._compiling():
            return
        if self.stack:
            self.stack.pop()
        if self.inventory is not None:
            self.inventory.started = True
        if self.compiled.get(id(module)) and self.backends:
            self.backends.pop()

    def _wrap_compile(self, torch) -> None:
        """torch.compile: noted (with its backend and mode); what it returns is marked so the
        inventory gives the calls inside the fact `compiled`."""
        original = torch.compile
        session = self

        @functools.wraps(original)
        def compile(model=None, **kwargs):
            if model is None:
                return lambda fn: compile(fn, **kwargs)
            result = original(model, **kwargs)
            try:
                session._compiled(torch, model, result, kwargs)
            except Exception as exc:
                session.error("noting torch.compile", exc)
            return result

        torch.compile = compile

    def _compiled(self, torch, model, result, kwargs) -> None:
        backend = kwargs.get("backend", "inductor")
        backend = backend if isinstance(backend, str) else getattr(backend, "__name__", "custom")
        if len(self.compiles) < 20:
            self.compiles.append({"backend": backend, "mode": kwargs.get("mode"),
                                  "target": type(model).__name__, "step": self.step})
        if isinstance(result, torch.nn.Module):
            self.compiled[id(result)] = backend
            self.compiled[id(model)] = backend
        elif callable(result) and self.mode == "inventory":
            self.compiled[id(result)] = backend

    # --- JAX ---------------------------------------------------------------------------

    def on_jax(self, jax) -> None:
        from kb.check.jitted import install

        self.jax = jax
        self.frameworks["jax"] = str(jax.__version__)
        self.open_log()
        if self.mode == "run" and os.environ.get(boot.ENV_INVENTORY):
            self.jax_ops = _ops_by_function(os.environ[boot.ENV_INVENTORY])
        install(self, jax)


def _ops_by_function(path: str) -> dict[str, list[str]]:
    """From the inventory: the ops under each jitted function (the probe's blame asks about them)."""
    try:
        with open(path, encoding="utf-8") as handle:  # written by this check's inventory run
            data = json.load(handle)
        out: dict[str, list[str]] = {}
        for call in data.get("calls", []):
            for name in call.get("modules") or []:
                if call.get("primitive"):
                    out.setdefault(name, [])
                    if call["op"] not in out[name]:
                        out[name].append(call["op"])
        return out
    except Exception:
        return {}


def _positive(text: str | None, default: int) -> int:
    try:
        value = int(text or default)
    except ValueError:
        return default
    return value if value >= 1 else default


_session: Session | None = None


def start() -> None:
    """Install the import hooks (called by the start-up hook, once per checked process)."""
    global _session
    session = Session()
    _session = session
    hooks = {"torch": session.guarded("following PyTorch", session.on_torch),
             "jax": session.guarded("following JAX", session.on_jax)}
    for name in list(hooks):
        if name in sys.modules:
            hooks.pop(name)(sys.modules[name])
    sys.meta_path.insert(0, _PostImport(hooks))
    sys.excepthook = session.excepthook(sys.excepthook)
    atexit.register(session.at_exit)
