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
    # Ranges of jax records are written in jax versions; jaxlib (the compiled XLA that holds the
    # --xla_gpu_* flags) has its own line, kept so notes can name the jaxlib a flag needs.
    "jax": ("jax", ["jax"]),
    "jaxlib": ("jax", ["jaxlib"]),
}

NOTES = {
    # Observed in the registry's history, said in the file so nobody writes a range below it.
    "jaxlib": ". PyPI lists jaxlib only from 0.4.13 (0.4.32 is yanked); older jaxlib wheels are not on"
    " PyPI, so jaxlib versions before 0.4.13 cannot be named.",
}


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


def releases(http, packages: list[str]) -> dict[str, str]:
    from packaging.version import Version

    dates: dict[str, str] = {}
    for package in packages:
        response = http.get(index_json_url(package), timeout=60)
        response.raise_for_status()
        for version, files in response.json()["releases"].items():
            files = [f for f in files if not f.get("yanked")]
            if not files or Version(version).is_prerelease:
                continue
            first = min(f["upload_time"] for f in files)[:10]
            if version not in dates or first < dates[version]:
                dates[version] = first
    return dates


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
        dates = releases(http, packages)
        registry = schema.VersionRegistry(
            name=name,
            framework=framework,
            source="Package registry release history of " + ", ".join(packages)
            + " (date = first upload of any file of the release; written by scripts/update_versions.py)"
            + NOTES.get(name, ""),
            releases=[schema.Release(version=v, date=dt.date.fromisoformat(d)) for v, d in dates.items()],
        )
        path = ROOT / "data" / "versions" / f"{name}.yaml"
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
