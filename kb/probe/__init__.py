"""Determinism debug probes: find where and when two runs of the same training first differ.

The GTC 2019 talk "Determinism in Deep Learning" (S9911, Duncan Riach,
https://developer.nvidia.com/gtc/2019/video/s9911; slides 18-21) describes the tool: insert probe ops at places in the model,
train twice, and it names the place and step where the runs first differ. Usage:

    from kb import probe
    y = probe.monitor(y, "logits")          # TensorFlow, PyTorch or JAX (also inside tf.function / jit)
    probe.watch(model, optimizer)           # PyTorch: every module, forward + backward, per step
    probe.monitor_keras(model)              # Keras: every layer's output (and its gradient)
    grads = probe.monitor_gradients(grads)  # between computing and applying gradients
    probe.summarize_trainable_variables(model_or_params)
    probe.step(i)                           # start step i (torch's watch(model, optimizer) does it)

then `kb probe run -- python train.py` and read the diff. Nothing is recorded unless a log
directory is set (KB_PROBE_DIR, set by `kb probe run`, or `probe.configure(dir)`), so probes
can stay in a script. This package is imported only on demand: `import kb` never loads it,
and each framework's adapter loads only when a value of that framework is probed.

No failure of the probe reaches the training script: each function here (and each hook and
callback the probe installs) catches what its own recording raises, notes it in the log's
meta.json under `not_recorded` (shown by `kb probe diff`) and returns its input unchanged.

To add a probe adapter (the probes of one more framework):
1. Write `kb/probe/_<framework>.py` with `monitor(value, name, ops)`,
   `monitor_gradients(grads, name)` and `summarize(variables, name)`, each recording through
   `kb.probe.recorder.record` (`kb/probe/_python.py` is the smallest).
2. In `kb/probe/__init__.py`, make `_framework_of` return the framework for its tensors'
   module and `_adapter` import your module for it.
3. Probe a value in a script, then `python -m kb probe run -- python script.py`: it says
   `identical` when the runs agree and names the first differing place and step when they do
   not; add that as a test beside tests/test_probe.py's.
"""

from __future__ import annotations

import sys

from kb.probe.nest import leaves
from kb.probe.recorder import close, configure, current_step, enabled, flush, guard, record

__all__ = [
    "close", "configure", "current_step", "enabled", "flush", "monitor", "monitor_gradients",
    "monitor_keras", "record", "step", "summarize_trainable_variables", "watch",
]


def _same_step(i: int | None = None) -> int:
    return current_step() if i is None else i


@guard("probe.step", _same_step)
def step(i: int | None = None) -> int:
    """Start training step `i` (None: the next one); returns it. Call it at the top of a step."""
    from kb.probe.recorder import set_step

    return set_step(i)


def _framework_of(value: object) -> str | None:
    for leaf in leaves(value):
        module = type(leaf).__module__.split(".")[0]
        if module in ("tensorflow", "tf_keras", "keras"):
            return "tensorflow"
        if module == "torch":
            return "pytorch"
        if module in ("jax", "jaxlib"):
            return "jax"
    if "tensorflow" in sys.modules and sys.modules["tensorflow"].inside_function():
        return "tensorflow"
    return None


def _adapter(framework: str | None):
    if framework == "tensorflow":
        from kb.probe import _tf
        return _tf
    if framework == "pytorch":
        from kb.probe import _torch
        return _torch
    if framework == "jax":
        from kb.probe import _jax
        return _jax
    from kb.probe import _python
    return _python


@guard("probe.monitor", lambda value, *args, **kwargs: value)
def monitor(value, name: str, *, op: str | list[str] | None = None):
    """Record `value` (a tensor or a nested structure of them) at place `name`; returns it.

    Back-propagatable: the gradient flowing back through this place is recorded too (pass
    `backward`). `op` names the op(s) under this place (e.g. "jax.ops.segment_sum") so the
    diff can ask the knowledge base about them.
    """
    if not enabled():
        return value
    ops = [op] if isinstance(op, str) else list(op or [])
    return _adapter(_framework_of(value)).monitor(value, name, ops)


@guard("probe.monitor_gradients", lambda grads, *args, **kwargs: grads)
def monitor_gradients(grads, name: str = "grad"):
    """Record gradients between computing and applying them; returns them unchanged.

    TensorFlow: a list of gradients or of (gradient, variable) pairs. PyTorch: a module or
    an iterable of (name, parameter) pairs (reads `.grad`). JAX: a pytree.
    """
    if not enabled():
        return grads
    framework = _framework_of(grads)
    if framework is None and hasattr(grads, "named_parameters"):
        framework = "pytorch"
    return _adapter(framework).monitor_gradients(grads, name)


@guard("probe.summarize_trainable_variables")
def summarize_trainable_variables(variables, name: str = "param") -> None:
    """Record every trainable variable/parameter (before, during or after training)."""
    if not enabled():
        return
    framework = None
    if hasattr(variables, "trainable_variables"):
        framework = "tensorflow"
    elif hasattr(variables, "named_parameters"):
        framework = "pytorch"
    else:
        framework = _framework_of(variables)
        if framework is None:
            framework = _framework_of([getattr(v, "value", v) for v in leaves(variables)])
    _adapter(framework).summarize(variables, name)


@guard("probe.monitor_keras", lambda model, *args, **kwargs: model)
def monitor_keras(model):
    """Monitor every layer's output (and the gradient flowing back into it) of a Keras model."""
    from kb.probe import _tf

    return _tf.monitor_keras(model)


class _NoHooks:
    def remove(self) -> None:
        pass


@guard("probe.watch", lambda *args, **kwargs: _NoHooks())
def watch(model, optimizer=None, *, params: bool = True, ops: bool = True, calls: bool | None = None):
    """PyTorch: forward and backward hooks on every module, parameter-gradient hooks, and,
    with `optimizer`, a step counter and parameter hashes after each optimizer step.
    `calls=True` (or KB_PROBE_CALLS=1, set by `kb probe run --calls`) also records, every
    step, the output of each call a module makes between its children, so the diff can name
    one call of a chain; it costs a pass through the probe for every framework call.

    Returns a handle whose `.remove()` takes every hook off again.
    """
    from kb.probe import _torch

    return _torch.watch(model, optimizer, params=params, ops=ops, calls=calls)
