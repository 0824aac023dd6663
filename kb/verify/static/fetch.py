"""Download one wheel with pip (never install it), hash it, hand it over, delete it.

`pip download --no-deps` is the ordinary client for the package index: it honours the
index's own selection of the wheel for a platform and Python, which is what a user installing
that release on Linux x86-64 gets. The wheel lives in a private temporary folder for as
long as it is read, so disk use stays at one wheel.

The preferred Python comes first; a release that ships no wheel for it (jaxlib 0.11 on has
none for CPython 3.11) is asked for again with each fallback Python in turn, and the wheel
says which one served it (`Wheel.python`, and the tag in its file name).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kb.verify.static.wheels import PLATFORMS, PYTHONS


class NotServed(LookupError):
    """The index serves no wheel of this release for the platform and Pythons read."""


@dataclass(frozen=True)
class Wheel:
    path: Path
    sha256: str
    size: int
    python: str = ""  # the --python-version pip was asked for when it served this wheel

    @property
    def tag(self) -> str:
        """The wheel's compatibility tag from its file name: cp312-cp312-manylinux_2_27_x86_64."""
        parts = self.path.name.removesuffix(".whl").split("-")
        return "-".join(parts[-3:]) if len(parts) >= 5 else ""


def _environment() -> dict[str, str]:
    """pip without a machine's local caps and wheel folders: the index's own files only."""
    env = dict(os.environ)
    env["PIP_CONFIG_FILE"] = os.devnull
    env.pop("PIP_FIND_LINKS", None)
    env.pop("PIP_CONSTRAINT", None)
    return env


def command(package: str, version: str, folder: Path, python: str = PYTHONS[0]) -> list[str]:
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", python,
            *platforms, "--quiet", "--dest", str(folder), f"{package}=={version}"]


def _fetch(package: str, version: str, folder: Path, python: str, timeout: float) -> Path:
    """The one wheel pip downloads for this Python; NotServed when the index has none for it."""
    proc = subprocess.run(command(package, version, folder, python), env=_environment(), capture_output=True, text=True, timeout=timeout)
    files = sorted(folder.glob("*.whl"))
    if proc.returncode == 0 and files:
        return files[0]
    for stale in files:
        stale.unlink()
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no wheel"]
    if "No matching distribution" in (proc.stderr or "") or "Could not find a version" in (proc.stderr or ""):
        raise NotServed(f"{package}=={version} for CPython {python}: {tail[0]}")
    raise OSError(f"pip download {package}=={version} (CPython {python}) failed: {tail[0]}")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def download(package: str, version: str, scratch: Path | None = None, timeout: float = 1800,
             pythons: Sequence[str] = PYTHONS) -> Iterator[Wheel]:
    """The wheel of package==version for the first of `pythons` the index serves it for,
    deleted (with its folder) when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="kb-static-", dir=scratch))
    try:
        path, used, tried = None, "", []
        for python in pythons:
            try:
                path, used = _fetch(package, version, folder, python, timeout), python
                break
            except NotServed:
                tried.append(python)
        if path is None:
            raise NotServed(f"{package}=={version}: no Linux x86-64 wheel for CPython {', '.join(tried)}")
        yield Wheel(path, sha256(path), path.stat().st_size, used)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
