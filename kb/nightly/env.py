"""What this machine can verify: GPUs (nvidia-smi, else torch.cuda) and installed frameworks.

Versions come from package metadata, not imports: importing TensorFlow or PyTorch costs
seconds and memory, and the verifiers run in their own processes anyway.
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import subprocess
import sys
from typing import Any

# Beyond what kb verify plans for (kb/verify/env.py), the report names these too.
EXTRA_DISTRIBUTIONS = {"jaxlib": ("jaxlib",), "horovod": ("horovod",)}


def frameworks() -> dict[str, str]:
    """Installed framework versions: kb verify's detection, plus jaxlib and horovod for the report."""
    from kb.verify.env import framework_versions

    return {**framework_versions(), **framework_versions(EXTRA_DISTRIBUTIONS)}


def _nvidia_smi() -> dict[str, Any] | None:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [[c.strip() for c in line.split(",")] for line in out.splitlines() if line.strip()]
    if not rows:
        return None
    return {"name": rows[0][0], "count": len(rows), "driver": rows[0][1] if len(rows[0]) > 1 else None, "via": "nvidia-smi"}


def _torch_cuda() -> dict[str, Any] | None:
    if importlib.util.find_spec("torch") is None:
        return None
    code = ("import torch;n=torch.cuda.device_count() if torch.cuda.is_available() else 0;"
            "print(n);print(torch.cuda.get_device_name(0) if n else '')")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split("\n")
        count = int(out[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return {"name": out[1] or None, "count": count, "driver": None, "via": "torch.cuda"} if count else None


def detect(probe_torch: bool = True) -> dict[str, Any]:
    """The environment, in the run-file contract's field names where they overlap."""
    gpu = _nvidia_smi() or (_torch_cuda() if probe_torch else None)
    return {
        "gpu": {"name": gpu["name"] if gpu else None, "count": gpu["count"] if gpu else 0,
                "via": gpu["via"] if gpu else None},
        "driver": gpu.get("driver") if gpu else None,
        "frameworks": frameworks(),
        "python": platform.python_version(),
        "cpu": platform.machine(),
        "platform": platform.platform(terse=True),
    }


def skipped(environment: dict[str, Any]) -> list[str]:
    """What this machine cannot verify, said plainly for the report."""
    out = []
    if not environment["gpu"]["count"]:
        out.append("GPU verifiers (records with device gpu): no GPU found (nvidia-smi absent, torch.cuda unavailable)")
    for name in ("tensorflow", "pytorch", "jax"):
        if name not in environment["frameworks"]:
            out.append(f"{name} verifiers: {name} is not installed")
    return out
