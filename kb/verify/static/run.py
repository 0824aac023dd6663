"""The static pass: for each release not read yet, fetch its wheel(s), read them, write evidence.

Resumable by construction: a release whose evidence file exists is skipped, and each file
is written atomically once its wheels are read, so an interrupted pass loses at most the
release in hand. Releases are read newest-of-each-series first, so a pass cut short still
covers every minor series before it fills in patch releases.
"""

from __future__ import annotations

import hashlib
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kb.verify.static import evidence
from kb.verify.static.fetch import NotServed, download
from kb.verify.static.wheels import TARGETS, Target
from kb.versions import release_key


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_served: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def reader_code() -> str:
    """A hash of the reading code, so evidence says which reader produced it."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def releases(root: Path, target: Target) -> list[str]:
    """The registry's releases from target.first on, newest of each minor series first."""
    from kb.yamlio import read

    data = read(root / "data" / "versions" / f"{target.registry}.yaml").data
    first = release_key(target.first)
    versions = [r["version"] for r in data.get("releases", []) if release_key(str(r["version"])) >= first]
    versions.sort(key=release_key, reverse=True)
    heads: dict[tuple, str] = {}
    for version in versions:
        heads.setdefault((release_key(version) + (0, 0))[:3], version)  # (epoch, major, minor)
    head_set = set(heads.values())
    return [v for v in versions if v in head_set] + [v for v in versions if v not in head_set]


def _read_wheel(package: str, version: str, target_read: Callable, scratch: Path | None, pythons: tuple[str, ...]) -> dict:
    started = time.monotonic()
    with download(package, version, scratch, pythons=pythons) as wheel:
        fetched = time.monotonic()
        with zipfile.ZipFile(wheel.path) as archive:
            findings = target_read(archive)
        about = {
            "package": package,
            "file": wheel.path.name,
            "sha256": wheel.sha256,
            "size": wheel.size,
            "python_version": wheel.python,  # the CPython pip was asked for when the index served this wheel
            "tag": wheel.tag,
            "pass": {"download_s": round(fetched - started, 1), "read_s": round(time.monotonic() - fetched, 1)},
        }
        clash = sorted(set(about) & set(findings))
        if clash:
            raise ValueError(f"a reader's findings reuse the wheel's own keys: {', '.join(clash)}")
        return {**about, **findings}


def read_release(root: Path, target: Target, version: str, scratch: Path | None = None) -> Path:
    """Read one release's wheels and write its evidence; NotServed when the index has none.

    The first package served for the release, with the first of the target's Pythons that
    the index serves it for; its extra wheels are asked for with that same Python.
    """
    wheels = []
    for package in target.packages:
        try:
            wheels.append(_read_wheel(package, version, target.read, scratch, target.pythons))
            break
        except NotServed:
            continue
    if not wheels:
        raise NotServed(f"{'/'.join(target.packages)} {version}")
    same = (wheels[0]["python_version"],) if wheels[0]["python_version"] else target.pythons
    for package in target.extra:
        try:
            wheels.append(_read_wheel(package, version, target.read, scratch, same))
        except NotServed:
            continue
    return evidence.write(root, evidence.document(target.framework, version, wheels, reader_code()))


def run(root: Path, frameworks: list[str], only: list[str] | None = None, limit: int | None = None,
        scratch: Path | None = None, progress: bool = True) -> Outcome:
    outcome = Outcome()
    plan = [(TARGETS[f], v) for f in frameworks for v in releases(root, TARGETS[f]) if not only or v in only]
    todo = [(t, v) for t, v in plan if not evidence.path_of(root, t.framework, v).exists()]
    outcome.skipped = [f"{t.framework} {v}" for t, v in plan if (t, v) not in todo]
    if limit is not None:
        todo = todo[:limit]
    bar = _bar(progress, len(todo))
    for target, version in todo:
        label = f"{target.framework} {version}"
        bar.describe(label)
        if evidence.path_of(root, target.framework, version).exists():  # another pass read it meanwhile
            outcome.skipped.append(label)
            bar.advance()
            continue
        try:
            read_release(root, target, version, scratch)
            outcome.written.append(label)
        except NotServed:
            outcome.not_served.append(label)
        except (OSError, zipfile.BadZipFile, ValueError) as exc:
            outcome.failed.append(f"{label}: {exc}")
        bar.advance()
    bar.close()
    return outcome


class _bar:
    """A rich progress bar on a terminal, plain lines otherwise (logs of a background pass)."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.rich = None
        self.total, self.done = total, 0
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.rich = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            self.rich.start()
            self.task = self.rich.add_task("static", total=total)

    def describe(self, label: str) -> None:
        if self.rich:
            self.rich.update(self.task, description=label)
        else:
            print(f"[{self.done + 1}/{self.total}] {label}", flush=True)

    def advance(self) -> None:
        self.done += 1
        if self.rich:
            self.rich.advance(self.task)

    def close(self) -> None:
        if self.rich:
            self.rich.stop()
