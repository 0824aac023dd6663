"""Build the site once per test session from a copy of this repository's data (shared helper).

The copy keeps the tests from touching site/build/ of the checkout; callers may pass a
`mutate(root)` to change the copied data first (the escaping fixture does).
"""

from __future__ import annotations

import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("data", "docs", "examples", "site/assets", "mkdocs.yml", "README.md")


def copy_project(dest: Path) -> Path:
    for rel in COPIED:
        src = ROOT / rel
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target)
        else:
            shutil.copy2(src, target)
    return dest


def build(root: Path, html: bool = True) -> Path:
    """Generate sources (and HTML); returns site/build under root. Fails the test on error."""
    from kb.lint import errors, run
    from kb.site.build import BUILD, mkdocs, write_sources

    catalog, findings = run(root)
    findings = errors(findings)  # KB015 warnings (runs for review) do not block a build
    assert not findings, [f.render() for f in findings]
    build_dir = root / BUILD
    write_sources(catalog, build_dir)
    if html:
        result = mkdocs(build_dir)
        assert result.returncode == 0, result.stdout + result.stderr
    return build_dir


@lru_cache(maxsize=1)
def built_site() -> Path:
    """The real data's site, built once: site/build under a temporary copy."""
    tmp = Path(tempfile.mkdtemp(prefix="kb-site-"))
    return build(copy_project(tmp / "p"))
