"""Opening files that came from outside: bounded size, regular files only, no symlink escape.

Shared by the YAML reader (kb/yamlio.py) and the JSON reader (kb/jsonio.py) so that both
refuse the same things the same way. Standard library only.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class Refused(Exception):
    """A file the readers will not open; `message` and `hint` are for the person who sent it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def data_dir(path: Path) -> Path | None:
    """The nearest enclosing folder named data/ (the tree whose files must stay inside it)."""
    for parent in Path(os.path.abspath(path)).parents:
        if parent.name == "data":
            return parent
    return None


def check_inside(path: Path | str, within: Path, folders: dict[str, str] | None = None) -> None:
    """Refuse a path that resolves (through symlinks, of the file or a folder) out of `within`.

    A pull request can add a symlink named like a record; following it would let the build
    read /dev/zero, a 50 GB file or a secret elsewhere on the machine.

    `folders` (a scan's, made for one run over a tree and dropped after it): folder -> its resolved
    path, so that each folder (and `within`) is resolved once, not once per file in it. A file is then
    one lstat: one that is not a link resolves to its resolved folder joined with its name; a link
    (or a name lstat cannot see) is resolved in full, as without the table.
    """
    if folders is None:
        target = os.path.realpath(path)
        top = os.path.realpath(within)
    else:
        target = _resolved(os.fspath(path), folders)
        within_key = "\0" + os.fspath(within)  # not a folder's key: no path holds NUL
        known = folders.get(within_key)
        top = known if known is not None else folders.setdefault(within_key, os.path.realpath(within))
    target, top = os.path.normcase(target), os.path.normcase(top)
    # as Path's `top in target.parents`, without making a Path per parent (a scan checks every file)
    if target != top and not target.startswith(top if top.endswith(os.sep) else top + os.sep):
        raise Refused(
            f"a symlink that resolves outside {within.name}/ is refused",
            f"keep the file itself under {within.name}/ instead of a link",
        )


def _resolved(path: str, folders: dict[str, str]) -> str:
    """os.path.realpath(path), its folder's part looked up in (or added to) `folders`."""
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # missing, or a folder on the way that is not one: realpath says where it points
        link = True
    folder, name = os.path.split(path)
    if link or name in ("", ".", ".."):  # the folder part may hold `..` too: realpath resolves it after its links
        return os.path.realpath(path)
    real = folders.get(folder)
    if real is None:
        real = folders[folder] = os.path.realpath(folder)
    return os.path.join(real, name)


def read_bytes(path: Path, max_bytes: int, within: Path | None = None, folders: dict[str, str] | None = None) -> bytes:
    """At most `max_bytes` of a regular file, or Refused; the size is checked before reading.

    `within` defaults to the nearest enclosing data/ folder (none: no symlink check). The file
    is opened non-blocking, so a FIFO named *.yaml cannot hang the run, and the type and
    size are taken from the open descriptor, so a swap after the check changes nothing. At
    most max_bytes + 1 bytes are read even if the file grows meanwhile.
    """
    fd = _open_regular(Path(path), max_bytes, within, folders)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise too_big(len(raw), max_bytes)
    return raw


def _open_regular(path: Path, max_bytes: int, within: Path | None, folders: dict[str, str] | None = None) -> int:
    """An open descriptor of `path` once it is inside `within`, a regular file and no larger than
    max_bytes (checked on the descriptor); closed again when it is refused."""
    within = within if within is not None else data_dir(path)
    if within is not None:
        check_inside(path, within, folders)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("a symlink loop: the link leads back to itself, so there is no file to read",
                          "replace the link with the file itself") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file", "data files are plain files (not FIFOs, devices or folders)")
        if info.st_size > max_bytes:
            raise too_big(info.st_size, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_file(path: Path, max_bytes: int, within: Path | None = None) -> None:
    """What read_bytes checks, without reading: for a file another reader opens later (the API
    inventories, read line by line on the query path), so that lint names a bad one."""
    os.close(_open_regular(Path(path), max_bytes, within))


def too_big(size: int, max_bytes: int, unit: str = "bytes") -> Refused:
    return Refused(
        f"the file has {size:,} {unit}; at most {max_bytes:,} are read",
        "split the file: one this large is not curated by hand (bounds: docs/records.md)",
    )


# Characters that must not reach a terminal or a log line as themselves: C0/C1 controls (an
# ESC sequence can clear or retitle the terminal, a newline splits one finding into two),
# line and paragraph separators, bidirectional overrides (they reorder what a reader sees),
# and the lone surrogates that stand for the bytes of a file name that is not UTF-8.
_SHOWN = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7f, 0xa0))}
_SHOWN.update({c: f"\\u{c:04x}" for c in (0x200e, 0x200f, 0x2028, 0x2029, *range(0x202a, 0x202f), *range(0x2066, 0x206a))})
_SHOWN.update({c: f"\\x{c - 0xdc00:02x}" for c in range(0xdc80, 0xdd00)})


def shown(text: object) -> str:
    """Text from an untrusted source (a file name, a log) made safe to print on one line:
    control, separator and bidi characters become \\xNN / \\uNNNN escapes, and the bytes of
    a name that is not UTF-8 (os.fsdecode's surrogates) their \\xNN; the rest is unchanged."""
    text = str(text)
    return text.translate(_SHOWN) if not (text.isprintable() and text.isascii()) else text


def files_under(top: Path) -> list[Path]:
    """Every non-folder entry under `top`, sorted, found with an explicit stack.

    Path.rglob and os.walk recurse once per folder level in Python 3.11: a pull request that
    commits folders 1,000 deep under data/ made every command a RecursionError. Folder symlinks
    are not descended (a file symlink is listed; the readers confine it); unreadable folders
    are skipped."""
    found: list[Path] = []
    stack = [str(top)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        descend = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if descend:
                        stack.append(entry.path)
                    else:
                        found.append(Path(entry.path))
        except OSError:
            continue
    return sorted(found)
