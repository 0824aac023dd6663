"""kb.probe never raises into the training script: a failure planted in each entry point the
probe installs (hooks, callbacks, the call-recording mode, the public functions) is caught,
noted once in meta.json's `not_recorded` with where and why, and the training ends with
exactly the results it has without the probe.

Each plant replaces one internal of the probe with a function that raises (monkeypatch), so
the test fails if an entry point lets the exception through, changes the training, or
forgets to say what it did not record.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from kb import probe  # noqa: E402
from kb.probe import _torch, _torch_calls, _torch_device, recorder  # noqa: E402


class Planted(RuntimeError):
    """The failure planted in the probe (never raised by torch or the training itself)."""


def _boom(*args, **kwargs):
    raise Planted("planted failure")


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(6, 6)
        self.b = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = torch.relu(self.a(x))
        h = torch.einsum("bi,bi->bi", h, h)
        h.add_(1.0)  # an in-place call: run twice (or not at all) it would change the results
        return self.b(h)


def _train(log: Path | None) -> list:
    """Two steps of SGD with every probe entry point in use; the parameters at the end."""
    probe.configure(log)
    torch.manual_seed(0)
    model = _Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = probe.watch(model, opt)
    x = torch.linspace(-1, 1, 24).reshape(4, 6)
    for _ in range(2):
        y = probe.monitor(model(x), "out")
        y.square().sum().backward()
        probe.monitor_gradients(model)
        opt.step()
        opt.zero_grad()
    probe.summarize_trainable_variables(model)
    probe.step()
    handle.remove()
    probe.close()
    probe.configure(None)
    return [p.detach().clone() for p in model.parameters()]


def _only(kind: str | None = None, name: str | None = None, op=None):
    """A stand-in for _record_tensor that fails for records of `kind` (and `name`)."""
    real = op or _torch._record_tensor

    def record(t, n, k, *args, **kwargs):
        if (kind is None or k == kind) and (name is None or n == name):
            raise Planted(f"planted failure ({k} of {n})")
        return real(t, n, k, *args, **kwargs)

    return record


# (entry point, how to plant the failure, what `where` in meta.json must say)
PLANTS = [
    ("module pre-hook: inputs", lambda m: m.setattr(_torch, "_watch_input", _boom), "module forward pre-hook"),
    ("module pre-hook: call recording", lambda m: m.setattr(_torch._OpsMode, "enter_module", _boom),
     "module forward pre-hook"),
    ("module forward hook", lambda m: m.setattr(_torch, "_watch_output", _boom), "module forward hook"),
    ("tensor hook (gradient at an output)", lambda m: m.setattr(_torch, "_record_tensor", _only("dout", "a")),
     "tensor hook"),
    ("probe.monitor's autograd backward", lambda m: m.setattr(_torch, "_record_tensor", _only("dout", "out")),
     "probe.monitor's backward"),
    ("TorchFunctionMode", lambda m: m.setattr(_torch_calls, "facts", _boom), "TorchFunctionMode"),
    ("parameter post-accumulate-grad hook", lambda m: m.setattr(_torch, "_record_tensor", _only("grad")),
     "parameter post-accumulate-grad hook"),
    ("optimizer step hook: parameters", lambda m: m.setattr(_torch, "_record_tensor", _only("update")),
     "optimizer step hook (parameters after the step)"),
    ("optimizer step hook: next step", lambda m: m.setattr(recorder, "set_step", _boom),
     "optimizer step hook (starting the next step)"),
    ("step boundary callbacks", lambda m: m.setattr(_torch_device.Collector, "submit", _boom), "step boundary"),
    ("device fingerprint (every record)", lambda m: m.setattr(_torch_device.Collector, "add", _boom),
     "module forward hook"),
    ("probe.monitor", lambda m: m.setattr(_torch, "monitor", _boom), "probe.monitor"),
    ("probe.monitor_gradients", lambda m: m.setattr(_torch, "monitor_gradients", _boom),
     "probe.monitor_gradients"),
    ("probe.summarize_trainable_variables", lambda m: m.setattr(_torch, "summarize", _boom),
     "probe.summarize_trainable_variables"),
    ("probe.step", lambda m: m.setattr(recorder, "set_step", _boom), "probe.step"),
    ("probe.close", lambda m: m.setattr(recorder, "_drain_devices", _boom), "probe.close"),
    ("probe.watch", lambda m: m.setattr(_torch, "watch", _boom), "probe.watch"),
]


@pytest.fixture(scope="module")
def baseline() -> list:
    return _train(None)


@pytest.mark.parametrize("entry, plant, where", PLANTS, ids=[p[0] for p in PLANTS])
def test_a_failure_in_each_torch_entry_point_is_noted_and_training_goes_on(
        entry, plant, where, baseline, tmp_path: Path, monkeypatch, capsys) -> None:
    if entry == "step boundary callbacks":  # registered once per process: make sure it is
        recorder.on_boundary(_torch._collector.submit, _torch._collector.resolve)
        monkeypatch.setattr(recorder._state, "boundary", [(_boom, _boom)])
    plant(monkeypatch)
    params = _train(tmp_path / "log")
    assert all(torch.equal(a, b) for a, b in zip(params, baseline)), f"{entry}: the training changed"
    meta = json.loads((tmp_path / "log" / "meta.json").read_text())
    noted = [e for e in meta["not_recorded"] if where in e["where"]]
    assert noted and all("Planted: planted failure" in e["why"] and e["count"] >= 1 for e in noted), meta["not_recorded"]
    assert len({(e["where"], e["why"]) for e in meta["not_recorded"]}) == len(meta["not_recorded"])  # once each
    assert "kb.probe: not recorded" in capsys.readouterr().err


def test_the_users_call_runs_once_and_its_exception_is_the_users(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_torch_calls, "facts", _boom)  # the mode's own recording fails on every call
    probe.configure(tmp_path / "log")
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    handle = probe.watch(model)
    counter = torch.zeros(1)

    class Bad(torch.nn.Module):
        def forward(self, x):
            counter.add_(1)  # through the mode: must run exactly once
            return torch.cat([x, torch.ones(3, 3)])  # the user's own error

    bad = Bad()
    handle.remove()
    handle = probe.watch(bad)
    with pytest.raises(RuntimeError) as caught:
        bad(torch.ones(2, 2))
    assert "Sizes of tensors must match" in str(caught.value) and not isinstance(caught.value, Planted)
    assert counter.item() == 1
    handle.remove()
    probe.close()
    probe.configure(None)


def test_a_failure_closing_the_log_at_exit_is_not_raised(tmp_path: Path, monkeypatch, capsys) -> None:
    probe.configure(tmp_path / "log")
    probe.monitor(torch.ones(3), "x")
    monkeypatch.setattr(recorder, "flush", _boom)
    recorder._close_at_exit()  # what atexit runs
    assert recorder._state.handle is None
    assert "closing the log" in capsys.readouterr().err
    probe.configure(None)


def test_a_diff_shows_what_was_not_recorded(tmp_path: Path, monkeypatch) -> None:
    from kb.probe.cli import _render
    from kb.probe.diff import Run, compare

    _train(tmp_path / "a")
    monkeypatch.setattr(_torch_calls, "facts", _boom)
    _train(tmp_path / "b")
    report = compare(Run(str(tmp_path / "a")), Run(str(tmp_path / "b")))
    listed = report["not_recorded"][str(tmp_path / "b")]
    assert [e["where"] for e in listed] == ["the calls a module makes (TorchFunctionMode)"]
    lines = []
    _render(report, type("P", (), {"print": lambda self, t: lines.append(t)})(), str, None)
    assert any("not recorded" in line and "TorchFunctionMode" in line for line in lines)
    assert str(tmp_path / "a") not in report["not_recorded"]


def _jax_train(log):
    import jax
    import jax.numpy as jnp

    def loss(w, x):
        return jnp.sum(probe.monitor(jnp.tanh(x @ w), "h") ** 2)

    probe.configure(log)
    w = jnp.ones((3, 2)) * 0.5
    x = jnp.arange(6.0).reshape(2, 3) / 6
    step = jax.jit(jax.grad(loss))
    for _ in range(2):
        w = w - 0.1 * step(w, x)
        probe.step()
    probe.close()
    probe.configure(None)
    return w


@pytest.fixture(scope="module")
def jax_expected():
    """The JAX training's result without the probe: made once, compared with each planted run."""
    return _jax_train(None)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
