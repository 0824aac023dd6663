"""PyTorch: what each framework call inside a watched module was, in the terms of the
knowledge base's call conditions (parameter values, the exact dtypes of tensor arguments,
`input.ndim`, `input.numel` (the element count), `input.dtype` (the exact dtype: bfloat16, float32, int64; kb.probe.kbask asks
with its kind where the KB takes only kinds), `input.layout` (strided, sparse_coo, ...: sparse
records depend on it), and the attention backend the framework chose).

Why the facts and not just the name: whether a call is reproducible often depends on how it
is called (`interpolate(mode='nearest')` vs `mode='bilinear'`, the attention backend), and
`kb.status(op, version, call=facts)` decides that. Why the data flow ("from"): when a
gradient first differs at a module's output, the call to blame is one that consumed that
output, so each call notes which module outputs, inputs and parameters its arguments came
from.
"""

from __future__ import annotations

import ast
import inspect
import re

import torch

from kb.probe.kbask import DTYPE_NAMES, KINDS

SCALARS = (str, bool, int, float, type(None))
_BACKENDS = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn"}
_names: dict[object, list[str] | None] = {}
_defaults: dict[object, dict[str, object]] = {}
_NO_DEFAULT = object()
_overrides: list[dict] = []


def dtype_name(t: torch.Tensor) -> str:
    """The exact dtype as the knowledge base names it: bfloat16, float32, int64, bool, complex64."""
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        name = _DTYPE_NAMES[t.dtype] = str(t.dtype).replace("torch.", "")
    return name


_DTYPE_NAMES: dict = {}
_LAYOUTS: dict = {torch.strided: "strided", torch.sparse_coo: "sparse_coo", torch.sparse_csr: "sparse_csr"}


def dtype_kind(t: torch.Tensor) -> str:
    if t.dtype is torch.bool:
        return "bool"
    if t.is_complex():
        return "complex"
    return "float" if t.is_floating_point() else "int"


def _from_doc(func) -> list[str] | None:
    """Parameter names from a builtin's docstring signature line(s), e.g. 'linear(input, weight, bias=None)'."""
    doc = getattr(func, "__doc__", None) or ""
    name = getattr(func, "__name__", "")
    start = doc.find(f"{name}(")
    if start < 0:
        return None
    depth, i, text = 0, start + len(name), ""
    for i in range(start + len(name), len(doc)):
        ch = doc[i]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            text = doc[start + len(name) + 1:i]
            break
    else:
        return None
    names, depth, part = [], 0, ""
    defaults = _defaults.setdefault(func, {})
    for ch in text + ",":
        if ch == "," and depth == 0:
            token = re.split(r"[:=]", part.strip(), maxsplit=1)[0].strip()
            if token and token != "*" and not token.startswith("*"):
                names.append(token)
                if "=" in part:
                    try:
                        defaults[token] = ast.literal_eval(part.split("=", 1)[1].strip())
                    except (ValueError, SyntaxError):
                        pass
            part = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        part += ch
    return names


def _from_kb(func, op: str) -> list[str] | None:
    """The op's parameters as the knowledge base's signature inventory lists them (the names
    its call conditions use); None where this KB has no inventory entry for the op."""
    import kb

    parameters = getattr(kb, "parameters", None)
    if parameters is None:
        return None
    try:
        listed = parameters(op)
    except (LookupError, ValueError):
        return None
    if not listed:  # an op the KB knows by name without a signature (torch.relu): none listed
        return None
    names = [name for name, _ in listed]
    if any(name.startswith("*") for name in names):
        names = names[:[n.startswith("*") for n in names].index(True)]
    markers = (getattr(kb, "NO_DEFAULT", None), getattr(kb, "UNKNOWN_DEFAULT", None))
    _defaults[func] = {name: default for name, default in listed
                       if not name.startswith("*") and not any(default is m for m in markers)}
    return ["self", *names] if op.startswith("torch.Tensor.") else names


def param_names(func, op: str) -> list[str] | None:
    """Positional parameter order of `func` (methods start with 'self'); None if unknown."""
    if func in _names:
        return _names[func]
    names = _from_kb(func, op)
    if names is not None:
        _names[func] = names
        return names
    try:
        params = inspect.signature(func).parameters
        names = [p for p in params if p not in ("args", "kwargs")]
        _defaults[func] = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    except (TypeError, ValueError):
        names = _from_doc(func)
        if names is None:
            if not _overrides:
                _overrides.append(torch.overrides.get_testing_overrides())
            lam = _overrides[0].get(func)
            if lam is not None:
                names = list(inspect.signature(lam).parameters)
        elif op.startswith("torch.Tensor.") and (not names or names[0] != "self"):
            names = ["self", *names]
    _names[func] = names
    return names


def _backend(op: str, args: tuple, kwargs: dict) -> str | None:
    """The attention backend PyTorch picks for this call (its own dispatcher's choice)."""
    if not op.endswith("scaled_dot_product_attention"):
        return None
    choose = getattr(torch, "_fused_sdp_choice", None)
    if choose is None:
        return None
    try:
        return _BACKENDS.get(int(choose(*args, **kwargs)))
    except Exception:  # a signature this release does not take: the backend stays unknown
        return None


def facts(func, op: str, args: tuple, kwargs: dict) -> dict:
    """The call facts of the knowledge base's call conditions for one call."""
    out: dict = {}
    names = param_names(func, op) or []
    first = None
    for i, value in enumerate(args):
        key = names[i] if i < len(names) else None
        first = _one(out, key, value, first)
    for key, value in kwargs.items():
        first = _one(out, key, value, first)
    if first is not None:
        out["input.ndim"] = first.dim()
        out["input.numel"] = first.numel()  # a scan's kernel changes with length (kb/calls.py NUMEL)
        out["input.dtype"] = dtype_name(first)
        # strided too: a KB that takes the layout decides a dense call (a sparse-only record
        # does not apply) instead of leaving it open; kb.probe.kbask drops it for a KB without it
        out["input.layout"] = _LAYOUTS.get(first.layout) or str(first.layout).replace("torch.", "")
    backend = _backend(op, args, kwargs)
    if backend:
        out["backend"] = backend
    return out


def _one(out: dict, key: str | None, value: object, first: torch.Tensor | None) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        if first is None:
            return value
        if key:
            out[key] = dtype_name(value)
    elif key and isinstance(value, SCALARS):
        out[key] = value
    return first




def show(func, op: str, call: dict) -> str:
    """A call as people write it, arguments left at their defaults left out:
    "interpolate(mode='bilinear')", "scaled_dot_product_attention(is_causal=True) [backend flash]"."""
    defaults = _defaults.get(func, {})
    shown = [f"{k}={v!r}" for k, v in call.items()
             if "." not in k and k != "backend" and not (isinstance(v, str) and (v in KINDS or v in DTYPE_NAMES))
             and defaults.get(k, _NO_DEFAULT) != v]
    text = f"{op.rsplit('.', 1)[-1]}({', '.join(shown)})"
    if call.get("backend"):
        text += f" [backend {call['backend']}]"
    return text


def tensors(value) -> list[torch.Tensor]:
    """Every tensor in a (nested) argument."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors(v)]
    return []
