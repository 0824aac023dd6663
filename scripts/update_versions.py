"""Refresh data/versions/<name>.yaml from the package registry's release history.

Each release's date is the first upload time of any of its files, over every package
name the framework was published under (TensorFlow: tensorflow, tensorflow-gpu,
tensorflow-cpu; some releases exist under only one of them). Yanked-only and file-less
releases are skipped; pre-releases are skipped because ranges are written on releases
(docs/versions.md). Writes are atomic and only happen when the text changes.

    python scripts/update_versions.py            # all registries
    python scripts/update_versions.py tensorflow # one
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PACKAGES = {
    "tensorflow": ("tensorflow", ["tensorflow", "tensorflow-gpu", "tensorflow-cpu"]),
    "horovod": ("horovod", ["horovod"]),
    "pytorch": ("pytorch", ["torch"]),
    # GPU libraries, keyed by the library's own version: NVIDIA's wheels carry it as the first
    # three components (nvidia-cudnn-cu12 9.1.0.70 is cuDNN 9.1.0, build 70), so a query for
    # "9.1.0" or "9.1" matches the wheel's release. `nvidia-cublas` is the CUDA 13 wheel.
    "cudnn": ("cudnn", ["nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"]),
    "cublas": ("cublas", ["nvidia-cublas-cu11", "nvidia-cublas-cu12", "nvidia-cublas"]),
    "nccl": ("nccl", ["nvidia-nccl-cu11", "nvidia-nccl-cu12", "nvidia-nccl-cu13"]),
    "vllm": ("vllm", ["vllm"]),
    "sglang": ("sglang", ["sglang"]),
    "flash-attn": ("flash-attn", ["flash-attn"]),
    "transformer-engine": ("transformer-engine", ["transformer-engine"]),
    "megatron-core": ("megatron-core", ["megatron-core"]),
    "deepspeed": ("deepspeed", ["deepspeed"]),
    "torchvision": ("torchvision", ["torchvision"]),
    "mamba-ssm": ("mamba-ssm", ["mamba-ssm"]),
    "causal-conv1d": ("causal-conv1d", ["causal-conv1d"]),
    "keras": ("keras", ["keras"]),
    # Ranges of jax records are written in jax versions; jaxlib (the compiled XLA that holds the
    # --xla_gpu_* flags) has its own line, kept so notes can name the jaxlib a flag needs.
    "jax": ("jax", ["jax"]),
    "jaxlib": ("jax", ["jaxlib"]),
}

NOTES = {
    # Kept through a refresh (_read_requirements): the registry's history does not hold them.
    "tensorflow": "; keras: the Requires-Dist keras line of the release's tensorflow-cpu wheel METADATA (the wheel"
    " named in read_from, downloaded and read by hand); a release without it was not read",
    # Observed in the registry's history, said in the file so nobody writes a range below it.
    "jaxlib": ". PyPI lists jaxlib only from 0.4.13 (0.4.32 is yanked); older jaxlib wheels are not on"
    " PyPI, so jaxlib versions before 0.4.13 cannot be named.",
}

LIBRARIES = {"cudnn", "cublas", "nccl"}
"""Registries whose wheels repackage a vendor library: placeholder (0.x) and .postN re-uploads
of the same library release are skipped."""

EXTRA: dict[str, dict[str, str]] = {
    # Releases older than the wheels, each from the vendor document named here.
    "cudnn": {
        "7.6.5": "cuDNN 7.6.5 release notes (docs.nvidia.com/deeplearning/cudnn/archives/cudnn-801-preview/cudnn-release-notes/rel_7xx.html)",
        "8.0.1": "cuDNN 8.0.1 (seed 001 quotes its developer guide; archive cudnn-801-preview)",
    },
    "cublas": {
        "10.0": "cuDNN 7.6.5 release notes: 'earlier cuBLAS libraries, such as cuBLAS 10.0'",
        "10.2": "cuDNN 7.6.5 release notes: 'default buffer configuration in cuBLAS 10.2 and 11.0'",
        "11.0": "cuDNN 7.6.5 release notes: 'default buffer configuration in cuBLAS 10.2 and 11.0'",
    },
    "nccl": {
        "2.4.8": "NCCL 2.4.8 documentation archive (docs.nvidia.com/deeplearning/nccl/archives/nccl_248)",
        "2.5.6": "NCCL git tag v2.5.6-1, the first 2.5 release (github.com/NVIDIA/nccl); env.rst dates NCCL_ALGO and NCCL_PROTO 'since 2.5'",
        "2.11.4": "NCCL 2.11.4 documentation archive (docs.nvidia.com/deeplearning/nccl/archives/nccl_2114)",
    },
}
"""Curated, dateless releases that no package index holds (kept on every refresh)."""


def index_json_url(package: str) -> str:
    """The JSON release-history URL of the index pip itself uses by default."""
    from pip._internal.models.index import PyPI

    return f"{PyPI.pypi_url.rstrip('/')}/{package}/json"


def session():
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    s = requests.Session()
    retry = Retry(total=5, backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504))
    s.mount("https://", HTTPAdapter(max_retries=retry))
    return s


def releases(http, packages: list[str], library: bool = False) -> dict[str, str]:
    from packaging.version import Version

    dates: dict[str, str] = {}
    for package in packages:
        response = http.get(index_json_url(package), timeout=60)
        response.raise_for_status()
        for version, files in response.json()["releases"].items():
            files = [f for f in files if not f.get("yanked")]
            if not files or Version(version).is_prerelease:
                continue
            if library and (Version(version).major == 0 or Version(version).is_postrelease):
                continue
            first = min(f["upload_time"] for f in files)[:10]
            if version not in dates or first < dates[version]:
                dates[version] = first
    return dates


def _read_requirements(path: Path) -> dict:
    """The `keras:` requirements already in a registry file (read from wheels by people, not from
    the registry's release history): kept through a refresh, never dropped."""
    if not path.exists():
        return {}
    from kb import schema
    from kb.yamlio import read

    old = schema.VersionRegistry.model_validate(read(path).data)
    return {r.version: r.keras for r in old.releases if r.keras is not None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"registries to refresh: {', '.join(sorted(PACKAGES))} (default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(PACKAGES))
    if unknown:
        parser.error(f"unknown registry {unknown[0]!r}; choose from {', '.join(sorted(PACKAGES))}")

    import datetime as dt

    from kb import canonical, schema
    from kb.yamlio import write_atomic

    http = session()
    for name in args.names or sorted(PACKAGES):
        framework, packages = PACKAGES[name]
        dates = releases(http, packages, library=name in LIBRARIES)
        extra = EXTRA.get(name, {})
        source = (
            "Package registry release history of " + ", ".join(packages)
            + " (date = first upload of any file of the release; written by scripts/update_versions.py)"
        )
        if name in LIBRARIES:
            source += "; the library version is the wheel version's first three components"
        if extra:
            source += "; dateless releases from vendor documents: " + "; ".join(f"{v}: {why}" for v, why in extra.items())
        path = ROOT / "data" / "versions" / f"{name}.yaml"
        kept = _read_requirements(path)
        registry = schema.VersionRegistry(
            name=name,
            framework=framework,
            source=source + NOTES.get(name, ""),
            releases=[schema.Release(version=v, date=dt.date.fromisoformat(d), keras=kept.get(v)) for v, d in dates.items()]
            + [schema.Release(version=v, keras=kept.get(v)) for v in extra if v not in dates],
        )
        text = canonical.registry_text(registry, path, ROOT)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            write_atomic(path, text)
            print(f"{path.relative_to(ROOT)}: {len(dates)} releases (updated)")
        else:
            print(f"{path.relative_to(ROOT)}: {len(dates)} releases (unchanged)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
