"""Every memo of the query package is made by `kb.query.state.memo()`, so `reset()` empties it:
a module-level dict, list or set made any other way would outlive a `reset()` and answer from
an index that is gone."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import kb
from kb import query
from kb.query import state


def _modules() -> list:
    return [importlib.import_module(f"kb.query.{m.name}") for m in pkgutil.iter_modules(query.__path__)] + [query]


def stray_caches() -> list[str]:
    """Module-level dicts, lists and sets of the query package that `memo()` did not make."""
    registered = {id(m) for m in state.memos()}
    return [f"{module.__name__}.{name}" for module in _modules() for name, value in vars(module).items()
            if type(value) in (dict, list, set) and not name.startswith("__") and id(value) not in registered
            and not (module is state and name == "_MEMOS")]  # the registry itself


def test_every_module_level_container_is_a_registered_memo() -> None:
    assert stray_caches() == []


def test_reset_empties_every_memo() -> None:
    kb.status("tf.nn.bias_add", "1.15")
    kb.status("torch.nn.functional.interpolate", "2.11", call={"mode": "nearest"})
    assert sum(map(len, state.memos())) > 0
    query.reset()
    assert [len(m) for m in state.memos()] == [0] * len(state.memos())
    assert kb.status("tf.nn.bias_add", "1.15").recipe == ("TDP",)  # the index loads again


def test_a_stray_cache_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from kb.query import names

    monkeypatch.setattr(names, "planted", {}, raising=False)  # a cache made without memo()
    assert stray_caches() == ["kb.query.names.planted"]
