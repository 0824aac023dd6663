"""KB005: every version a range or reference names is a real release of that framework."""

from __future__ import annotations

from pathlib import Path

from kb import schema
from kb.catalog import LINKS_FILE, Catalog
from kb.lint.ranges import range_lists
from kb.versions import release_key

CODE = "KB005"
TITLE = "registry: versions named in ranges exist in data/versions/ (a minor like '2.1' means its series)"

REPO_FRAMEWORK = {"tensorflow/tensorflow": "tensorflow", "pytorch/pytorch": "pytorch", "google/jax": "jax", "jax-ml/jax": "jax", "horovod/horovod": "horovod"}


def _known(registry: schema.VersionRegistry) -> set[tuple]:
    """Keys of every release and every release-series prefix ('2.1' for 2.1.4)."""
    keys: set[tuple] = set()
    for release in registry.releases:
        key = release_key(release.version)
        for end in range(2, len(key) + 1):
            keys.add(key[:end])
    return keys


def _clause_versions(spec: str) -> list[str]:
    """The versions a specifier set names; malformed sets name none (KB004 reports them)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        clauses = list(SpecifierSet(spec))
    except InvalidSpecifier:
        return []
    return [c.version.removesuffix(".*") for c in clauses]


def check(catalog: Catalog) -> None:
    known = {name: _known(reg) for name, reg in catalog.registries.items()}
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        for loc, ranges in range_lists(record):
            name = loc[1] + "-" + record.framework if loc[0] == "distributions" else record.framework
            for index, item in enumerate(ranges):
                _check_versions(catalog, path, doc.line_of(loc + (index, "versions")), name, known, _clause_versions(item.versions))
        for index, ref in enumerate(record.references):
            if isinstance(ref, schema.ReleaseNotesRef):
                _check_versions(catalog, path, doc.line_of(("references", index, "version")), ref.framework, known, [ref.version])
    links_path = catalog.root / LINKS_FILE
    for index, link in enumerate(catalog.links):
        framework = REPO_FRAMEWORK.get(link.repo)
        if link.version and framework:
            line = catalog.documents[links_path].line_of((index, "version")) if links_path in catalog.documents else 1
            _check_versions(catalog, links_path, line, framework, known, [link.version])


def _check_versions(catalog: Catalog, path: Path, line: int, name: str, known: dict[str, set], versions: list[str]) -> None:
    if name in catalog.broken_registries:
        return  # its own KB001/KB002 findings say what to fix first
    if name not in known:
        catalog.report(path, line, CODE, f"no version registry for {name!r}", f"add data/versions/{name}.yaml listing its releases")
        return
    for version in versions:
        try:
            key = release_key(version)
        except ValueError:
            continue  # KB004 reports malformed ranges
        if key not in known[name] and key != (0, 0):
            catalog.report(path, line, CODE, f"{name} {version} is not a known release", f"use a version listed in data/versions/{name}.yaml")
