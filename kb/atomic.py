"""Atomic file replacement, shared by every writer of data and generated files."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import time
from pathlib import Path
from collections.abc import Iterator


def write_atomic(path: Path, text: str | bytes) -> None:
    """Replace `path` with `text` (str: UTF-8; bytes: as they are) so a crash leaves either the
    old or the new file, never half."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
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


class Busy(OSError):
    """Another `kb` process held the lock for longer than the caller waits."""


@contextlib.contextmanager
def locked(path: Path, wait: float = 600.0) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) while the block runs.

    Why: two `kb build` or `kb site` runs at once would each write a consistent set of files,
    but interleaved they leave a mix of both (or one deletes the other's temporary folder).
    The second waits for the first, up to `wait` seconds, then fails with Busy (an OSError:
    one line at the CLI). The lock is the kernel's (flock), so a killed holder frees it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock, atomic swaps still hold
            yield
            return
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Busy(errno.EBUSY, f"another kb run held the lock for over {wait:g} s", str(path)) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
