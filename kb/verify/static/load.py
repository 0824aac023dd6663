"""Read static evidence files (data/runs/static-*/<release>.yaml) into plain release summaries.

A summary is what the lint checks and the index need from one release: the wheels read
(file, sha256) and, per signal (an alert call site or a raising Python check), where it was
seen. Malformed files are reported with the file and the field, never merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kb.verify.runfile import RUNS_DIR
from kb.verify.static.evidence import KIND

FRAMEWORK_OF_RECORD = {"pytorch": "pytorch", "tensorflow": "tensorflow", "jax": "jaxlib",
                       "nccl": "nccl", "cudnn": "cudnn", "cublas": "cublas"}
"""The evidence folder that speaks for a record's framework (JAX's XLA lives in jaxlib)."""


@dataclass
class Seen:
    """One signal in one release: the wheel file, its sha256, and the members holding it."""

    wheel: str
    sha256: str
    members: tuple[str, ...]
    kind: str  # "alert" (native call site or alert helper), "raise" (Python check that raises), "flag"


@dataclass
class Release:
    framework: str
    release: str
    file: str  # the evidence file, relative to the project root
    signals: dict[str, Seen] = field(default_factory=dict)
    flags: dict[str, Seen] = field(default_factory=dict)
    branches: dict[str, list[str]] = field(default_factory=dict)  # function -> the guard and cases of each branch
    wheels: tuple[tuple[str, str], ...] = ()


def problems(data: object) -> list[str]:
    if not isinstance(data, dict):
        return ["a static evidence file is a mapping with schema_version, kind, framework, release, wheels"]
    out = []
    if data.get("schema_version") != 1:
        out.append("schema_version: expected 1")
    for key in ("framework", "release"):
        if not isinstance(data.get(key), str):
            out.append(f"{key}: expected a string")
    wheels = data.get("wheels")
    if not isinstance(wheels, list) or not wheels:
        return out + ["wheels: expected a non-empty list"]
    for i, wheel in enumerate(wheels):
        if not isinstance(wheel, dict) or not isinstance(wheel.get("file"), str) or not isinstance(wheel.get("sha256"), str):
            out.append(f"wheels.{i}: needs file and sha256")
            continue
        if not isinstance(wheel.get("python_version", ""), str) or not isinstance(wheel.get("tag", ""), str):
            out.append(f"wheels.{i}: python_version and tag, where present, are strings")
        for part in ("alerts", "python", "flags"):
            items = wheel.get(part, [])
            if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
                out.append(f"wheels.{i}.{part}: expected a list of mappings")
    return out


def summarize(data: dict, rel: str) -> Release:
    out = Release(data["framework"], data["release"], rel)
    wheels = []
    for wheel in data["wheels"]:
        name, digest = wheel["file"], wheel["sha256"]
        wheels.append((name, digest))
        for alert in wheel.get("alerts", []):
            if isinstance(alert.get("name"), str):
                out.signals.setdefault(alert["name"], Seen(name, digest, tuple(alert.get("members", ())), "alert"))
        for check in wheel.get("python", []):
            if check.get("effect") == "raise" and isinstance(check.get("function"), str):
                out.signals.setdefault(check["function"], Seen(name, digest, (str(check.get("member")),), "raise"))
            elif check.get("effect") == "branch" and isinstance(check.get("function"), str):
                context = f"guard: {check.get('guard', '')}; cases: {check.get('cases', '')}"
                out.branches.setdefault(check["function"], []).append(context)
        for flag in wheel.get("flags", []):
            if isinstance(flag.get("name"), str):
                out.flags.setdefault(flag["name"], Seen(name, digest, tuple(flag.get("members", ())), "flag"))
    out.wheels = tuple(wheels)
    return out


def bypassed(release: Release, bypass: str) -> bool:
    """Whether the release has the Python branch a record's bypass names.

    A bypass is a function (`torch.nn.functional.pad`), optionally followed by ` if ` and text
    that the branch's context "guard: <enclosing tests>; cases: <inner tests>" must contain
    (`torch.nn.functional.interpolate if mode == 'bilinear'`; `torch.nn.functional.pad if
    cases: mode == 'replicate'` for a branch that handles every replicate pad, not only 2-D).
    """
    function, _, condition = bypass.partition(" if ")
    contexts = release.branches.get(function.strip())
    if not contexts:
        return False
    return not condition or any(condition.strip() in c for c in contexts)


def is_static(data: object) -> bool:
    return isinstance(data, dict) and data.get("kind") == KIND


def load(root: Path) -> tuple[list[Release], list[tuple[Path, str]]]:
    """(releases, problems as (file, message)) of every static evidence file.

    The summaries are a pure function of the files' bytes and this module: they are remembered
    under .cache/kb/ by both (kb/memo.py), so an unchanged tree reads ~230 files' bytes and one
    remembered value instead of parsing and summarizing each file on every command."""
    from kb import untrusted
    from kb.memo import MISS, Memo
    from kb.yamlio import MAX_BYTES

    paths = sorted((root / RUNS_DIR).glob("static-*/*.yaml"))
    memo = Memo(root, "static", Path(__file__))
    try:
        key = memo.key(*(part for path in paths for part in (path.relative_to(root).as_posix(),
                                                                untrusted.read_bytes(path, MAX_BYTES, root / "data"))))
    except (untrusted.Refused, OSError):  # read (and reported) one by one below
        return _load(root, paths)
    found = memo.get(key)
    if found is not MISS:
        return [_release(r) for r in found[0]], [(root / p, m) for p, m in found[1]]
    releases, bad = _load(root, paths)
    memo.put(key, ([_plain(r) for r in releases], [(p.relative_to(root).as_posix(), m) for p, m in bad]))
    memo.save()
    return releases, bad


def _plain(release: Release) -> tuple:
    def seen(s: Seen) -> tuple:
        return (s.wheel, s.sha256, s.members, s.kind)

    return (release.framework, release.release, release.file, {k: seen(v) for k, v in release.signals.items()},
            {k: seen(v) for k, v in release.flags.items()}, release.branches, release.wheels)


def _release(plain: tuple) -> Release:
    framework, name, file, signals, flags, branches, wheels = plain
    return Release(framework, name, file, {k: Seen(*v) for k, v in signals.items()},
                   {k: Seen(*v) for k, v in flags.items()}, branches, wheels)


def _load(root: Path, paths: list[Path]) -> tuple[list[Release], list[tuple[Path, str]]]:
    from kb.findings import rel
    from kb.yamlio import YamlError, read

    releases: list[Release] = []
    bad: list[tuple[Path, str]] = []
    for path in paths:
        try:
            data = read(path).data
        except (YamlError, OSError) as exc:
            bad.append((path, f"cannot read static evidence: {getattr(exc, 'message', exc)}"))
            continue
        found = problems(data) if is_static(data) else ["kind: expected 'static' in a data/runs/static-* folder"]
        if found:
            bad.extend((path, p) for p in found)
            continue
        releases.append(summarize(data, rel(path, root)))
    return releases, bad
