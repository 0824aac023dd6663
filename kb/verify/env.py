"""The environment a run was measured in: GPU, driver, CUDA, cuDNN, frameworks, Python, CPU.

Framework versions come from package metadata (no import); CUDA and cuDNN from the
installed PyTorch in a short child process, only when a GPU is present.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata

DISTRIBUTIONS = {
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tf-nightly"),
    "pytorch": ("torch",),
    "jax": ("jax",),
    "torchvision": ("torchvision",),
}


def framework_versions(distributions: Mapping[str, tuple[str, ...]] = DISTRIBUTIONS) -> dict[str, str]:
    """Per name, the version of the first of its distributions that is installed."""
    found = {}
    for framework, names in distributions.items():
        for name in names:
            try:
                found[framework] = metadata.version(name)
                break
            except metadata.PackageNotFoundError:
                continue
    return found


def tensorflow_is_cpu_only() -> bool:
    try:
        metadata.version("tensorflow-cpu")
        return True
    except metadata.PackageNotFoundError:
        return False


def _gpus() -> tuple[list[str], str | None]:
    if not shutil.which("nvidia-smi"):
        return [], None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return [], None
    rows = [[p.strip() for p in line.split(",")] for line in out.splitlines() if line.strip()]
    return [r[0] for r in rows], (rows[0][1] if rows and len(rows[0]) > 1 else None)


def _cuda_cudnn(frameworks: dict[str, str]) -> tuple[str | None, str | None]:
    if "pytorch" not in frameworks:
        return None, None
    code = "import json,torch;print(json.dumps([torch.version.cuda, torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None]))"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
        cuda, cudnn = json.loads(out.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None, None
    return cuda, (str(cudnn) if cudnn is not None else None)


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower())
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")


def detect(gpu: bool = True) -> dict:
    """The `environment:` mapping of a run file (CONTRACTS.md)."""
    names, driver = _gpus() if gpu else ([], None)
    frameworks = framework_versions()
    cuda, cudnn = _cuda_cudnn(frameworks) if names else (None, None)
    env = {
        "gpu": {"name": names[0] if names else None, "count": len(names)},
        "driver": driver,
        "cuda": cuda,
        "cudnn": cudnn,
        "frameworks": frameworks,
        "python": platform.python_version(),
        "cpu": _cpu(),
        "platform": f"{platform.system()}-{platform.machine()}",
    }
    identity = json.dumps({k: env[k] for k in ("gpu", "driver", "cuda", "cudnn", "frameworks", "python", "cpu")}, sort_keys=True)
    head = _slug(names[0].replace("NVIDIA", "")) + (f"-x{len(names)}" if names else "") if names else "cpu-" + _slug(platform.machine())
    env = {"env_id": f"{head}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}", **env}
    return env
