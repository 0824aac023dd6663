"""Remove a chain of nested `a` folders (the deep-tree tests) without recursion.

shutil.rmtree, and pytest's cleanup of old temporary folders shared by every run on this
machine, recurse once per level: a 1,500-level tree left behind breaks the next run.
"""

from __future__ import annotations

import os
from pathlib import Path


def remove_chain(top: Path) -> None:
    """Remove every `a/a/.../a` folder below `top` and the files in them; `top` itself stays."""
    if not top.exists():
        return
    here = os.getcwd()
    try:
        os.chdir(top)
        depth = 0
        while os.path.isdir("a"):
            os.chdir("a")
            depth += 1
        for _ in range(depth):
            for name in os.listdir("."):
                if not os.path.isdir(name):
                    os.remove(name)
            os.chdir("..")
            os.rmdir("a")
    finally:
        os.chdir(here)
