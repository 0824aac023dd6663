"""Load every data file, validate it against kb/schema.py, and keep what passed.

To add a record (one mechanism that makes results differ run to run):
1. Write data/sources/<framework>/<id>.yaml, starting from a record of the same framework
   (docs/records.md lists the fields): `id` equal to the file name, the `ops` a lookup
   matches, `status` ranges with their `solutions`, and `references`; each issue or PR it
   cites is also an entry of data/links.yaml.
2. Run `python -m kb fix` (canonical form) and `python -m kb validate --strict`, and fix what
   it names (file, line, how).
3. Run `python -m kb build` and commit the record with the files it rewrote; `python -m kb
   status <op> <version>` answers from it.

Errors are collected, never raised: lint reports all problems of a run together, and the
index compiler refuses to build while any remain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from kb import schema
from kb.bounds import MAX_INVENTORY
from kb.findings import Finding, rel
from kb.yamlio import Document, YamlError, read

if TYPE_CHECKING:
    from kb.verify.runfile import RunFile
    from kb.verify.static.load import Release
    from kb.verify.sweepfile import SweepFile

SOURCES_DIR = "data/sources"
VERSIONS_DIR = "data/versions"
API_DIR = "data/api"
API_MAX_BYTES = MAX_INVENTORY  # the largest inventory, PyTorch's, is ~9 MB of names (~0.8 MB gzip)
SOLUTIONS_FILE = "data/solutions.yaml"
LINKS_FILE = "data/links.yaml"
BASIS_DIR = "data/basis"
GUARANTEES_FILE = "data/basis/guarantees.yaml"


@dataclass
class Catalog:
    root: Path
    findings: list[Finding] = field(default_factory=list)
    documents: dict[Path, Document] = field(default_factory=dict)
    sources: dict[Path, schema.SourceRecord] = field(default_factory=dict)
    solutions: list[schema.Solution] = field(default_factory=list)
    links: list[schema.Link] = field(default_factory=list)
    registries: dict[str, schema.VersionRegistry] = field(default_factory=dict)
    registry_paths: dict[str, Path] = field(default_factory=dict)
    broken_registries: set[str] = field(default_factory=set)
    kernel_classes: list[schema.KernelClasses] = field(default_factory=list)  # data/basis/elementwise-*.yaml
    guarantees: list[schema.Guarantee] = field(default_factory=list)  # data/basis/guarantees.yaml
    # The evidence under data/, read once per catalog by its own reader (kb/verify/runfile.py
    # runs_of, kb/verify/sweepfile.py sweeps_of, kb/verify/static/merge.py static_of), so that
    # lint and the compiler share one read in a command. None: not read yet.
    runs: list[RunFile] | None = field(default=None, repr=False, compare=False)
    sweeps: list[SweepFile] | None = field(default=None, repr=False, compare=False)
    static: tuple[list[Release], list] | None = field(default=None, repr=False, compare=False)

    def rel(self, path: Path) -> str:
        return rel(path, self.root)

    def report(self, path: Path, line: int, code: str, message: str, hint: str = "") -> None:
        self.findings.append(Finding(self.rel(path), line, code, message, hint))

    def source_files(self) -> list[Path]:
        return self.data_files(self.root / SOURCES_DIR, recursive=True)

    def data_files(self, folder: Path, recursive: bool = False) -> list[Path]:
        """The *.yaml files of a data folder. Every other entry is a KB003 finding instead of
        being ignored: a name that is not UTF-8, a YAML file saved under another suffix (.yml,
        .YAML), a record saved as .json or left as an editor's copy (.yaml~, .yaml.bak,
        .yaml.orig), and a folder symlink (never descended), so that nothing in data/ goes
        unread with no word."""
        found = []
        from kb.untrusted import files_under

        for path in files_under(folder) if recursive else sorted(folder.glob("*")):
            if path.suffix.lower() not in (".yaml", ".yml"):
                if path.is_symlink() and path.is_dir():
                    self.report(path, 1, "KB003", "a folder symlink is not followed: the files it leads to are not read",
                                "put the folder itself here instead of a link")
                elif not path.is_dir():
                    self.report(path, 1, "KB003", "this file is not read: only .yaml files are data",
                                "rename a record to <id>.yaml, or delete the copy (editor backups, .json exports)")
                continue
            name = path.name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                self.report(path, 1, "KB003", "the file name is not UTF-8 text; it is not read",
                            "rename the file to its record id (letters, digits, '.', '-', '_') and .yaml")
                continue
            if path.suffix != ".yaml":
                self.report(path, 1, "KB003", f"a data file named {path.suffix!r} is not read (only .yaml files are)",
                            f"rename it to {path.stem}.yaml")
                continue
            if path.is_file() or path.is_symlink():
                found.append(path)
        return found



def _hint_for(error: Mapping[str, Any]) -> str:
    kind = error.get("type", "")
    value = error.get("input")
    if kind == "string_type" and isinstance(value, float):
        return f"quote versions and codes: YAML reads {value!r} as a number (write '{value}' in quotes)"
    if kind == "extra_forbidden":
        return "remove the field or fix its spelling; see schema/ for the allowed fields"
    if kind == "missing":
        return "add the field; see schema/ for what it holds"
    if kind == "literal_error":
        return f"use one of: {error.get('ctx', {}).get('expected', '')}"
    if kind == "union_tag_invalid":
        return "a reference's kind is one of: issue, pr, commit, doc, release-notes"
    if kind == "string_pattern_mismatch" and error.get("loc", ())[-1:] == ("repo",):
        return "write owner/name as GitHub spells it (letters, digits, '-', '_', '.'; a name is never '.' or '..')"
    if kind == "string_pattern_mismatch":
        return f"the value must match {error.get('ctx', {}).get('pattern', '')}"
    if kind == "string_type":
        return "write text; quote values YAML would read as a boolean or number (yes, no, on, 2.10)"
    if kind == "list_type":
        return "write a YAML list: one '- item' per line, or [a, b]"
    if kind in ("int_type", "int_parsing"):
        return "write a whole number"
    if kind == "too_short":
        return "add at least one entry"
    if kind in ("date_type", "date_from_datetime_parsing", "date_parsing"):
        return "write a date as YYYY-MM-DD"
    return "see docs/records.md and schema/ for what this field holds"


def schema_findings(catalog: Catalog, doc: Document, exc: ValidationError, prefix: tuple = ()) -> None:
    """Turn Pydantic errors into KB002 findings that point at the field's line."""
    for error in exc.errors(include_url=False):
        loc = prefix + tuple(p for p in error["loc"] if not (isinstance(p, str) and p in _UNION_TAGS))
        where = ".".join(str(p) for p in loc) or "(document)"
        catalog.report(
            doc.path, doc.line_of(loc), "KB002", f"{where}: {error['msg']}", _hint_for(error)
        )


