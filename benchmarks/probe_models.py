"""Probe overhead on models people train: training-step time with and without `probe.watch`.

    PYTHONPATH=. python benchmarks/probe_models.py --device cuda            # GPT-2 small + ResNet-50 sizes
    PYTHONPATH=. python benchmarks/probe_models.py --device cpu --small     # the same shapes, scaled down

Both models are built here in plain torch (no download, no torchvision): a GPT-2-small-sized
decoder (12 layers, width 768, 12 heads, vocabulary 50257, context 1024; attention through
F.scaled_dot_product_attention) and a ResNet-50-sized CNN (bottleneck blocks 3-4-6-3, 224x224
input, 1000 classes). Each is timed in fp32 and under bf16 autocast, unprobed, probed with
every module watched (fingerprints and statistics every step), and probed with statistics
sampled every 100 steps. One JSON line per configuration: the median step time (each step
ends with a device synchronize), the ratio to the unprobed step, and the log bytes per step.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from kb import probe


class Block(torch.nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.ln2 = torch.nn.LayerNorm(width)
        self.fc = torch.nn.Linear(width, 4 * width)
        self.act = torch.nn.GELU(approximate="tanh")
        self.out = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, w))
        return x + self.out(self.act(self.fc(self.ln2(x))))


class GPT(torch.nn.Module):
    def __init__(self, vocab: int, context: int, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, width)
        self.wpe = torch.nn.Embedding(context, width)
        self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class Bottleneck(torch.nn.Module):
    def __init__(self, cin: int, mid: int, stride: int) -> None:
        super().__init__()
        cout = 4 * mid
        self.conv1 = torch.nn.Conv2d(cin, mid, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(mid)
        self.conv2 = torch.nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(mid)
        self.conv3 = torch.nn.Conv2d(mid, cout, 1, bias=False)
        self.bn3 = torch.nn.BatchNorm2d(cout)
        self.relu = torch.nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class ResNet(torch.nn.Module):
    def __init__(self, depths=(3, 4, 6, 3), width: int = 64, classes: int = 1000) -> None:
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, width, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(width),
                                        torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], width
        for i, depth in enumerate(depths):
            mid = width * 2 ** i
            for j in range(depth):
                blocks.append(Bottleneck(cin, mid, 2 if j == 0 and i > 0 else 1))
                cin = 4 * mid
        self.blocks = torch.nn.Sequential(*blocks)
        self.fc = torch.nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


def make(name: str, small: bool, device: str):
    """(model, inputs, targets, number of classes)."""
    g = torch.Generator().manual_seed(0)
    if name == "gpt2":
        vocab, context, width, layers, heads, batch = (50257, 1024, 768, 12, 12, 8) if not small else (1000, 64, 64, 2, 4, 4)
        model = GPT(vocab, context, width, layers, heads)
        x = torch.randint(0, vocab, (batch, context), generator=g)
        y = torch.randint(0, vocab, (batch * context,), generator=g)
        return model.to(device), x.to(device), y.to(device), vocab
    batch, size = (64, 224) if not small else (4, 64)
    model = ResNet() if not small else ResNet(depths=(1, 1, 1, 1), width=8, classes=10)
    x = torch.randn(batch, 3, size, size, generator=g)
    y = torch.randint(0, 10 if small else 1000, (batch,), generator=g)
    return model.to(device), x.to(device), y.to(device), 10 if small else 1000


def time_steps(name: str, small: bool, device: str, dtype: str, mode: str, steps: int, log_dir: str | None) -> dict:
    torch.manual_seed(0)
    model, x, y, classes = make(name, small, device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    handle = None
    if mode != "unprobed":
        probe.configure(log_dir, stats_every=1 if mode == "probed" else 100)
        handle = probe.watch(model, opt)
    autocast = torch.autocast(device, dtype=torch.bfloat16) if dtype == "bf16" else contextlib.nullcontext()
    times, hosts = [], []
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(steps + 3):
        sync()
        start = time.perf_counter()
        with autocast:
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, classes), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        hosts.append(time.perf_counter() - start)
        sync()
        times.append(time.perf_counter() - start)
    out = {"model": name + ("-small" if small else ""), "device": device, "dtype": dtype, "mode": mode,
           "steps": steps, "median_step_ms": round(statistics.median(times[3:]) * 1e3, 3),
           "median_host_ms": round(statistics.median(hosts[3:]) * 1e3, 3),
           "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1)}
    if handle is not None:
        handle.remove()
        probe.close()
        path = os.path.join(log_dir, "probes.jsonl")
        out["log_bytes_per_step"] = round(os.path.getsize(path) / (steps + 3))
        with open(path, encoding="utf-8") as fh:
            out["records_per_step"] = round(sum(1 for _ in fh) / (steps + 3))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--small", action="store_true", help="scaled-down shapes (CPU)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--models", default="gpt2,resnet50")
    ap.add_argument("--dtypes", default="bf16,fp32")
    args = ap.parse_args()
    for name in args.models.split(","):
        for dtype in args.dtypes.split(","):
            base = None
            for mode in ("unprobed", "probed", "probed-sampled"):
                with tempfile.TemporaryDirectory() as tmp:
                    row = time_steps(name, args.small, args.device, dtype, mode, args.steps, tmp)
                base = base or row["median_step_ms"]
                row["ratio"] = round(row["median_step_ms"] / base, 2)
                print(json.dumps(row), flush=True)
                if args.device == "cuda":
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
