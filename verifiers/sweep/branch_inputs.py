"""Inputs and call facts shared by the PyTorch branch units (verifiers/sweep/torch_branches.py).

`Spec` makes one case of a branch unit (a kb/case.py Case); `facts` states every tensor argument's dtype, layout,
device, rank and memory format (the call facts of docs/calls.md) with how the inputs collide;
`B` builds inputs with a fixed seed: mixed magnitudes, ties, isolated peaks, indices from a few
slots.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from kb.case import Case


def Spec(op: str, branch: str, fn: Callable[..., Any], leaves: list, call: dict, numel: int) -> Case:  # noqa: N802
    """One case of a branch unit, in the order the units write it: the public name the call is
    spelled with, the branch id of the inventory, one call (arguments bound as lambda defaults;
    returns the output), the float tensors the backward differentiates against ([] = forward
    only), the call facts (docs/calls.md) and how the inputs were built, and the input's size.
    A Case whose `build()` returns `fn` (the inputs are made already)."""
    return Case(op, call, passes="both", build=lambda: fn, branch=branch, leaves=tuple(leaves), numel=numel)


# --- helpers -------------------------------------------------------------------------------


def dname(torch, dt) -> str:
    return str(dt).replace("torch.", "")


def tfacts(torch, name: str, t) -> dict:
    """Facts of one tensor argument: dtype (exact), layout, device type, rank, memory format."""
    out = {f"{name}.dtype": dname(torch, t.dtype), f"{name}.layout": str(t.layout).replace("torch.", ""),
           f"{name}.device": t.device.type, f"{name}.ndim": t.ndim}
    if t.layout == torch.strided and t.ndim in (4, 5):
        fmt = torch.channels_last if t.ndim == 4 else torch.channels_last_3d
        out[f"{name}.memory_format"] = ("channels_last" if t.ndim == 4 else "channels_last_3d") if (
            t.is_contiguous(memory_format=fmt) and not t.is_contiguous()) else "contiguous_format"
    return out


def facts(torch, tensors: dict, collide: str, addends: int | None, **kw) -> dict:
    """The call facts of a spec: keyword literals, each tensor argument's facts (the first is
    `input`), its shape, and how the inputs collide."""
    out: dict = {}
    for i, (name, t) in enumerate(tensors.items()):
        if t is None:
            continue
        out.update(tfacts(torch, "input" if i == 0 else name, t))
        if i == 0:
            out["input.shape"] = list(t.shape)
        else:
            out[name] = {"tensor": list(t.shape), "dtype": dname(torch, t.dtype)}
    for k, v in kw.items():
        out[k] = v
    out["inputs.collide"] = collide
    if addends is not None:
        out["inputs.addends"] = int(addends)
    return out


class B:
    """Input builders with a fixed seed: mixed magnitudes (rounding then depends on the order of
    additions), ties (integer values), isolated peaks, and indices from a few slots."""

    def __init__(self, torch, dev, dtype, scale):
        self.torch, self.dev, self.dt, self.scale = torch, dev, dtype, scale
        self.gen = torch.Generator().manual_seed(1234)

    def n(self, size: int, least: int = 1) -> int:
        return max(least, int(round(size * self.scale)))

    def mixed(self, *shape, grad=True, dtype=None):
        torch = self.torch
        x = torch.randn(*shape, generator=self.gen) * torch.randint(-6, 7, shape, generator=self.gen).float().exp2()
        return self._done(x, grad, dtype)

    def plain(self, *shape, grad=True, dtype=None, low=None, high=None):
        torch = self.torch
        x = torch.rand(*shape, generator=self.gen) * (high - low) + low if low is not None else torch.randn(*shape, generator=self.gen)
        return self._done(x, grad, dtype)

    def ties(self, *shape, grad=True, levels=3):
        torch = self.torch
        return self._done(torch.randint(0, levels, shape, generator=self.gen).float(), grad, None)

    def peaks(self, *shape, every=5, grad=True):
        """Small noise with a large value every `every` positions along each spatial dim: each peak
        is the maximum of every window (up to every^d of them) that holds it."""
        torch = self.torch
        x = torch.rand(*shape, generator=self.gen) * 0.01
        idx = [slice(None), slice(None)] + [slice(every // 2, None, every)] * (len(shape) - 2)
        x[tuple(idx)] = 10.0
        return self._done(x, grad, None)

    def index(self, n, slots, dtype=None):
        torch = self.torch
        i = torch.randint(0, slots, (n,), generator=self.gen)
        return i.to(self.dev, dtype or torch.int64)

    def _done(self, x, grad, dtype):
        x = x.to(self.dev, dtype or self.dt)
        if grad and x.is_floating_point():
            x.requires_grad_(True)
        return x


def fmt(t, memory_format, torch):
    """The same values in another memory format, still a leaf that requires grad."""
    if memory_format is None:
        return t
    return t.detach().contiguous(memory_format=memory_format).requires_grad_(t.requires_grad)


# --- pooling and interpolation: outputs larger than inputs, peaks, ties -------------------