_UNION_TAGS = {"issue", "pr", "commit", "doc", "release-notes"}


def _read(catalog: Catalog, path: Path) -> Document | None:
    try:
        doc = read(path, within=catalog.root / "data")
    except YamlError as exc:  # KB001 not plain YAML, KB012 over a reader bound
        catalog.report(path, exc.line, exc.code, exc.message, exc.hint)
        return None
    except OSError as exc:
        catalog.report(path, 1, "KB001", f"cannot read the file: {exc.strerror}")
        return None
    catalog.documents[path] = doc
    return doc


def _check_inventories(catalog: Catalog) -> None:
    """data/api/: the API inventories and signatures the query reads line by line. A symlink
    to /dev/zero, out of data/ or a FIFO there read as "no inventory" (every op unknown) with
    validate clean: each is a KB012 finding instead (kb/untrusted.py's checks, nothing read).
    An inventory (<framework>.txt.gz) is read as the query reads it (kb/apinames.py), so a
    corrupt, truncated or oversized one is KB012 too."""
    from kb import apinames, untrusted

    folder = catalog.root / API_DIR
    for path in untrusted.files_under(folder) if folder.is_dir() else ():
        if path.name.endswith(apinames.SUFFIX):
            try:
                apinames.read(str(path), str(catalog.root / "data"))
            except ValueError as exc:
                catalog.report(path, 1, "KB012", f"the API inventory cannot be read: {exc}",
                               "regenerate it with scripts/introspect_api.py (docs/records.md)")
            continue
        try:
            untrusted.check_file(path, API_MAX_BYTES, catalog.root / "data")
        except untrusted.Refused as exc:
            catalog.report(path, 1, "KB012", exc.message, exc.hint)
        except OSError as exc:
            catalog.report(path, 1, "KB001", f"cannot read the file: {exc.strerror or exc}")


