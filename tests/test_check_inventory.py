"""`kb check`'s inventory: the calls a PyTorch program makes (whole process, not only inside
modules), named as the knowledge base knows them, with the facts that decide a record (rank,
dtype, whether a gradient flows, the kind of index, the seeding), and the calls of a jitted
JAX function read from its jaxpr. In process, CPU only."""

from __future__ import annotations

import pytest


def _inventory(monkeypatch):
    torch = pytest.importorskip("torch")
    from kb.check import inventory_torch

    for owner, name in ((torch, "seed"), (torch.random, "seed"), (torch, "manual_seed"), (torch.random, "manual_seed"),
                        (torch.cuda, "manual_seed_all"), (torch.cuda, "manual_seed")):
        monkeypatch.setattr(owner, name, getattr(owner, name))  # restored after the test
    errors = []
    inv = inventory_torch.Inventory(lambda: (["Net"], None), lambda: 0, lambda where, exc: errors.append((where, exc)))
    inventory_torch.watch_seeding(torch, inv)
    return torch, inv, errors


def test_torch_calls_are_named_and_described(monkeypatch) -> None:
    torch, inv, errors = _inventory(monkeypatch)
    import torch.nn.functional as F

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3)
    x = torch.randn(2, 3, 8, 8)
    labels = torch.tensor([1, 0])
    with inv:
        y = conv(x)  # nn.Conv2d calls torch.conv2d, which is F.conv2d
        loss = F.cross_entropy(y.mean((2, 3)), labels) + y[:, :2].sum() + y[torch.tensor([0, 0])].sum()
        data_only = labels.float()[None, :1] * 2  # no gradient flows through this slice
        F.adaptive_avg_pool2d(y, (1, 1))
        F.adaptive_avg_pool2d(y, (2, 1))
        loss.backward()
    calls = inv.result()["calls"]
    by_op = {}
    for c in calls:
        by_op.setdefault(c["op"], []).append(c)
    assert errors == []
    conv_call = by_op["torch.nn.functional.conv2d"][0]
    assert conv_call["call"]["input.ndim"] == 4 and conv_call["call"]["input.dtype"] == "float32"
    assert conv_call["grad"] is True and conv_call["modules"] == ["Net"] and conv_call["device"] == "cpu"
    assert by_op["torch.nn.functional.cross_entropy"][0]["call"]["target"] == "int64"
    indexing = {c["index"]: c["grad"] for c in by_op["torch.Tensor.__getitem__"]}
    assert indexing.get("tensor") is True
    assert any(c["index"] == "basic" and c["grad"] is False and c["call"]["input.ndim"] == 1
               for c in by_op["torch.Tensor.__getitem__"])
    assert {c["output_ones"] for c in by_op["torch.nn.functional.adaptive_avg_pool2d"]} == {False}  # merged: not all ones
    assert "torch.Tensor.mul" in by_op and data_only is not None  # `x * 2` is torch.Tensor.mul
    assert not any(op.startswith("torch._") or ".__" in op.replace("__getitem__", "") for op in by_op)


def test_a_seed_from_the_clock_makes_later_draws_unseeded(monkeypatch) -> None:
    torch, inv, _ = _inventory(monkeypatch)
    import torch.nn.functional as F

    torch.manual_seed(0)
    x = torch.ones(4, 4)
    with inv:
        F.dropout(x, 0.5)
        assert inv.result()["draws_before_seed"] == {}
        torch.seed()
        F.dropout(x, 0.5)
    result = inv.result()
    assert result["draws_before_seed"] == {"torch.nn.functional.dropout": 1}
    assert result["reseeded"] == ["torch.seed"]


def test_jax_calls_come_from_the_jaxpr_with_the_backward(monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    from kb.check import inventory_jax

    def loss(w, x, seg):
        h = jax.ops.segment_sum(x @ w, seg, num_segments=4)
        pooled = lax.reduce_window(h[None, None], -jnp.inf, lax.max, (1, 1, 2, 1), (1, 1, 2, 1), "VALID")
        return pooled.sum()

    step = jax.jit(jax.grad(loss))
    args = (jnp.ones((3, 2)), jnp.ones((5, 3)), jnp.array([0, 0, 1, 3, 3]))
    calls = inventory_jax.calls(step.trace(*args).jaxpr, "gpu", "step")
    by_op = {c["op"]: c for c in calls}
    scatter = by_op["jax.lax.scatter_add"]
    assert scatter["call"]["input.dtype"] == "float32" and scatter["call"]["unique_indices"] is False
    assert scatter["modules"] == ["step"] and scatter["device"] == "gpu"
    assert by_op["jax.lax.dot_general"]["grad"] is False
    backward = [c for c in calls if c["primitive"] == "select_and_scatter_add"]
    assert backward and backward[0]["op"] == "jax.lax.reduce_window" and backward[0]["grad"] is True
    assert inventory_jax.kernels('custom_call_target="__cublas$gemm" "kind":"__triton_gemm"') == \
        ["__cublas$gemm", "__triton_gemm"]


def test_the_inputs_element_count_is_recorded_and_bounded(monkeypatch) -> None:
    """`input.numel` of the first tensor argument (issue 42: a 1,000-element cumprod is a short scan);
    a call seen with more than MAX_COUNTS counts is recorded once more without it (unknown), not once
    per size."""
    torch, inv, errors = _inventory(monkeypatch)
    from kb.check import inventory_torch

    betas = torch.linspace(1e-4, 0.02, 1000)
    with inv:
        torch.cumprod(1 - betas, dim=0)
        for n in range(1, inventory_torch.MAX_COUNTS + 4):
            torch.cumsum(torch.ones(n), dim=0)
    calls = inv.result()["calls"]
    assert errors == []
    (cumprod,) = [c for c in calls if c["op"] == "torch.cumprod"]
    assert cumprod["call"]["input.numel"] == 1000 and cumprod["call"]["input.ndim"] == 1 and cumprod["device"] == "cpu"
    assert cumprod["shown"] == "cumprod(dim=0)"  # the count is a fact, not an argument shown
    cumsum = [c for c in calls if c["op"] == "torch.cumsum"]
    counted = sorted(c["call"]["input.numel"] for c in cumsum if "input.numel" in c["call"])
    assert counted == list(range(1, inventory_torch.MAX_COUNTS + 1))
    (rest,) = [c for c in cumsum if "input.numel" not in c["call"]]
    assert rest["count"] == 3
