"""JAX inside the checked program: `jax.jit` returns a thin wrapper around the real jitted
function, and `jax.grad`, `jax.value_and_grad` and `jax.vjp` note when they run.

Why: under jit the training step is one call of a jitted function; which one is the step is
the one that takes a gradient while it is traced (its first call). Each top-level call of it
is a step: in `run` mode its outputs (new parameters, optimizer state, loss) go to the probe
log after the call; in `inventory` mode its first call is traced first and the calls of its
jaxpr and the kernels of its compiled HLO are recorded (kb/check/inventory_jax.py). Calls
made while another function is being traced (a jitted function inside a jitted function)
pass straight through. The wrapper hands every attribute (`lower`, `trace`, ...) to the real
jitted function. A failure of the wrapper's own work is noted and the call goes on.
"""

from __future__ import annotations

import functools


class Jitted:
    """What `jax.jit(fun)` returns in a checked program."""

    def __init__(self, session, jitted, fun) -> None:
        self._kb_session = session
        self._kb_jitted = jitted
        self._kb_name = getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or "jitted"
        self._kb_seen = False
        self._kb_step = False
        for attr in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"):
            try:
                object.__setattr__(self, attr, getattr(jitted, attr))
            except AttributeError:
                pass

    def __call__(self, *args, **kwargs):
        session = self._kb_session
        jitted = self._kb_jitted
        try:
            top = not _tracing(session.jax, args, kwargs)
        except Exception as exc:
            session.error("jax.jit wrapper (looking at the arguments)", exc)
            top = False
        if not top:
            return jitted(*args, **kwargs)
        first = not self._kb_seen
        if first:
            self._kb_seen = True
            session.grad_seen = False
            if session.mode == "inventory":
                session.guarded("the jaxpr inventory", _inventory)(session, self, args, kwargs)
        out = jitted(*args, **kwargs)
        if first:
            self._kb_step = self._kb_step or session.grad_seen
        if self._kb_step:
            session.guarded("the end of a JAX step", _step_end)(session, self, out)
        return out

    def __getattr__(self, name):
        return getattr(self._kb_jitted, name)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def _tracing(jax, args: tuple, kwargs: dict) -> bool:
    tracer = jax.core.Tracer
    return any(isinstance(leaf, tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs)))


def _inventory(session, wrapper: Jitted, args: tuple, kwargs: dict) -> None:
    from kb.check import inventory_jax

    jax = session.jax
    device = "gpu" if jax.default_backend() in ("gpu", "cuda", "rocm") else jax.default_backend()
    traced = wrapper._kb_jitted.trace(*args, **kwargs)
    wrapper._kb_step = session.grad_seen
    found = inventory_jax.calls(traced.jaxpr, device, wrapper._kb_name)
    kernels: list[str] = []
    try:
        kernels = inventory_jax.kernels(traced.lower().compile().as_text())
    except Exception as exc:  # the compiled text is a nicety: the jaxpr holds the calls
        session.error("the compiled HLO of a jitted function", exc)
    session.jax_calls.extend(found)
    session.jax_functions.append({"name": wrapper._kb_name, "step": wrapper._kb_step, "kernels": kernels,
                                  "calls": len(found)})


def _step_end(session, wrapper: Jitted, out) -> None:
    jax = session.jax
    jax.block_until_ready(out)
    session.counting = "jit"
    if session.mode == "run":
        from kb import probe
        from kb.probe.recorder import describe

        name = wrapper._kb_name
        ops = session.jax_ops.get(name)
        if ops:
            describe(name, ops=ops, framework="jax")
        flat, _ = jax.tree_util.tree_flatten_with_path(out)
        for keypath, _leaf in flat:
            describe(f"{name}{jax.tree_util.keystr(keypath)}", module=name, framework="jax")
        probe.summarize_trainable_variables(out, name)
    session.end_step()


def install(session, jax) -> None:
    """Replace jax.jit and note the gradient transformations (each wrapper forwards to the
    real function; nothing else changes)."""
    original_jit = jax.jit

    @functools.wraps(original_jit)
    def jit(fun=None, *args, **kwargs):
        if fun is None:
            return lambda f: jit(f, *args, **kwargs)
        return Jitted(session, original_jit(fun, *args, **kwargs), fun)

    jax.jit = jit

    def noting(original):
        @functools.wraps(original)
        def transform(fun, *args, **kwargs):
            inner = original(fun, *args, **kwargs)

            @functools.wraps(inner)
            def call(*a, **k):
                session.grad_seen = True
                return inner(*a, **k)

            return call

        return transform

    for name in ("grad", "value_and_grad"):
        setattr(jax, name, noting(getattr(jax, name)))
    original_vjp = jax.vjp

    @functools.wraps(original_vjp)
    def vjp(*args, **kwargs):
        session.grad_seen = True
        return original_vjp(*args, **kwargs)

    jax.vjp = vjp
