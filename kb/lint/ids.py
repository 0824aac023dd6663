"""KB003: ids are unique and match where the file lives."""

from __future__ import annotations

from kb.catalog import LINKS_FILE, SOLUTIONS_FILE, SOURCES_DIR, Catalog

CODE = "KB003"
TITLE = "ids: record ids, link keys and solution codes are unique; a record's file is named by its id"


def check(catalog: Catalog) -> None:
    seen: dict[str, str] = {}
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        line = doc.line_of(("id",))
        if record.id in seen:
            catalog.report(path, line, CODE, f"duplicate id {record.id!r} (also in {seen[record.id]})", "ids are stable and unique: rename the newer record")
        else:
            seen[record.id] = catalog.rel(path)
        if path.stem != record.id:
            catalog.report(path, line, CODE, f"id {record.id!r} differs from the file name {path.name!r}", f"rename the file to {record.id}.yaml")
        folder = catalog.rel(path.parent)
        if folder != f"{SOURCES_DIR}/{record.framework}":
            catalog.report(path, doc.line_of(("framework",)), CODE,
                           f"this {record.framework} record is in {folder}/, but {record.framework} records are read "
                           f"from {SOURCES_DIR}/{record.framework}/ itself", f"move it to {SOURCES_DIR}/{record.framework}/")
    _unique(catalog, "solutions", [s.code for s in catalog.solutions], "solution code")
    _unique(catalog, "links", [link.key for link in catalog.links], "link")
    for name, registry in catalog.registries.items():
        path = catalog.registry_paths[name]
        versions = [r.version for r in registry.releases]
        for index, version in enumerate(versions):
            if version in versions[:index]:
                catalog.report(path, catalog.documents[path].line_of(("releases", index)), CODE, f"release {version} is listed twice", "keep one entry per release")


def _unique(catalog: Catalog, attr: str, keys: list[str], what: str) -> None:
    path = catalog.root / (SOLUTIONS_FILE if attr == "solutions" else LINKS_FILE)
    doc = catalog.documents.get(path)
    for index, key in enumerate(keys):
        if key in keys[:index]:
            line = doc.line_of((index,)) if doc else 1
            catalog.report(path, line, CODE, f"{what} {key} is listed twice", "keep one entry and merge their facts")