def load(root: Path) -> Catalog:
    """Parse and validate all of data/; the result holds the models that passed."""
    catalog = Catalog(root=root)
    if not (root / SOURCES_DIR).is_dir():  # else a KB with its records deleted would validate clean
        catalog.report(root / SOURCES_DIR, 1, "KB001", f"{SOURCES_DIR}/ is missing",
                       "the source records live there, one YAML file per record")
    for path in catalog.source_files():
        doc = _read(catalog, path)
        if doc is None:
            continue
        if not isinstance(doc.data, dict):
            catalog.report(path, 1, "KB002", "a source record is a mapping of fields", "start with 'id: ...'")
            continue
        try:
            catalog.sources[path] = schema.SourceRecord.model_validate(doc.data)
        except ValidationError as exc:
            schema_findings(catalog, doc, exc)

    for path in catalog.data_files(root / VERSIONS_DIR):
        doc = _read(catalog, path)
        if doc is None:
            catalog.broken_registries.add(path.stem)
            continue
        try:
            registry = schema.VersionRegistry.model_validate(doc.data)
        except ValidationError as exc:
            schema_findings(catalog, doc, exc)
            catalog.broken_registries.add(path.stem)
            continue
        if registry.name != path.stem:
            catalog.report(path, doc.line_of(("name",)), "KB003", f"registry name {registry.name!r} differs from the file name {path.stem!r}", "rename one so they match")
            continue
        catalog.registries[registry.name] = registry
        catalog.registry_paths[registry.name] = path

    _check_inventories(catalog)
    for name, model, attr in ((SOLUTIONS_FILE, schema.Solution, "solutions"), (LINKS_FILE, schema.Link, "links")):
        path = root / name
        if not path.exists():
            catalog.report(path, 1, "KB001", f"{name} is missing", "every KB has solution codes and links")
            continue
        doc = _read(catalog, path)
        if doc is None:
            continue
        if not isinstance(doc.data, list):
            catalog.report(path, 1, "KB002", f"{name} is a list of entries", "start each entry with '- '")
            continue
        # Entries are validated one by one so a single bad entry doesn't hide the others.
        for index, entry in enumerate(doc.data):
            try:
                getattr(catalog, attr).append(model.model_validate(entry))
            except ValidationError as exc:
                schema_findings(catalog, doc, exc, (index,))
    _load_basis(catalog)
    return catalog


def _load_basis(catalog: Catalog) -> None:
    """data/basis/ (optional): the kernel classes that are deterministic by construction
    (elementwise-<framework>.yaml, written by scripts/elementwise.py) and the frameworks'
    documented guarantees (guarantees.yaml)."""
    folder = catalog.root / BASIS_DIR
    if not folder.is_dir():
        return
    for path in catalog.data_files(folder):
        doc = _read(catalog, path)
        if doc is None:
            continue
        if path.name == "guarantees.yaml":
            if not isinstance(doc.data, list):
                catalog.report(path, 1, "KB002", "guarantees.yaml is a list of entries", "start each entry with '- '")
                continue
            for index, entry in enumerate(doc.data):
                try:
                    catalog.guarantees.append(schema.Guarantee.model_validate(entry))
                except ValidationError as exc:
                    schema_findings(catalog, doc, exc, (index,))
            continue
        try:
            catalog.kernel_classes.append(schema.KernelClasses.model_validate(doc.data))
        except ValidationError as exc:
            schema_findings(catalog, doc, exc)
