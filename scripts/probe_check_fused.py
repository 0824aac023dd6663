"""The fused CUDA kernel (kb.probe._torch_fused) against the definition and the plain-torch
path, and the host cost of one probed tensor on each path. Needs a CUDA GPU and Triton.
Prints one line per check, then the timings as JSON lines; exits 1 if any check differs.

    PYTHONPATH=. python scripts/probe_check_fused.py
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import time

import torch

from kb.probe import _torch_device, fingerprint, recorder


def _run(tensors, stats: bool, fused: bool) -> list[dict]:
    _torch_device._fused[0] = None if fused else False
    collector = _torch_device.Collector()
    entries = [{} for _ in tensors]
    for t, e in zip(tensors, entries):
        collector.add(t, e, stats)
    collector.submit()
    collector.resolve(True)
    return entries


def _same_stats(a: dict, b: dict) -> bool:
    if a["min"] != b["min"] and not (math.isnan(a["min"]) and math.isnan(b["min"])):
        return False
    if a["max"] != b["max"] and not (math.isnan(a["max"]) and math.isnan(b["max"])):
        return False
    if not math.isclose(a["mean"], b["mean"], rel_tol=1e-9, abs_tol=1e-12):
        return False
    return a["sample"] == b["sample"]


def checks() -> int:
    bad = 0
    g = torch.Generator().manual_seed(0)
    cases = []
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int64, torch.int32,
                  torch.int8, torch.uint8, torch.bool):
        for n in (4, 8, 12, fingerprint.WIDTH, 3 * fingerprint.WIDTH + 8, (1 << 20) + 4, 1 << 24):
            cases.append((dtype, n))
    tensors = [(torch.randn(n, generator=g) * 100).to(dtype).cuda() for dtype, n in cases]
    tensors.append(torch.randn(64, 48, generator=g).cuda().t())  # not contiguous
    tensors.append(torch.randn(7, generator=g).cuda().to(torch.bfloat16))  # odd bytes: the torch path
    tensors.append(torch.randn(1000, generator=g).cuda()[1:])  # offset view
    cases += [("transposed", 64 * 48), ("odd bf16", 7), ("offset view", 999)]
    # more than one buffer's worth of records in one step
    tensors += [torch.full((5,), float(i), device="cuda") for i in range(_torch_device._BUFFER_ROWS + 10)]
    cases += [("many", 5)] * (_torch_device._BUFFER_ROWS + 10)
    for stats in (True, False):
        fused = _run(tensors, stats, True)
        plain = _run(tensors, stats, False)
        for (dtype, n), t, f, p in zip(cases, tensors, fused, plain):
            want = fingerprint.hexdigest(fingerprint.reference(_torch_device.words(t.cpu()).numpy()))
            ok = f["hash"] == want == p["hash"]
            if stats:
                ok = ok and _same_stats(f["stats"], p["stats"])
            bad += not ok
            if not ok or dtype != "many":
                print(f"fused {str(dtype):15} n={n:9} stats={stats!s:5}: {'same' if ok else 'DIFFERENT'} "
                      f"{f['hash']}" + ("" if ok else f" want {want} plain {p['hash']} {f.get('stats')} {p.get('stats')}"))
    return bad


def host_cost(fused: bool, stats: bool, n: int = 2000, size: int = 4096) -> dict:
    """Seconds of host time per probed tensor, through the probe's own entry point."""
    from kb.probe import _torch

    _torch_device._fused[0] = None if fused else False
    xs = [torch.randn(size, device="cuda") for _ in range(8)]
    with tempfile.TemporaryDirectory() as tmp:
        recorder.configure(tmp, stats_every=1 if stats else 1000)
        recorder.set_step(1 if not stats else 0)
        for _ in range(2):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for i in range(n):
                _torch._record_tensor(xs[i % 8], f"t{i}", "forward")
            host = time.perf_counter() - start
            torch.cuda.synchronize()
            total = time.perf_counter() - start
            recorder.set_step()
        recorder.close()
    return {"path": "fused" if fused else "torch", "stats": stats, "tensors": n, "elements": size,
            "host_us_per_tensor": round(host / n * 1e6, 1), "with_gpu_us_per_tensor": round(total / n * 1e6, 1)}


def main() -> int:
    import triton

    print(f"torch {torch.__version__} triton {triton.__version__} {torch.cuda.get_device_name(0)}")
    bad = checks()
    print(f"{'all same' if not bad else f'{bad} DIFFERENT'}")
    for fused in (True, False):
        for stats in (True, False):
            print(json.dumps(host_cost(fused, stats)), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
