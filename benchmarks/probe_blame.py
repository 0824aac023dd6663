"""How often `kb probe` blames the right call: small real models on the CPU, one divergence
injected at a known call in each, top-1 blame accuracy.

Why injected: on a CPU real run-to-run differences are rare, so run 2 of each case makes one
call behave like a non-deterministic kernel: the call's own result changes (by 1e-3, or 1 for
integers), inside the call, where the probe sees one call and nothing else. For PyTorch the
function is replaced by a stand-in that dispatches like a torch function (so the probe's call
recording sees the call under its public name) and adds the change only while the model's
forward is inside `plant("...")` in run 2; a few cases instead seed a random draw differently
in run 2 (an unseeded dropout) or change a gradient in backward (a tensor hook on the call's
input, as the docs' examples do). JAX and Keras cases change the value at one monitored place
(or seed a random layer differently).

Each case runs twice in this process with `probe.configure` (the Python equivalent of
`kb probe run`, which sets KB_PROBE_RUN=1 and 2 the same way), then `kb.probe.diff.compare`
names the first difference and the blame. "right" means the top-ranked call of the blame is
the injected call (and, where the case says, in the injected module).

    PYTHONPATH=. python benchmarks/probe_blame.py            # every case, default recording
    PYTHONPATH=. python benchmarks/probe_blame.py --calls    # with KB_PROBE_CALLS recording
    PYTHONPATH=. python benchmarks/probe_blame.py --only mlp-gelu,unet-pad --json
    PYTHONPATH=. python benchmarks/probe_blame.py --no-compile  # without the torch.compile cases
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from collections.abc import Callable

EPS = 1e-3
STEPS = 2


@dataclass
class Case:
    name: str
    framework: str
    model: str
    injected: str  # the injected call's short name (what the blame's top call must be)
    run: Callable[[str, int], None]  # run(log_dir, run_number)
    place: str | None = None  # the module the blamed call must be in (None: any)
    tags: set = field(default_factory=set)
    planted: str | None = None  # the call whose result changes in run 2, where it is not `injected`


# ---------------------------------------------------------------------------- PyTorch


class _Plant:
    """Run 2 only, and only inside `plant(name)`: the stand-in for `name` changes its result."""

    def __init__(self) -> None:
        self.run = 1
        self.target: str | None = None  # the case's injected call: the only plant that is live
        self.from_step = 0  # the first step that carries the plant
        self.active: set[str] = set()

    @contextlib.contextmanager
    def __call__(self, name: str):
        self.active.add(name)
        try:
            yield
        finally:
            self.active.discard(name)

    def on(self, name: str) -> bool:
        if not (self.run == 2 and name == self.target and name in self.active):
            return False
        if self.from_step:
            from kb import probe

            return probe.current_step() >= self.from_step
        return True


PLANT = _Plant()
_patched: dict = {}


def _tensors(value) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _perturb(out, inplace: bool):
    import torch

    first = out[0] if isinstance(out, (tuple, list)) else out
    delta = 1 if not (first.is_floating_point() or first.is_complex()) else EPS
    if first.dtype in (torch.bfloat16, torch.float16):
        delta = 1 / 16  # 1e-3 is below half a bfloat16 step of most values: it would round away
    if inplace:
        with torch.no_grad():
            first.add_(delta)
        return out
    changed = first + delta
    if isinstance(out, tuple):
        return (changed, *out[1:])
    return changed


def patch(owner, attr: str, key: str, method: bool = False) -> None:
    """Replace owner.attr with a stand-in that the probe sees as the same public call."""
    import torch
    from torch.overrides import handle_torch_function, has_torch_function

    if (owner, attr) in _patched:
        return
    orig = getattr(owner, attr)
    inplace = attr.endswith("_") and not attr.endswith("__")

    def standin(*args, **kwargs):
        relevant = tuple(_tensors(list(args) + list(kwargs.values())))
        if has_torch_function(relevant):
            return handle_torch_function(standin, relevant, *args, **kwargs)
        out = orig(*args, **kwargs)
        return _perturb(out, inplace) if PLANT.on(key) else out

    standin.__name__ = attr
    standin.__doc__ = getattr(orig, "__doc__", None)
    if method:
        standin.__qualname__ = f"Tensor.{attr}"
        standin.__module__ = None
    else:
        standin.__qualname__ = attr
        standin.__module__ = getattr(orig, "__module__", None) or owner.__name__
        if owner is torch:
            standin.__module__ = "torch"
    _patched[(owner, attr)] = orig
    setattr(owner, attr, standin)


def _torch_train(model_fn, data_fn, loss_fn=None, steps: int = STEPS, seed_run: bool = False):
    """A run function: build (seed 0), watch, train `steps` SGD steps."""

    def run(log: str, run_no: int) -> None:
        import torch

        from kb import probe

        PLANT.run = run_no
        probe.configure(log)
        torch.manual_seed(0)
        model = model_fn()
        data = data_fn()
        if seed_run:  # an unseeded random draw: each run's generator starts elsewhere
            torch.manual_seed(1000 + (run_no if PLANT.from_step == 0 else 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        handle = probe.watch(model, opt)
        try:
            for step in range(steps + PLANT.from_step):
                if seed_run and step == PLANT.from_step and step:
                    torch.manual_seed(2000 + run_no)
                out = model(*data)
                loss = loss_fn(out) if loss_fn else out.float().square().mean()
                loss.backward()
                opt.step()
                opt.zero_grad()
        finally:
            handle.remove()
            probe.close()
            probe.configure(None)
            PLANT.run = 1

    return run


def torch_cases(with_compile: bool) -> list[Case]:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    for owner, attr in ((torch, "relu"), (F, "gelu"), (torch, "cat"), (torch, "einsum"), (F, "interpolate"),
                        (F, "pad"), (F, "scaled_dot_product_attention"), (F, "linear"), (F, "batch_norm"),
                        (F, "adaptive_avg_pool2d"), (F, "multi_head_attention_forward"), (torch, "tanh"),
                        (F, "embedding"), (torch, "matmul"), (torch, "sigmoid")):
        patch(owner, attr, attr)
    for attr in ("index_add_", "mean", "add", "mul"):
        patch(torch.Tensor, attr, attr, method=True)
    patch(torch.fft, "rfft", "rfft")
    patch(torch.sparse, "mm", "mm")
    patch(torch, "bmm", "bmm")

    # --- an MLP whose forward calls torch.relu, F.gelu, torch.cat, torch.einsum
    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2, self.fc3 = nn.Linear(8, 16), nn.Linear(16, 16), nn.Linear(24, 4)
            self.mix = nn.Parameter(torch.randn(24) * 0.1)

        def forward(self, x):
            with PLANT("relu"):
                h = torch.relu(self.fc1(x))
            with PLANT("gelu"):
                h = F.gelu(self.fc2(h))
            with PLANT("cat"):
                h = torch.cat([h, x], dim=1)
            with PLANT("einsum"):
                h = torch.einsum("bi,i->bi", h, self.mix)
            return self.fc3(h)

    mlp_data = lambda: (torch.randn(4, 8),)  # noqa: E731

    # --- a transformer encoder returning a dict
    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Linear(8, 16)
            self.enc = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            with PLANT("multi_head_attention_forward"):
                h = self.enc(self.embed(x))
            with PLANT("mean"):
                pooled = h.mean(dim=1)
            return {"logits": self.head(pooled), "pooled": pooled}

    enc_loss = lambda out: out["logits"].square().mean()  # noqa: E731

    # --- a ResNet-style CNN with batch norm
    class Block(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            with PLANT("batch_norm"):
                out = self.bn2(self.conv2(out))
            with PLANT("add"):
                out = out.add(x)  # the method, not `+`: the stand-in replaces torch.Tensor.add
            return F.relu(out)

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem, self.bn = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
            self.block1, self.block2 = Block(8), Block(8)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            h = self.block2(self.block1(F.relu(self.bn(self.stem(x)))))
            with PLANT("adaptive_avg_pool2d"):
                h = F.adaptive_avg_pool2d(h, 1)
            return self.fc(torch.flatten(h, 1))

    # --- a U-Net: interpolate, pad and skip concatenations
    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.down1, self.down2 = nn.Conv2d(1, 4, 3, padding=1), nn.Conv2d(4, 8, 3, stride=2, padding=1)
            self.up = nn.Conv2d(12, 4, 3, padding=1)
            self.out = nn.Conv2d(4, 1, 1)

        def forward(self, x):
            d1 = F.relu(self.down1(x))
            d2 = F.relu(self.down2(d1))
            with PLANT("interpolate"):
                u = F.interpolate(d2, scale_factor=2, mode="bilinear", align_corners=False)
            with PLANT("pad"):
                u = F.pad(u, (0, d1.shape[-1] - u.shape[-1], 0, d1.shape[-2] - u.shape[-2]))
            with PLANT("cat"):
                u = torch.cat([u, d1], dim=1)
            return self.out(F.relu(self.up(u)))

    # --- a GPT block with SDPA and tied embeddings
    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(50, 16)
            self.ln = nn.LayerNorm(16)
            self.qkv, self.proj = nn.Linear(16, 48), nn.Linear(16, 16)

        def forward(self, idx):
            with PLANT("embedding"):
                x = self.wte(idx)
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln(x)).view(b, t, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
            with PLANT("scaled_dot_product_attention"):
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            with PLANT("linear"):
                return F.linear(x, self.wte.weight)  # tied: the embedding table is the output layer

    gpt_data = lambda: (torch.randint(0, 50, (2, 6)),)  # noqa: E731

    # --- activation checkpointing
    class FF(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 8)

        def forward(self, x):
            with PLANT("sigmoid"):
                h = torch.sigmoid(self.a(x))
            return self.b(h)

    class Checkpointed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ff, self.head = FF(), nn.Linear(8, 2)

        def forward(self, x):
            h = torch.utils.checkpoint.checkpoint(self.ff, x, use_reentrant=False)
            return self.head(h)

    # --- a custom autograd.Function
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with PLANT("tanh"):
                return torch.tanh(x) * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Custom(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 2)

        def forward(self, x):
            return self.b(Scale.apply(self.a(x)))

    # --- integer tensors: an index_add_ router over int ids
    class Router(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.head = nn.Embedding(20, 8), nn.Linear(8, 2)

        def forward(self, ids):
            x = self.emb(ids)
            buckets = torch.zeros(4, 8)
            with PLANT("index_add_"):
                buckets.index_add_(0, ids % 4, x)
            return self.head(buckets)

    # --- complex tensors: a spectral filter
    class Spectral(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(16, 16), nn.Linear(9, 2)
            self.filt = nn.Parameter(torch.randn(9) * 0.1)

        def forward(self, x):
            with PLANT("rfft"):
                spec = torch.fft.rfft(self.a(x))
            with PLANT("mul"):
                spec = spec.mul(self.filt)
            return self.b(spec.abs())

    # --- an unseeded dropout applied by the parent between two children (the case)
    class Drop(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 2)

        def forward(self, x):
            return self.b(F.dropout(self.a(x), 0.3, training=True))

    # --- a backward difference: the gradient of an einsum's input (its backward) changes
    class Bwd(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 2)
            self.w = nn.Parameter(torch.randn(8, 8) * 0.1)

            # run 2: the gradient einsum's backward sends to `a`'s output changes, as if that
            # backward were not deterministic; a forward hook registered before watch()'s puts
            # this tensor hook ahead of the probe's, which then records the changed gradient
            self.a.register_forward_hook(self._plant)

        @staticmethod
        def _plant(module, args, out) -> None:
            if PLANT.run == 2 and out.requires_grad:
                out.register_hook(lambda g: g + EPS)

        def forward(self, x):
            with PLANT("einsum"):  # the hook above checks it while a's output is made
                h = self.a(x)
            return self.b(torch.einsum("bi,ij->bj", h, self.w))

    # --- sparse COO tensors: a graph convolution (torch.sparse.mm) and a batched one (torch.bmm,
    # sparse first argument: the layout is a call fact of the KB's sparse-bmm record)
    class GraphConv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b, self.head = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 2)
            ring = torch.eye(6) + torch.roll(torch.eye(6), 1, 0)
            self.register_buffer("adj", ring.to_sparse())
            self.register_buffer("adj3", torch.stack([ring, ring.t()]).to_sparse())

        def forward(self, x):
            with PLANT("mm"):
                h = torch.sparse.mm(self.adj, self.a(x))
            h2 = torch.stack([h, h])
            with PLANT("bmm"):
                h2 = torch.bmm(self.adj3, h2)
            return self.head(torch.relu(self.b(h2.mean(0))))

    # --- bfloat16 weights and activations
    class BF16(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 2)
            self.w = nn.Parameter(torch.randn(16, 16) * 0.1)

        def forward(self, x):
            h = self.a(x)
            with PLANT("matmul"):
                h = torch.matmul(h, self.w)
            with PLANT("gelu"):
                h = F.gelu(h)
            return self.b(h)

    bf16 = lambda: BF16().to(torch.bfloat16)  # noqa: E731
    bf16_data = lambda: (torch.randn(4, 8, dtype=torch.bfloat16),)  # noqa: E731
    x8 = lambda: (torch.randn(4, 8),)  # noqa: E731
    img = lambda c, s: (lambda: (torch.randn(2, c, s, s),))  # noqa: E731
    cases = [
        Case("mlp-relu", "pytorch", "MLP", "relu", _torch_train(MLP, mlp_data), "MLP"),
        Case("mlp-gelu", "pytorch", "MLP", "gelu", _torch_train(MLP, mlp_data), "MLP"),
        Case("mlp-cat", "pytorch", "MLP", "cat", _torch_train(MLP, mlp_data), "MLP"),
        Case("mlp-einsum", "pytorch", "MLP", "einsum", _torch_train(MLP, mlp_data), "MLP", {"fast"}),
        Case("encoder-attention", "pytorch", "TransformerEncoderLayer (dict output)", "multi_head_attention_forward",
             _torch_train(Encoder, x8 := (lambda: (torch.randn(2, 5, 8),)), enc_loss), "enc.self_attn"),
        Case("encoder-mean", "pytorch", "TransformerEncoderLayer (dict output)", "mean",
             _torch_train(Encoder, x8, enc_loss), "Encoder", {"fast"}),
        Case("resnet-batch_norm", "pytorch", "ResNet (batch norm)", "batch_norm",
             _torch_train(ResNet, img(3, 6)), "block1.bn2"),
        Case("resnet-residual_add", "pytorch", "ResNet (batch norm)", "add", _torch_train(ResNet, img(3, 6)),
             "block1"),
        Case("resnet-pool", "pytorch", "ResNet (batch norm)", "adaptive_avg_pool2d", _torch_train(ResNet, img(3, 6)),
             "ResNet"),
        Case("unet-interpolate", "pytorch", "U-Net", "interpolate", _torch_train(UNet, img(1, 7)), "UNet"),
        Case("unet-pad", "pytorch", "U-Net", "pad", _torch_train(UNet, img(1, 7)), "UNet"),
        Case("unet-cat", "pytorch", "U-Net", "cat", _torch_train(UNet, img(1, 7)), "UNet", {"fast"}),
        Case("gpt-embedding", "pytorch", "GPT block (SDPA, tied embeddings)", "embedding",
             _torch_train(GPT, gpt_data), "wte"),
        Case("gpt-sdpa", "pytorch", "GPT block (SDPA, tied embeddings)", "scaled_dot_product_attention",
             _torch_train(GPT, gpt_data), "GPT", {"fast"}),
        Case("gpt-tied_logits", "pytorch", "GPT block (SDPA, tied embeddings)", "linear",
             _torch_train(GPT, gpt_data), "GPT"),
        Case("checkpoint-sigmoid", "pytorch", "activation checkpointing", "sigmoid",
             _torch_train(Checkpointed, lambda: (torch.randn(4, 8),)), "ff"),
        Case("custom_function-tanh", "pytorch", "custom autograd.Function", "tanh",
             _torch_train(Custom, lambda: (torch.randn(4, 8),)), "Custom"),
        Case("int-index_add_", "pytorch", "integer ids, index_add_ router", "index_add_",
             _torch_train(Router, lambda: (torch.randint(0, 20, (6,)),)), "Router", {"fast"}),
        Case("complex-rfft", "pytorch", "complex spectral filter", "rfft",
             _torch_train(Spectral, lambda: (torch.randn(3, 16),)), "Spectral"),
        Case("complex-mul", "pytorch", "complex spectral filter", "mul",
             _torch_train(Spectral, lambda: (torch.randn(3, 16),)), "Spectral"),
        Case("dropout-unseeded", "pytorch", "parent-level F.dropout", "dropout",
             _torch_train(Drop, lambda: (torch.randn(4, 8),), seed_run=True), "Drop", {"fast"}),
        Case("backward-einsum", "pytorch", "einsum backward", "einsum",
             _torch_train(Bwd, lambda: (torch.randn(4, 8),)), "Bwd"),
        Case("sparse-mm", "pytorch", "sparse COO graph convolution", "mm",
             _torch_train(GraphConv, lambda: (torch.randn(6, 8),)), "GraphConv", {"fast"}),
        Case("sparse-bmm", "pytorch", "sparse COO graph convolution", "bmm",
             _torch_train(GraphConv, lambda: (torch.randn(6, 8),)), "GraphConv"),
        Case("bf16-matmul", "pytorch", "bfloat16 MLP", "matmul", _torch_train(bf16, bf16_data), "BF16", {"fast"}),
        Case("bf16-gelu", "pytorch", "bfloat16 MLP", "gelu", _torch_train(bf16, bf16_data), "BF16"),
    ]
    if with_compile:
        class Small(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 2)

            def forward(self, x):
                with PLANT("gelu"):
                    return self.b(F.gelu(self.a(x)))

        def compiled():
            return torch.compile(Small(), backend="eager")

        def compiled_in_place():
            model = Small()
            model.compile(backend="eager")  # the module's own call is compiled, its hooks inside it
            return model

        # a compiled block inside an eager model: the parent's calls are still learnt, the
        # call-recording mode is off while the compiled block runs
        class Outer(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inp = nn.Linear(8, 8)
                self.blk = torch.compile(Small(), backend="aot_eager")
                self.head = nn.Linear(2, 2)

            def forward(self, x):
                with PLANT("relu"):
                    h = torch.relu(self.inp(x))
                return self.head(self.blk(h))

        @contextlib.contextmanager
        def dynamo_off():
            import torch._dynamo.config as config

            torch._dynamo.reset()  # no code compiled by an earlier case is used
            saved, config.disable = config.disable, True
            try:
                yield
            finally:
                config.disable = saved
                torch._dynamo.reset()

        def eager_run(run):  # TORCH_COMPILE_DISABLE=1, as the compiled blame advises
            def inner(log: str, run_no: int) -> None:
                with dynamo_off():
                    run(log, run_no)
            return inner

        # watched at its boundary: the blame names the compiled module and torch.compile, not a
        # call inside it (compiled code fuses calls) and never the Linear after the gelu
        cases.append(Case("compiled-gelu", "pytorch", "torch.compile (eager backend)", "compile",
                          _torch_train(compiled, lambda: (torch.randn(4, 8),)), "Small", {"fast"}, planted="gelu"))
        cases.append(Case("compiled_inplace-gelu", "pytorch", "module.compile() (eager backend)", "compile",
                          _torch_train(compiled_in_place, lambda: (torch.randn(4, 8),)), "Small", planted="gelu"))
        cases.append(Case("compiled_block-gelu", "pytorch", "compiled block in an eager model (aot_eager)", "compile",
                          _torch_train(Outer, lambda: (torch.randn(4, 8),)), "blk", planted="gelu"))
        cases.append(Case("compiled_block-relu", "pytorch", "compiled block in an eager model (aot_eager)", "relu",
                          _torch_train(Outer, lambda: (torch.randn(4, 8),)), "Outer"))
        cases.append(Case("compiled_disabled-gelu", "pytorch", "torch.compile under TORCH_COMPILE_DISABLE=1", "gelu",
                          eager_run(_torch_train(compiled, lambda: (torch.randn(4, 8),))), "Small"))
    return cases


# ---------------------------------------------------------------------------- JAX


def _jax_run(kind: str):
    def run(log: str, run_no: int) -> None:
        import jax
        import jax.numpy as jnp

        from kb import probe

        probe.configure(log)
        key = jax.random.PRNGKey(0)
        k1, k2, k3 = jax.random.split(key, 3)
        params = {"w1": jax.random.normal(k1, (8, 16)) * 0.3, "w2": jax.random.normal(k2, (16, 4)) * 0.3}
        x = jax.random.normal(k3, (6, 8))
        seg = jnp.arange(6) % 3
        bump = EPS if run_no == 2 else 0.0

        def model(p, x, bump):
            h = x @ p["w1"]
            if kind == "matmul":
                h = h + bump
            h = probe.monitor(h, "dense1", op="jax.numpy.matmul")
            a = jax.nn.gelu(h)
            if kind == "gelu":
                a = a + bump
            a = probe.monitor(a, "act", op="jax.nn.gelu")
            pooled = jax.ops.segment_sum(a, seg, num_segments=3)
            if kind == "segment_sum":
                pooled = pooled + bump
            pooled = probe.monitor(pooled, "pool", op="jax.ops.segment_sum")
            return jnp.mean((pooled @ p["w2"]) ** 2)

        @jax.jit
        def step(p, x, bump):
            loss, g = jax.value_and_grad(model)(p, x, bump)
            return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), loss

        for _ in range(STEPS):
            params, _ = step(params, x, bump)
            probe.step()
        probe.close()
        probe.configure(None)

    return run


def jax_cases() -> list[Case]:
    return [Case(f"jax-{k}", "jax", "JAX MLP with segment_sum pooling (jit)", k, _jax_run(k), None,
                 {"fast"} if k == "segment_sum" else set()) for k in ("matmul", "gelu", "segment_sum")]


# ---------------------------------------------------------------------------- Keras


def _keras_run(kind: str):
    def run(log: str, run_no: int) -> None:
        import numpy as np
        import tensorflow as tf

        from kb import probe

        probe.configure(log)
        tf.keras.backend.clear_session()  # layer names (the probe's places) start from 0 again
        tf.keras.utils.set_random_seed(0)
        layers = [tf.keras.Input((8, 8, 1)), tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu")]
        if kind == "UpSampling2D":
            layers += [tf.keras.layers.MaxPooling2D(2), _upsampling(run_no == 2)(2, interpolation="bilinear")]
        layers += [tf.keras.layers.Flatten()]
        if kind == "Dropout":  # seeded by the run: as if unseeded, each run draws differently
            layers += [tf.keras.layers.Dropout(0.3, seed=run_no)]
        if kind == "GaussianNoise":
            layers += [tf.keras.layers.GaussianNoise(0.1, seed=run_no)]
        layers += [tf.keras.layers.Dense(3)]
        model = tf.keras.Sequential(layers)
        probe.monitor_keras(model)
        opt = tf.keras.optimizers.SGD(0.05)
        x = tf.constant(np.linspace(-1, 1, 2 * 64, dtype="float32").reshape(2, 8, 8, 1))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(model(x, training=True) ** 2)
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

        for _ in range(STEPS):
            step()
            probe.step()
        probe.close()
        probe.configure(None)

    return run


def _upsampling(bumped: bool):
    """UpSampling2D whose result changes by EPS in run 2, as if its resize kernel were not
    deterministic; it keeps the public class name the probe reports and the KB knows."""
    import tensorflow as tf

    class UpSampling2D(tf.keras.layers.UpSampling2D):
        def call(self, inputs):
            out = super().call(inputs)
            return out + EPS if bumped else out

    UpSampling2D.__module__ = tf.keras.layers.UpSampling2D.__module__
    return UpSampling2D


def keras_cases() -> list[Case]:
    return [Case(f"keras-{k}", "tensorflow", "Keras CNN (tf.function)", k, _keras_run(k), None,
                 {"fast"} if k == "Dropout" else set()) for k in ("Dropout", "GaussianNoise", "UpSampling2D")]


# ---------------------------------------------------------------------------- measure


def blamed(report: dict) -> tuple[str, str | None, list[str]]:
    """(the top-ranked call's short name, its place, the fixes named for it)."""
    answers = report.get("blame", {}).get("answers") or []
    if not answers:
        return "(none)", None, []
    top = answers[0]
    if "certainty" not in report["blame"]:  # monitor()/Keras blame: the lead answer, as the message picks it
        top = next((a for a in answers if a.get("deterministic") is False), None) or \
            next((a for a in answers if a.get("known")), answers[0])
    return top["op"].rsplit(".", 1)[-1], top.get("place") or report["blame"].get("place"), \
        [f["code"] for f in top.get("fixes") or []]


def measure(cases: list[Case], calls: bool = False, from_step: int = 0) -> list[dict]:
    from kb.probe.diff import Run, compare

    rows = []
    saved = os.environ.get("KB_PROBE_CALLS")
    os.environ["KB_PROBE_CALLS"] = "1" if calls else "0"
    PLANT.from_step = from_step
    try:
        for case in cases:
            with tempfile.TemporaryDirectory(prefix="kb-probe-blame-") as tmp:
                start = time.perf_counter()
                row = {"case": case.name, "framework": case.framework, "model": case.model,
                       "injected": case.injected, "place": case.place}
                PLANT.target = case.planted or case.injected
                try:
                    for run_no in (1, 2):
                        case.run(os.path.join(tmp, f"run{run_no}"), run_no)
                    report = compare(Run(os.path.join(tmp, "run1")), Run(os.path.join(tmp, "run2")))
                except Exception as exc:  # a case that cannot run here is reported, not hidden
                    row.update(blamed=f"error: {type(exc).__name__}: {exc}", right=False, seconds=0.0)
                    rows.append(row)
                    continue
                op, place, fixes = blamed(report)
                right = op == case.injected and (case.place is None or place == case.place
                                                 or (place or "").endswith(case.place))
                certainty = report.get("blame", {}).get("certainty")
                row.update(blamed=op, blamed_place=place, fixes=fixes, right=right, certainty=certainty,
                           first=f"{report['first']['kind']} {report['first']['name']}" if report.get("first") else None,
                           message=report.get("message"), seconds=round(time.perf_counter() - start, 2))
                rows.append(row)
    finally:
        PLANT.from_step = 0
        if saved is None:
            os.environ.pop("KB_PROBE_CALLS", None)
        else:
            os.environ["KB_PROBE_CALLS"] = saved
    return rows


def all_cases(frameworks: set[str], with_compile: bool) -> list[Case]:
    cases: list[Case] = []
    if "pytorch" in frameworks:
        cases += torch_cases(with_compile)
    if "jax" in frameworks:
        cases += jax_cases()
    if "tensorflow" in frameworks:
        cases += keras_cases()
    return cases


def table(rows: list[dict]) -> str:
    lines = ["| model | injected call | blamed call | first difference | right |", "|---|---|---|---|---|"]
    for r in rows:
        where = f" in `{r['blamed_place']}`" if r.get("blamed_place") else ""
        fixes = f" (fix: {', '.join(r['fixes'])})" if r.get("fixes") else ""
        lines.append(f"| {r['model']} | `{r['injected']}`" + (f" in `{r['place']}`" if r.get("place") else "")
                     + f" | `{r['blamed']}`{where}{fixes} | {r.get('first') or ''} | {'right' if r['right'] else 'WRONG'} |")
    right = sum(r["right"] for r in rows)
    lines.append("")
    lines.append(f"top-1 blame accuracy: {right}/{len(rows)} = {100 * right / max(len(rows), 1):.0f}%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--frameworks", default="pytorch,jax,tensorflow")
    parser.add_argument("--calls", action="store_true", help="record with KB_PROBE_CALLS=1")
    parser.add_argument("--from-step", type=int, default=0,
                        help="PyTorch cases: inject from this step on (the call outputs of step 0 are recorded "
                             "by default; later steps only with --calls)")
    parser.add_argument("--compile", action="store_true", default=True,
                        help="the torch.compile cases (the default: about 10 s on a CPU)")
    parser.add_argument("--no-compile", dest="compile", action="store_false", help="leave the torch.compile cases out")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cases = all_cases(set(args.frameworks.split(",")), args.compile)
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c.name in wanted]
    rows = measure(cases, calls=args.calls, from_step=args.from_step)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"recording: {'KB_PROBE_CALLS=1 (calls between children recorded every step)' if args.calls else 'default'}"
              f"; PyTorch divergences injected from step {args.from_step} on")
        print(table(rows))
        if not args.compile and "pytorch" in args.frameworks:
            print("not run: the torch.compile cases (--no-compile)")
    return 0 if all(r["right"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
