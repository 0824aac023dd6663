"""The canonical text of each kind of data file (what `kb fix` writes, KB009 compares)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from packaging.version import Version
from pydantic import BaseModel

from kb import schema

from kb.yamlio import dump

SCHEMA_DIR = "schema"
_KIND_ORDER = {"issue": 0, "pr": 1, "commit": 2}


def header(path: Path, root: Path, schema_name: str) -> str:
    """The yaml-language-server line that lets editors validate the file against schema/."""
    target = os.path.relpath(root / SCHEMA_DIR / schema_name, path.parent)
    return f"# yaml-language-server: $schema={Path(target).as_posix()}"


def plain(model: BaseModel) -> Any:
    """Model -> plain data, minus defaults, with YAML field names (`pass`, not `pass_`)."""
    return model.model_dump(by_alias=True, exclude_defaults=True, mode="python")


def link_sort_key(link: schema.Link) -> tuple:
    return (link.repo.lower(), _KIND_ORDER[link.kind], link.number or 0, link.sha or "")


def source_text(record: schema.SourceRecord, path: Path, root: Path) -> str:
    return dump(plain(record), header(path, root, "source.schema.json"))


def links_text(links: list[schema.Link], path: Path, root: Path) -> str:
    ordered = sorted(links, key=link_sort_key)
    return dump([plain(link) for link in ordered], header(path, root, "links.schema.json"))


def solutions_text(solutions: list[schema.Solution], path: Path, root: Path) -> str:
    return dump([plain(s) for s in solutions], header(path, root, "solutions.schema.json"))


def registry_text(registry: schema.VersionRegistry, path: Path, root: Path) -> str:
    data = plain(registry)
    data["releases"] = sorted(data["releases"], key=lambda r: Version(r["version"]))
    return dump(data, header(path, root, "versions.schema.json"))
