"""Which project folder a command works on, found once here so that every command module
(kb/cli.py and each area's cli.py) depends on it downward instead of on each other."""

from __future__ import annotations

import argparse
from pathlib import Path


def find_root(explicit: str | None = None) -> Path:
    """`explicit` (--root), else the nearest folder holding data/ from the current one up (as
    git finds .git), so `kb validate` works from inside data/sources/tensorflow/ too."""
    if explicit is not None:
        return Path(explicit).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "data").is_dir():
            return folder
    return here


def root_of(args: argparse.Namespace) -> Path:
    """The root a parsed command line names (its --root option, else found from the cwd)."""
    return find_root(args.root)
