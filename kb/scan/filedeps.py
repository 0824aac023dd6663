"""What the reading of one file learnt from other files: the module file each import it followed was found at,
and the text of each file it read (kb/scan/prepare.py's look-ups record them here while watched).

A reading kept between scans (kb/scan/filecache.py) is a function of the file's own text and of these answers
only, so it is used again only when every one of them still holds (prepare.still_holds): an edited, added or
removed module of the code base makes the files that looked into it be read afresh.
"""

from __future__ import annotations

_SEEN: list[tuple] | None = None


def watch() -> None:
    """Start recording the look-ups of the file about to be read."""
    global _SEEN
    _SEEN = []


def unwatch() -> tuple:
    """Stop recording; the look-ups made since watch(), each once, in the order first made."""
    global _SEEN
    seen, _SEEN = _SEEN or [], None
    return tuple(dict.fromkeys(seen))


def saw(*item: object) -> None:
    if _SEEN is not None:
        _SEEN.append(item)
