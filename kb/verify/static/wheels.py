"""Which wheels carry each framework's evidence, and which releases are read.

Releases come from the framework's version registry (data/versions/), limited to those the
static reading covers; a release the package index does not serve for Linux x86-64 and
CPython 3.11 is skipped and reported, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kb.verify.static import readers


@dataclass(frozen=True)
class Target:
    framework: str  # the evidence folder: data/runs/static-<framework>/
    registry: str  # data/versions/<registry>.yaml
    packages: tuple[str, ...]  # tried in order; the first the index serves for the release is read
    first: str  # the oldest release read
    read: Callable
    extra: tuple[str, ...] = ()  # further wheels of the same version, read too when served


TARGETS: dict[str, Target] = {
    "pytorch": Target("pytorch", "pytorch", ("torch",), "1.13.0", readers.pytorch),
    "tensorflow": Target("tensorflow", "tensorflow", ("tensorflow",), "2.12.0", readers.tensorflow),
    "jaxlib": Target("jaxlib", "jaxlib", ("jaxlib",), "0.4.13", readers.jaxlib, extra=("jax-cuda12-pjrt", "jax-cuda13-pjrt")),
    "nccl": Target("nccl", "nccl", ("nvidia-nccl-cu12", "nvidia-nccl-cu13"), "2.16.2", readers.nvidia("nccl")),
    "cublas": Target("cublas", "cublas", ("nvidia-cublas-cu12", "nvidia-cublas"), "12.0.1.189", readers.nvidia("cublas")),
    "cudnn": Target("cudnn", "cudnn", ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13"), "8.9.0.131", readers.nvidia("cudnn")),
}

PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64")
PYTHON = "3.11"
