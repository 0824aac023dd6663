"""Atomic file replacement, shared by every writer of data and generated files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` so a crash leaves either the old or the new file, never half."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise


def _naming(exc: OSError, path: Path) -> OSError:
    """The same error, naming the file the caller meant (not a temporary one) for one-line reports."""
    return type(exc)(exc.errno, exc.strerror or str(exc), str(path))


def _umask() -> int:
    """mkstemp creates 0600 files; data files get the usual permissions instead."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
