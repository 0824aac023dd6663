"""GPU time of the probe's fused kernel in a probed training step, from torch.profiler: the
kernel's total and the step's total CUDA time, per step (2 profiled steps after 4 warm-up
steps of benchmarks/probe_models.py's model). One JSON line per model.

    PYTHONPATH=. python scripts/probe_gpu_time.py --models resnet50,gpt2 --dtype bf16
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))

import probe_models  # noqa: E402
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from kb import probe  # noqa: E402


def measure(name: str, dtype: str, profiled_steps: int = 2) -> dict:
    torch.manual_seed(0)
    model, x, y, classes = probe_models.make(name, False, "cuda")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    with tempfile.TemporaryDirectory() as tmp:
        probe.configure(tmp, stats_every=1)
        handle = probe.watch(model, opt)

        def step() -> None:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dtype == "bf16"):
                logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, classes), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        for _ in range(4):
            step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(profiled_steps):
                step()
            torch.cuda.synchronize()
        handle.remove()
        probe.close()
    from torch.autograd import DeviceType

    kernels = [e for e in prof.key_averages() if e.device_type == DeviceType.CUDA]  # kernels and copies only
    total = sum(e.self_device_time_total for e in kernels)
    fused = sum(e.self_device_time_total for e in kernels if e.key == "_probe_kernel")
    calls = sum(e.count for e in kernels if e.key == "_probe_kernel")
    return {"model": name, "dtype": dtype, "gpu_ms_per_step": round(total / 1e3 / profiled_steps, 2),
            "probe_kernel_ms_per_step": round(fused / 1e3 / profiled_steps, 2),
            "probe_kernel_launches_per_step": calls // profiled_steps,
            "probe_kernel_us_each": round(fused / max(calls, 1), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,gpt2")
    ap.add_argument("--dtype", default="bf16")
    args = ap.parse_args()
    for name in args.models.split(","):
        print(json.dumps(measure(name, args.dtype)), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
