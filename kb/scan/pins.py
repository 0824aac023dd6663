"""Which framework versions a scan answers for, and where each came from.

In order: `--versions torch=2.11,tensorflow=2.20`; else `--lockfile` (requirements.txt,
pyproject.toml, uv.lock, poetry.lock: exact pins only); else the installed distributions,
read with importlib.metadata (the frameworks are never imported); else the newest release
the KB knows, said as an assumption.
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

from kb import untrusted

# KB framework -> the distributions that install it (first found wins).
DISTRIBUTIONS = {
    "pytorch": ("torch",),
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tensorflow-macos"),
    "jax": ("jax",),
    "horovod": ("horovod",),
    "torchvision": ("torchvision",),
}
NAMES = {"torch": "pytorch", "pytorch": "pytorch", "tensorflow": "tensorflow", "tf": "tensorflow", "jax": "jax",
         "horovod": "horovod", "torchvision": "torchvision"}
for _fw, _dists in DISTRIBUTIONS.items():
    NAMES.update({d: _fw for d in _dists})


class PinError(ValueError):
    """Bad --versions text or an unreadable lockfile; the message names the file/line and what was expected."""


class Pin(NamedTuple):
    framework: str
    version: str
    origin: str  # "--versions", "requirements.txt line 3", "installed (torch)", "assumed: newest known"


MAX_LOCK_BYTES = 20_000_000  # a uv.lock of a large monorepo is a few MB
MAX_LOCK_DEPTH = 64  # lockfiles nest tables ~4 deep; tomllib recurses once per level
_OPEN_CLOSE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]')


def _shown(path: str) -> str:
    return untrusted.shown(path)


def _check_depth(path: str, text: str) -> None:
    """Refuse TOML nested deeper than MAX_LOCK_DEPTH before tomllib sees it (it recurses per
    level: 50,000 '[' is a RecursionError). Counts inline brackets and the dotted parts of a
    table header; strings and comments are skipped. Linear, no recursion."""
    depth = 0
    line = 1
    last = 0
    for match in _OPEN_CLOSE.finditer(text):
        token = match.group()
        if token[0] in "\"'#":
            continue
        if token in "[{":
            depth += 1
            if depth > MAX_LOCK_DEPTH:
                line += text.count("\n", last, match.start())
                raise PinError(f"{_shown(path)}:{line}: nested deeper than {MAX_LOCK_DEPTH} levels; "
                               "a lockfile is not this deep (is it the right file?)")
        else:
            depth = max(0, depth - 1)
    for number, header in enumerate(text.splitlines(), start=1):
        stripped = header.lstrip()
        if stripped.startswith("[") and stripped.count(".") > MAX_LOCK_DEPTH:
            raise PinError(f"{_shown(path)}:{number}: a table header nested deeper than {MAX_LOCK_DEPTH} levels; "
                           "a lockfile is not this deep (is it the right file?)")


def _version(path: str, where: str, package: str, version: str) -> str:
    """A pinned version that is a version (PEP 440), or PinError naming file and package."""
    from packaging.version import InvalidVersion, Version

    try:
        Version(version)
    except InvalidVersion:
        raise PinError(f"{_shown(path)}{where}: {package} is pinned to {untrusted.shown(version)[:80]!r}, "
                       "which is not a version (PEP 440, e.g. 2.5.1)") from None
    return version


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
        version = version.strip().lstrip("=")
        if framework in pins and pins[framework].version != version:  # never pick one of two silently
            raise PinError(f"--versions gives {framework} twice: {pins[framework].version} and {version}; give one")
        pins[framework] = Pin(framework, version, "--versions")
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
    try:  # a regular file only, opened non-blocking (a FIFO named uv.lock cannot hang the scan)
        raw = untrusted.read_bytes(Path(path), MAX_LOCK_BYTES, Path(os.sep))
        text = raw.decode("utf-8-sig")
    except untrusted.Refused as exc:
        raise PinError(f"{_shown(path)}: {exc.message}") from None
    except OSError as exc:
        raise PinError(f"{_shown(path)}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PinError(f"{_shown(path)}: not UTF-8 (byte {exc.start})") from None
    if name.endswith((".txt", ".in")):
        return _requirements(path, text)
    if name.endswith(".toml") or name.endswith(".lock"):
        _check_depth(path, text)
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PinError(f"{_shown(path)}: not valid TOML: {exc}") from None
        except (RecursionError, MemoryError, ValueError) as exc:  # a bound of tomllib or of int()
            raise PinError(f"{_shown(path)}: cannot read as TOML ({type(exc).__name__}); nested too deep or a value too large") from None
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
            raise PinError(f"{_shown(path)}:{number}: not a requirement line: {untrusted.shown(line)[:200]!r}")
        framework = NAMES.get(_norm(parsed[0]))
        if framework and parsed[1] and framework not in pins:
            pins[framework] = Pin(framework, _version(path, f":{number}", parsed[0], parsed[1]),
                                  f"{os.path.basename(path)} line {number}")
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
                pins[framework] = Pin(framework, _version(path, f" ({where})", parsed[0], parsed[1]), f"{base} ({where})")
    poetry = ((doc.get("tool") or {}).get("poetry") or {}).get("dependencies") or {}
    for dist, spec in poetry.items():
        framework = NAMES.get(_norm(dist))
        if isinstance(spec, dict):
            spec = spec.get("version")
        if framework and isinstance(spec, str) and framework not in pins:
            spec = spec.strip()
            version = spec if spec[:1].isdigit() else _exact(spec)  # poetry: a bare version is exact
            if version:
                version = _version(path, " (tool.poetry.dependencies)", dist, version)
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
            version = _version(path, " [[package]]", str(package["name"]), version)
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
        out[framework] = _said_if_unknown(pin, registries.get(framework))
    return out


def _said_if_unknown(pin: Pin, registry: dict | None) -> Pin:
    """The pin, its origin saying so when the version is no release the KB knows (a typo such
    as torch=99 would otherwise be answered as if it were a real version)."""
    if not registry or not registry.get("keys"):
        return pin
    from kb.query import known_release

    try:
        if known_release(registry, pin.version):
            return pin
    except ValueError:
        return pin
    return pin._replace(origin=f"{pin.origin}; {untrusted.shown(pin.version)[:64]} is not a known release "
                               f"of {pin.framework}, latest known: {registry.get('latest')}")
