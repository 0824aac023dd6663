"""Walk nested structures (list, tuple, named tuple, dict) and rebuild them leaf by leaf.

The seed's probe takes "list, named-tuple, dict, or element ... recursively"; the same walk
serves every framework, so it is framework-free: a leaf is anything else.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable


def is_namedtuple(value: object) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def map_with_path(fn: Callable[[Any, str], Any], value: Any, path: str = "") -> Any:
    """Apply `fn(leaf, path)` to every leaf; paths read like `[0].loss['a']`."""
    if isinstance(value, dict):
        return type(value)((k, map_with_path(fn, v, f"{path}[{k!r}]")) for k, v in value.items())
    if is_namedtuple(value):
        return type(value)(*(map_with_path(fn, v, f"{path}.{f}") for f, v in zip(value._fields, value)))
    if isinstance(value, (list, tuple)):
        return type(value)(map_with_path(fn, v, f"{path}[{i}]") for i, v in enumerate(value))
    return fn(value, path)


def leaves(value: Any) -> list:
    out: list = []
    map_with_path(lambda leaf, _p: out.append(leaf), value)
    return out
