"""Download one wheel with pip (never install it), hash it, hand it over, delete it.

`pip download --no-deps` is the ordinary client for the package index: it honours the
index's own selection of the wheel for a platform and Python, which is what a user installing
that release on Linux x86-64 gets. The wheel lives in a private temporary folder for as
long as it is read, so disk use stays at one wheel.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kb.verify.static.wheels import PLATFORMS, PYTHON


class NotServed(LookupError):
    """The index serves no wheel of this release for the platform and Python read."""


@dataclass(frozen=True)
class Wheel:
    path: Path
    sha256: str
    size: int


def _environment() -> dict[str, str]:
    """pip without a machine's local caps and wheel folders: the index's own files only."""
    env = dict(os.environ)
    env["PIP_CONFIG_FILE"] = os.devnull
    env.pop("PIP_FIND_LINKS", None)
    env.pop("PIP_CONSTRAINT", None)
    return env


def command(package: str, version: str, folder: Path) -> list[str]:
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", PYTHON,
            *platforms, "--quiet", "--dest", str(folder), f"{package}=={version}"]


@contextlib.contextmanager
def download(package: str, version: str, scratch: Path | None = None, timeout: float = 1800) -> Iterator[Wheel]:
    """The wheel of package==version, deleted (with its folder) when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="kb-static-", dir=scratch))
    try:
        proc = subprocess.run(command(package, version, folder), env=_environment(), capture_output=True, text=True, timeout=timeout)
        files = sorted(folder.glob("*.whl"))
        if proc.returncode != 0 or not files:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no wheel"]
            if "No matching distribution" in (proc.stderr or "") or "Could not find a version" in (proc.stderr or ""):
                raise NotServed(f"{package}=={version}: {tail[0]}")
            raise OSError(f"pip download {package}=={version} failed: {tail[0]}")
        path = files[0]
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        yield Wheel(path, digest.hexdigest(), path.stat().st_size)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
