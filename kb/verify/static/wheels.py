"""Which wheels carry each framework's evidence, and which releases are read.

Releases come from the framework's version registry (data/versions/), limited to those the
static reading covers. The Linux x86-64 wheel for CPython 3.11 is preferred; a release with
none is asked for with CPython 3.12, 3.13, 3.14 and then 3.10 (jaxlib 0.11 on ships no cp311
wheel), and any manylinux x86-64 tag is accepted after the usual ones; the evidence records
the Python and tag that served it. A release the package index serves for none of them is
skipped and reported, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from kb.verify.static import readers

PREFERRED_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                       "manylinux1_x86_64")
PLATFORMS = PREFERRED_PLATFORMS + tuple(
    f"manylinux_2_{n}_x86_64" for n in range(40, 4, -1) if f"manylinux_2_{n}_x86_64" not in PREFERRED_PLATFORMS)
"""pip's --platform matches tags exactly, and earlier ones win: the preferred tags first (the choice for
every release that has them), then any other manylinux x86-64 tag, so a release tagged only for another
glibc (nvidia-nccl-cu12 2.28 to 2.31: manylinux_2_18) is still read."""
PYTHON = "3.11"
PYTHONS = (PYTHON, "3.12", "3.13", "3.14", "3.10")
"""The preferred CPython, then the fallbacks for a release that ships no wheel for it."""
PURE = (PYTHON,)
"""The NVIDIA library wheels are py3-none: one Python serves every release they have."""


@dataclass(frozen=True)
class Target:
    framework: str  # the evidence folder: data/runs/static-<framework>/
    registry: str  # data/versions/<registry>.yaml
    packages: tuple[str, ...]  # tried in order; the first the index serves for the release is read
    first: str  # the oldest release read
    read: Callable
    extra: tuple[str, ...] = ()  # further wheels of the same version, read too when served
    pythons: tuple[str, ...] = PYTHONS  # the CPython versions asked for, in order


TARGETS: dict[str, Target] = {
    "pytorch": Target("pytorch", "pytorch", ("torch",), "1.13.0", readers.pytorch),
    "tensorflow": Target("tensorflow", "tensorflow", ("tensorflow",), "2.12.0", readers.tensorflow),
    "jaxlib": Target("jaxlib", "jaxlib", ("jaxlib",), "0.4.13", readers.jaxlib, extra=("jax-cuda12-pjrt", "jax-cuda13-pjrt")),
    "nccl": Target("nccl", "nccl", ("nvidia-nccl-cu12", "nvidia-nccl-cu13"), "2.16.2", readers.nvidia("nccl"), pythons=PURE),
    "cublas": Target("cublas", "cublas", ("nvidia-cublas-cu12", "nvidia-cublas", "nvidia-cublas-cu11"), "11.10.3.66",
                     readers.nvidia("cublas"), pythons=PURE),
    "cudnn": Target("cudnn", "cudnn", ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cudnn-cu11"), "8.5.0.96",
                    readers.nvidia("cudnn"), pythons=PURE),
}

