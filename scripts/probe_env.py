"""The environment a GPU probe script records beside its rows (torch, CUDA, Python, GPU name, driver), so
that each probe's file says where it ran; shared by scripts/probe_scan_lengths.py and
scripts/probe_lu_solve.py, which run on the GPU machine without the kb package's environment code."""

from __future__ import annotations

import platform
import subprocess


def environment(device: str) -> dict:
    import torch

    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu", "driver": None}
    if device == "cuda":
        try:
            env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True).stdout.strip()
        except OSError:
            pass
    return env
