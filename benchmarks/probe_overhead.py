"""Probe overhead: step time of examples/probe/train_torch.py's model with and without watch().

    PYTHONPATH=. python benchmarks/probe_overhead.py [--device cuda] [--steps 50]

Prints one JSON line: median step seconds without probes, with probes (recording to a temp
dir), and the ratio. Probes hash every module output, input gradient, parameter gradient and
parameter after each step, so this is the cost of the densest setting.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "probe"))

import torch  # noqa: E402

from kb import probe  # noqa: E402
from train_torch import Model  # noqa: E402


def steps(device: str, n: int, watched: bool) -> list[float]:
    torch.manual_seed(0)
    model = Model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    handle = probe.watch(model, opt) if watched else None
    tokens = torch.randint(0, 1000, (4096,), device=device)
    buckets = torch.randint(0, 256, (4096,), device=device)
    target = torch.randn(256, 1, device=device)
    times = []
    for _ in range(n + 3):
        start = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(tokens, buckets), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    if handle:
        handle.remove()
    return times[3:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args()
    plain = statistics.median(steps(args.device, args.steps, False))
    with tempfile.TemporaryDirectory() as tmp:
        probe.configure(tmp)
        probed = statistics.median(steps(args.device, args.steps, True))
        probe.close()
    print(json.dumps({"device": args.device, "torch": torch.__version__, "steps": args.steps,
                      "median_step_s_plain": round(plain, 6), "median_step_s_probed": round(probed, 6),
                      "ratio": round(probed / plain, 2)}))


if __name__ == "__main__":
    main()
