"""Host microseconds of each part of recording one CUDA tensor (fused path), for tuning.

    PYTHONPATH=. python scripts/probe_host_parts.py
"""

from __future__ import annotations

import json
import tempfile
import time

import torch

from kb.probe import _torch, _torch_fused, recorder


def per_call(fn, n: int = 3000) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    took = time.perf_counter() - start
    torch.cuda.synchronize()
    return round(took / n * 1e6, 2)


def main() -> None:
    x = torch.randn(4096, device="cuda")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        recorder.configure(tmp)
        buf = _torch_fused.StepBuffers(x.device, 1 << 15, True)
        out["prepare"] = per_call(lambda: _torch_fused.prepare(x))
        out["detach"] = per_call(lambda: x.detach())
        out["data_ptr"] = per_call(lambda: x.data_ptr())
        out["reserve"] = per_call(lambda: recorder.reserve("n", "forward", framework="pytorch", device="gpu",
                                                           shape=list(x.shape), dtype="float32"))
        out["StepBuffers.add"] = per_call(lambda: buf.add(x))
        out["fast launcher"] = bool(_torch_fused._fast[0])
        _torch_fused._fast[0] = False
        buf.used = 0
        out["StepBuffers.add, Triton's launch"] = per_call(lambda: buf.add(x))
        _torch_fused._fast[0] = None
        buf.used = 0
        buf.used = 0
        out["_record_tensor"] = per_call(lambda: _torch._record_tensor(x, "n", "forward"))
        out["torch.empty(1)"] = per_call(lambda: torch.empty(1, device="cuda"))
        out["x.sum()"] = per_call(lambda: x.sum())
        import cProfile
        import pstats

        buf.used = 0
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(2000):
            _torch._record_tensor(x, "n", "forward")
        prof.disable()
        recorder.close()
    print(json.dumps(out))
    for dtype, n in ((torch.bfloat16, 64 * 256 * 56 * 56), (torch.float32, 64 * 256 * 56 * 56)):
        big = torch.randn(n, device="cuda").to(dtype)
        for stats in (True, False):
            b = _torch_fused.StepBuffers(big.device, 64, stats)
            b.add(big)
            b.used = 0
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(20):
                b.add(big)
                b.used = 0
            end.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(end) / 20
            print(json.dumps({"dtype": str(dtype), "elements": n, "stats": stats, "gpu_ms": round(ms, 3),
                              "GB_per_s": round(big.numel() * big.element_size() / ms / 1e6, 1)}))
    sizes = [4096] * 8
    xs = [torch.randn(s, device="cuda") for s in sizes]
    b = _torch_fused.StepBuffers(xs[0].device, 4096, True)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(4000):
        b.add(xs[i % 8])
    end.record()
    torch.cuda.synchronize()
    print(json.dumps({"small tensors": 4000, "gpu_plus_launch_us_each": round(start.elapsed_time(end) / 4000 * 1e3, 2)}))
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
