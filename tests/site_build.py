"""Build the site once per test run from a copy of this repository's data (shared helper).

Each build below is made at most once per run (tests/shared.py: one folder for every
pytest-xdist worker) and shared by every test that reads it: an HTML build is most of a site
test's time. Copies start with a warmed lint cache (.cache/kb, made once per run from an
unchanged copy): the cache only skips re-checking files whose text, path and checking code
are unchanged, so a file a test edits is checked again.

The copy keeps the tests from touching site/build/ of the checkout; callers may pass a
`mutate(root)` to change the copied data first (the escaping fixture does).
"""

from __future__ import annotations

import hashlib
import shutil
from functools import lru_cache
from pathlib import Path

import shared

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("data", "docs", "examples", "site/assets", "mkdocs.yml", "README.md")


def copy_project(dest: Path, warm: bool = True) -> Path:
    for rel in COPIED:
        src = ROOT / rel
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target)
        else:
            shutil.copy2(src, target)
    if warm:
        warm_lint_cache(dest)
    return dest


def warm_lint_cache(root: Path) -> Path:
    """Give root (a copy of this repository's data) the lint cache of an unchanged copy."""
    from kb.known import CACHE_DIR

    def make(folder: Path) -> None:
        from kb.lint import run

        run(copy_project(folder / "p", warm=False))

    cache = shared.once("lint-cache", make) / "p" / CACHE_DIR
    shutil.copytree(cache, root / CACHE_DIR, dirs_exist_ok=True)
    return root


def _build() -> Path:
    from kb.site.build import BUILD

    return BUILD


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
    """The real data's site, built once per run: site/build under a temporary copy."""
    return shared.once("site", lambda folder: build(copy_project(folder / "p"))) / "p" / _build()


@lru_cache(maxsize=1)
def repo_sources() -> tuple:
    """(catalog, every generated site file) of this repository's own data, made once."""
    from kb.site.build import sources

    catalog, _ = shared.repo_lint()
    return catalog, sources(catalog)


def copy_mini(dest: Path) -> Path:
    """A small project that `kb site` builds in seconds: tests/fixtures/mini's data (one record)
    with this repository's docs, assets and mkdocs.yml."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "mini", dest)
    for rel in COPIED:
        if rel != "data":
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if (ROOT / rel).is_dir() else shutil.copy2)(ROOT / rel, target)
    return dest


EVIL_SUMMARY = "<script>alert(1)</script> see [click me](https://evil.example/) and **bold**"
EVIL_TITLE_PREFIX = "<b>T</b> [x](y) "
HOSTILE_RECORD = "data/sources/tensorflow/tf.bias-add-backprop.yaml"


@lru_cache(maxsize=1)
def hostile_site(report: str) -> Path:
    """One HTML build for the escaping tests: a record whose title and summary hold markup, and
    a planted nightly report (`report`, JSON) whose text does too. The project is the small one
    (copy_mini), its record renamed to the real record the report names: how a page escapes
    text does not depend on how many records there are, and an HTML build of the whole data
    costs as much as the rest of a site test's work."""
    key = "hostile-site-" + hashlib.sha256(report.encode()).hexdigest()[:16]
    return shared.once(key, lambda folder: _hostile(folder / "p", report)) / "p" / _build()


def _hostile(root: Path, report: str) -> Path:
    import yaml

    from kb.cli import main
    from kb.nightly import report as nightly_report

    copy_mini(root)
    sample = root / "data" / "sources" / "tensorflow" / "tf.sample.yaml"
    record = root / HOSTILE_RECORD
    data = yaml.safe_load(sample.read_text())
    sample.unlink()
    data["id"] = record.stem
    data["summary"] = EVIL_SUMMARY
    data["title"] = EVIL_TITLE_PREFIX + data["title"]
    record.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["--root", str(root), "fix"]) == 0  # canonical form, so the build accepts it
    path = nightly_report.paths(nightly_report.default_dir(root))[0]
    path.parent.mkdir(parents=True)
    path.write_text(report)
    return build(root)
