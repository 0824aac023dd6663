"""A recipe's codes applied inside the checked process, right after PyTorch is imported and
before the program's own code runs: the program is not edited.

Why the switches are held, not only set: public training code often sets
`torch.backends.cudnn.benchmark = True` itself, after its imports. A check of "the program
with the recipe applied" must run it with the recipe in force, so a later assignment that
would undo a recipe switch is kept from doing so, and noted (`overridden`): the report says
that the program's own setting was overruled.

Each code is applied on its own; one that fails is noted (`failed`) and the others still are.
Nothing here raises into the program.
"""

from __future__ import annotations

import functools
import os
import random

from kb.check.boot import SEED


def apply_torch(torch, codes: list[str], note) -> dict:
    """Apply the in-process codes for PyTorch; returns {"applied": [...], "failed": [...]}.
    `note(kind, text)` records what the program later tried to undo."""
    done: dict = {"applied": [], "failed": []}
    seed = int(os.environ.get("KB_CHECK_SEED", SEED))
    steps = {
        "PT_DET": lambda: _deterministic(torch, note, warn_only=False),
        "PT_FILL": lambda: _fill(torch, note),
        "PT_DETW": lambda: _deterministic(torch, note, warn_only=True),
        "PT_CUDNN_DET": lambda: _hold_cudnn(torch, "deterministic", True, note),
        "PT_NOBENCH": lambda: _hold_cudnn(torch, "benchmark", False, note),
        "PT_CUDNN": lambda: _hold_cudnn_both(torch, note),
        "PT_DLSEED": lambda: _seed_loaders(torch, seed),
        "PT_SDPA_MATH": lambda: _sdpa_math(torch),
        "SEED": lambda: _seed_all(torch, seed, note),
    }
    for code in codes:
        step = steps.get(code)
        if step is None:
            continue
        try:
            step()
            done["applied"].append(code)
        except Exception as exc:
            done["failed"].append({"code": code, "why": f"{type(exc).__name__}: {exc}"[:300]})
    return done


def _deterministic(torch, note, *, warn_only: bool) -> None:
    original = torch.use_deterministic_algorithms
    original(True, warn_only=warn_only)

    @functools.wraps(original)
    def held(mode, *, warn_only=False):
        if not mode:
            note("overridden", "the program called torch.use_deterministic_algorithms(False); the recipe kept it on")
            return None
        return original(True, warn_only=warn_only)

    torch.use_deterministic_algorithms = held


def _fill(torch, note) -> None:
    """PT_FILL: PT_DET, and uninitialized memory filled (torch.utils.deterministic)."""
    _deterministic(torch, note, warn_only=False)
    torch.utils.deterministic.fill_uninitialized_memory = True


def _hold_cudnn_both(torch, note) -> None:
    """PT_CUDNN: cuDNN's deterministic algorithms, and no benchmarking."""
    _hold_cudnn(torch, "deterministic", True, note)
    _hold_cudnn(torch, "benchmark", False, note)


def _hold_cudnn(torch, name: str, value: bool, note) -> None:
    """Set torch.backends.cudnn.<name> and keep it: the module's class property is replaced by
    one whose setter keeps `value` and notes the program's attempt."""
    cudnn = torch.backends.cudnn
    cls = type(cudnn)
    prop = cls.__dict__.get(name)
    setattr(cudnn, name, value)
    if prop is None or not hasattr(prop, "__set__"):
        return
    kept = prop  # the class property the methods below defer to
    getter = getattr(prop, "getter", None) or getattr(prop, "fget", None)

    class Held:
        def __get__(self, obj, objtype=None):
            return kept.__get__(obj, objtype) if getter is None else getter()

        def __set__(self, obj, new):
            if bool(new) != value:
                note("overridden", f"the program set torch.backends.cudnn.{name} = {new!r}; the recipe kept {value!r}")
            kept.__set__(obj, value)

    setattr(cls, name, Held())


def _seed_loaders(torch, seed: int) -> None:
    """PT_DLSEED: every DataLoader with workers gets a seeded generator and a worker_init_fn
    that seeds NumPy and random from torch.initial_seed(), unless the program passed its own
    generator (its own worker_init_fn still runs, after the seeding)."""
    loader = torch.utils.data.DataLoader
    original = loader.__init__

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        workers = kwargs.get("num_workers", args[5] if len(args) > 5 else 0)
        if workers and "generator" not in kwargs and len(args) <= 12:  # generator is the 13th parameter
            kwargs["generator"] = torch.Generator().manual_seed(seed)
        if workers and len(args) <= 10:  # worker_init_fn is the 11th
            kwargs["worker_init_fn"] = functools.partial(_seed_worker, kwargs.get("worker_init_fn"))
        original(self, *args, **kwargs)

    loader.__init__ = init


def _seed_worker(user_fn, worker_id: int) -> None:
    import torch

    seed = torch.initial_seed() % 2**32
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    if user_fn is not None:
        user_fn(worker_id)


def _sdpa_math(torch) -> None:
    """PT_SDPA_MATH for the whole program: the fused attention backends off, math on."""
    cuda = torch.backends.cuda
    for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
        switch = getattr(cuda, name, None)
        if switch is not None:
            switch(False)
    cuda.enable_math_sdp(True)


def _seed_all(torch, seed: int, note) -> None:
    """SEED: every generator seeded at start (the program's own seeding, if any, comes after);
    torch.seed(), which seeds from the clock, is held to the same seed."""
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    for owner in (torch, torch.random):
        original = getattr(owner, "seed", None)
        if original is None:
            continue

        @functools.wraps(original)
        def held(*args, **kwargs):
            note("overridden", f"the program called torch.seed() (a seed from the clock); the recipe seeded {seed}")
            torch.manual_seed(seed)
            return seed

        owner.seed = held
