"""Bounds on caller input to `kb.status()` and the CLI: one place, standard library only.

Why: `kb.status()` is a public API that services call with request data. Every name and
version it takes is checked here before any cache, index or file is touched, so a hostile
argument costs microseconds and its echo in an error message stays short (docs/security.md).
"""

MAX_NAME = 256
"""Characters in an op name, record id, framework or distribution: the longest public name
in the API inventories is 160 characters (a generated protobuf class in TensorFlow)."""

MAX_VERSION = 64
"""Characters in a version string: PEP 440 versions in the registries are under 20."""

MAX_INVENTORY = 64 * 1024 * 1024
"""Bytes of one API inventory (data/api/<framework>.txt.gz) the query reads, both of the gzip
file and of its names once decompressed (kb/apinames.py): PyTorch's, the largest, is ~0.8 MB
compressed and ~9 MB of names. `kb validate` refuses a larger one (KB012) with the same bound."""

MAX_ECHO = 80
"""Characters of a refused argument repeated back in an error message."""


def echo(value: str) -> str:
    """`value` for an error message: repr'd and cut, so a 10 MB argument prints 80 characters."""
    text = repr(value[:MAX_ECHO])
    return text + f" (+{len(value) - MAX_ECHO:,} characters)" if len(value) > MAX_ECHO else text


def check_text(what: str, value: object, limit: int, *, example: str, optional: bool = False) -> None:
    """Raise ValueError unless `value` is a non-empty str of at most `limit` printable ASCII characters.

    Non-ASCII is refused because every public name, id and PEP 440 version is ASCII: a
    full-width or Arabic-Indic digit (str.isdigit() is True for both) would otherwise pass as a
    version number, and a control character in a name would reach a terminal.
    """
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string such as {example!r}, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} must be a non-empty string such as {example!r}")
    if len(value) > limit:
        raise ValueError(f"{what} {echo(value)} is too long: at most {limit} characters")
    if not (value.isascii() and value.isprintable()):
        raise ValueError(f"{what} {echo(value)} has a character outside printable ASCII; expected e.g. {example!r}")
