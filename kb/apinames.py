"""The API inventories (data/api/<framework>.txt.gz): one reader and one writer, standard library only.

Each inventory is a framework's public names, one a line after a '#' header line, stored
gzip-compressed (PyTorch's 9 MB of names are ~1 MB so): written by scripts/introspect_api.py
with `encode` (no file name, mtime 0, level 9: the same names give the same bytes), read by
the query on a miss, by lint, `kb build` and `kb site` with `read`. What the reader refuses
it refuses with a ValueError saying why (callers name the file): a file that is not a
regular one or over MAX_INVENTORY bytes, a corrupt or truncated gzip stream, over
MAX_INVENTORY bytes once decompressed (a small file can inflate to gigabytes), not UTF-8.
It runs on the query path, so it imports only what start-up has loaded, and zlib.
"""

SUFFIX = ".txt.gz"
"""An inventory's file name is <framework> + SUFFIX (the signatures beside it stay plain text)."""

LEVEL = 9
"""zlib compression level of `encode`: fixed, so regenerating unchanged names changes no byte."""


def path_of(folder: str, framework: str) -> str:
    """The inventory file of `framework` in `folder` (a name the caller has already checked)."""
    import os.path

    return os.path.join(folder, framework + SUFFIX)


def encode(text: str) -> bytes:
    """The gzip bytes of an inventory's text: deterministic (no name, mtime 0, fixed level)."""
    import gzip

    return gzip.compress(text.encode("utf-8"), compresslevel=LEVEL, mtime=0)


def read(path: str, within: str | None = None) -> frozenset[str]:
    """The names of one inventory file; ValueError saying why it cannot be read.

    `within`: the folder the file must stay in (a symlink out of it is refused). The file is
    opened non-blocking (a FIFO cannot hang it), its type and size taken from the open
    descriptor, and at most MAX_INVENTORY bytes are read and decompressed.
    """
    import os
    import stat

    from kb.bounds import MAX_INVENTORY

    if within is not None and not os.path.realpath(path).startswith(os.path.join(os.path.realpath(within), "")):
        raise ValueError(f"it is a link that leads out of {os.path.basename(within)}/")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file (a device, FIFO or folder)")
        if info.st_size > MAX_INVENTORY:
            raise ValueError(f"it has {info.st_size:,} bytes; at most {MAX_INVENTORY:,} are read")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_INVENTORY + 1)  # at most this, even if the file grows meanwhile
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if len(raw) > MAX_INVENTORY:
        raise ValueError(f"it has over {MAX_INVENTORY:,} bytes")
    return decode(raw)


def decode(raw: bytes) -> frozenset[str]:
    """The names in an inventory's gzip bytes; ValueError saying why they cannot be read."""
    import zlib

    from kb.bounds import MAX_INVENTORY

    if raw[:2] != b"\x1f\x8b":
        raise ValueError("not gzip data (an inventory is <framework>.txt.gz, written by scripts/introspect_api.py)")
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip header and trailer; the CRC is checked
    try:
        data = inflate.decompress(raw, MAX_INVENTORY + 1)
    except zlib.error as exc:
        raise ValueError(f"corrupt gzip data ({exc})") from None
    if len(data) > MAX_INVENTORY:
        raise ValueError(f"over {MAX_INVENTORY:,} bytes once decompressed; at most {MAX_INVENTORY:,} are read")
    if not inflate.eof:
        raise ValueError("truncated gzip data (the stream ends early)")
    if inflate.unused_data:
        raise ValueError(f"{len(inflate.unused_data):,} bytes after the gzip stream")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text once decompressed (byte {exc.start:,})") from None
    return frozenset(line for line in text.split("\n") if line and not line.startswith("#"))
