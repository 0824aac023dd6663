"""Where a probed training step's extra host time goes, part by part: the step with no probe,
with the hooks only (recording switched off inside them), with the records but no device
work (each record filled with a constant), and with everything. Each line is one
configuration of benchmarks/probe_models.py's models; the differences between lines are the
cost of each part.

    PYTHONPATH=. python scripts/probe_breakdown.py --model resnet50 --dtype bf16
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))

import probe_models  # noqa: E402

from kb.probe import _torch, recorder  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,gpt2")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    real_record, real_add = _torch._record_tensor, _torch._collector.add

    def constant(t, entry, with_stats):
        entry["hash"] = "fp0"
        recorder.filled()

    parts = [("unprobed", "unprobed", None), ("hooks only", "probed", "hooks"),
             ("hooks + records, no device work", "probed", "records"), ("everything", "probed", "all"),
             ("everything, statistics every 100 steps", "probed-sampled", "all")]
    counts = {"tensors": 0, "not contiguous": 0, "plain path": 0}
    try:
        from kb.probe import _torch_fused

        real_prepare = _torch_fused.prepare

        def counting(t):
            counts["tensors"] += 1
            counts["not contiguous"] += not t.is_contiguous()
            out = real_prepare(t)
            counts["plain path"] += out is None
            return out

        _torch_fused.prepare = counting
    except ImportError:  # no Triton: every tensor takes the plain path
        pass
    for model in args.models.split(","):
        base = None
        for label, mode, part in parts:
            _torch._record_tensor = (lambda *a, **k: None) if part == "hooks" else real_record
            _torch._collector.add = constant if part == "records" else real_add
            with tempfile.TemporaryDirectory() as tmp:
                row = probe_models.time_steps(model, args.small, args.device, args.dtype, mode, args.steps, tmp)
            base = base or row
            seen = dict(counts)
            for key in counts:
                counts[key] = 0
            records = row.get("records_per_step") or 0
            extra = row["median_host_ms"] - base["median_host_ms"]
            print(json.dumps({"model": model, "dtype": args.dtype, "part": label, "step_ms": row["median_step_ms"],
                              "host_ms": row["median_host_ms"], "extra_host_ms": round(extra, 2),
                              "records_per_step": records,
                              "extra_host_us_per_record": round(extra * 1e3 / records, 1) if records else None,
                              "fused_path_tensors": seen}),
                  flush=True)
    _torch._record_tensor, _torch._collector.add = real_record, real_add


if __name__ == "__main__":
    main()
