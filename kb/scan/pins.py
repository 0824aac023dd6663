"""Which framework versions a scan answers for, and where each came from.

In order: `--versions torch=2.11,tensorflow=2.20`; else `--lockfile` (requirements.txt,
pyproject.toml, uv.lock, poetry.lock: exact pins only); else the installed distributions,
read with importlib.metadata (the frameworks are never imported); else the newest release
the KB knows, said as an assumption.
"""

from __future__ import annotations

import os
import tomllib
from importlib import metadata
from typing import NamedTuple

# KB framework -> the distributions that install it (first found wins).
DISTRIBUTIONS = {
    "pytorch": ("torch",),
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tensorflow-macos"),
    "jax": ("jax",),
    "horovod": ("horovod",),
}
NAMES = {"torch": "pytorch", "pytorch": "pytorch", "tensorflow": "tensorflow", "tf": "tensorflow", "jax": "jax",
         "horovod": "horovod"}
for _fw, _dists in DISTRIBUTIONS.items():
    NAMES.update({d: _fw for d in _dists})


class PinError(ValueError):
    """Bad --versions text or an unreadable lockfile; the message names the file/line and what was expected."""


class Pin(NamedTuple):
    framework: str
    version: str
    origin: str  # "--versions", "requirements.txt line 3", "installed (torch)", "assumed: newest known"


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def parse_versions(text: str) -> dict[str, Pin]:
    pins: dict[str, Pin] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, version = item.partition("=")
        framework = NAMES.get(_norm(name))
        if not sep or not version.strip():
            raise PinError(f"--versions: expected NAME=VERSION (e.g. torch=2.11), not {item!r}")
        if framework is None:
            raise PinError(f"--versions: unknown framework {name.strip()!r}; expected one of {', '.join(sorted(NAMES))}")
        pins[framework] = Pin(framework, version.strip().lstrip("="), "--versions")
    return pins


def installed() -> dict[str, Pin]:
    pins: dict[str, Pin] = {}
    for framework, dists in DISTRIBUTIONS.items():
        for dist in dists:
            try:
                full = metadata.version(dist)
                pins[framework] = Pin(framework, full, f"installed here: {dist} {full}")
                break
            except metadata.PackageNotFoundError:
                continue
    return pins


def from_lockfile(path: str) -> dict[str, Pin]:
    """Exact pins of the frameworks in a lockfile; ranges are not pins and are left out."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(20_000_000)
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        raise PinError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PinError(f"{path}: not UTF-8 (byte {exc.start})") from None
    if name.endswith((".txt", ".in")):
        return _requirements(path, text)
    if name.endswith(".toml") or name.endswith(".lock"):
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PinError(f"{path}: not valid TOML: {exc}") from None
        if name.endswith(".lock"):
            return _lock_packages(path, doc)
        return _pyproject(path, doc)
    raise PinError(f"{path}: unknown lockfile kind; expected requirements*.txt, pyproject.toml, uv.lock or poetry.lock")


def _exact(spec: str) -> str | None:
    from packaging.specifiers import SpecifierSet, InvalidSpecifier

    try:
        specs = list(SpecifierSet(spec))
    except InvalidSpecifier:
        return None
    exact = [s.version for s in specs if s.operator in ("==", "===") and "*" not in s.version]
    return exact[0] if exact else None


def _requirement(text: str) -> tuple[str, str | None] | None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    return req.name, _exact(str(req.specifier))


def _requirements(path: str, text: str) -> dict[str, Pin]:
    pins: dict[str, Pin] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-", "--")):
            continue
        parsed = _requirement(line)
        if parsed is None:
            raise PinError(f"{path}:{number}: not a requirement line: {line!r}")
        framework = NAMES.get(_norm(parsed[0]))
        if framework and parsed[1] and framework not in pins:
            pins[framework] = Pin(framework, parsed[1], f"{os.path.basename(path)} line {number}")
    return pins


def _pyproject(path: str, doc: dict) -> dict[str, Pin]:
    pins: dict[str, Pin] = {}
    base = os.path.basename(path)
    project = doc.get("project", {}) if isinstance(doc.get("project"), dict) else {}
    lists = [("project.dependencies", project.get("dependencies", []))]
    for group, deps in (project.get("optional-dependencies") or {}).items():
        lists.append((f"project.optional-dependencies.{group}", deps))
    for group, deps in (doc.get("dependency-groups") or {}).items():
        lists.append((f"dependency-groups.{group}", deps))
    for where, deps in lists:
        if not isinstance(deps, list):
            raise PinError(f"{path}: {where} should be a list of requirement strings")
        for dep in deps:
            parsed = _requirement(dep) if isinstance(dep, str) else None
            if parsed is None:
                continue  # an include-group table or a malformed entry: not a pin
            framework = NAMES.get(_norm(parsed[0]))
            if framework and parsed[1] and framework not in pins:
                pins[framework] = Pin(framework, parsed[1], f"{base} ({where})")
    poetry = ((doc.get("tool") or {}).get("poetry") or {}).get("dependencies") or {}
    for dist, spec in poetry.items():
        framework = NAMES.get(_norm(dist))
        if isinstance(spec, dict):
            spec = spec.get("version")
        if framework and isinstance(spec, str) and framework not in pins:
            spec = spec.strip()
            version = spec if spec[:1].isdigit() else _exact(spec)  # poetry: a bare version is exact
            if version:
                pins[framework] = Pin(framework, version, f"{base} (tool.poetry.dependencies)")
    return pins


def _lock_packages(path: str, doc: dict) -> dict[str, Pin]:
    packages = doc.get("package", [])
    if not isinstance(packages, list):
        raise PinError(f"{path}: expected [[package]] tables with name and version")
    pins: dict[str, Pin] = {}
    for package in packages:
        if not isinstance(package, dict):
            continue
        framework = NAMES.get(_norm(str(package.get("name", ""))))
        version = package.get("version")
        if framework and isinstance(version, str) and framework not in pins:
            pins[framework] = Pin(framework, version, f"{os.path.basename(path)} ({package['name']})")
    return pins


def choose(frameworks: set[str], given: dict[str, Pin], lock: dict[str, Pin] | None, registries: dict) -> dict[str, Pin]:
    """A pin for every framework the code uses: given, else lockfile, else installed, else newest known."""
    found = installed() if frameworks - set(given) - set(lock or {}) else {}
    out: dict[str, Pin] = {}
    for framework in sorted(frameworks):
        pin = given.get(framework) or (lock or {}).get(framework) or found.get(framework)
        if pin is None:
            latest = (registries.get(framework) or {}).get("latest")
            if latest is None:
                continue
            pin = Pin(framework, latest, "assumed: the newest release the KB knows (none installed or pinned)")
        out[framework] = pin
    return out