@pytest.mark.parametrize("plant, where", [("digest", "jax.debug.callback"), ("dout", "custom VJP"),
                                          ("device_fingerprint", "probe.monitor")])
def test_jax_entry_points(plant: str, where: str, tmp_path: Path, monkeypatch, jax_expected) -> None:
    import jax.numpy as jnp

    from kb.probe import _jax

    if plant == "dout":
        real = _jax._observe
        monkeypatch.setattr(_jax, "_observe",
                            lambda x, n, k, **kw: _boom() if k == "dout" else real(x, n, k, **kw))
    else:
        monkeypatch.setattr(_jax, plant, _boom)
    got = _jax_train(tmp_path / "log")
    assert bool(jnp.array_equal(got, jax_expected))
    meta = json.loads((tmp_path / "log" / "meta.json").read_text())
    assert any(where in e["where"] for e in meta["not_recorded"]), meta["not_recorded"]


def _keras_train(log):
    import numpy as np
    import tensorflow as tf

    probe.configure(log)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="tanh"),
                                 tf.keras.layers.Dense(1)])
    probe.monitor_keras(model)
    opt = tf.keras.optimizers.SGD(0.1)
    x = tf.constant(np.linspace(-1, 1, 8, dtype="float32").reshape(2, 4))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    for _ in range(2):
        step()
        probe.step()
    probe.close()
    probe.configure(None)
    return [v.numpy() for v in model.trainable_variables]


@pytest.fixture(scope="module")
def keras_expected():
    """The Keras training's result without the probe: made once, compared with each planted run."""
    return _keras_train(None)


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="tensorflow is not installed")
@pytest.mark.parametrize("plant, where", [("write", "tf.numpy_function"), ("dout", "tf.custom_gradient"),
                                          ("layer_call", "probe.monitor_keras"), ("monitor", "monitor_keras (a layer")])
def test_keras_entry_points(plant: str, where: str, tmp_path: Path, monkeypatch, keras_expected) -> None:
    import numpy as np

    from kb.probe import _tf

    if plant == "write":
        monkeypatch.setattr(_tf, "_write", _boom)
    elif plant == "dout":
        real = _tf._observe
        monkeypatch.setattr(_tf, "_observe", lambda t, n, k, **kw: _boom() if k == "dout" else real(t, n, k, **kw))
    elif plant == "layer_call":
        monkeypatch.setattr(_tf, "layer_call", _boom)
    else:
        monkeypatch.setattr(_tf, "monitor", _boom)
    got = _keras_train(tmp_path / "log")
    assert all(np.array_equal(a, b) for a, b in zip(got, keras_expected))
    meta = json.loads((tmp_path / "log" / "meta.json").read_text())
    assert any(where in e["where"] for e in meta["not_recorded"]), meta["not_recorded"]
