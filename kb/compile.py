"""Compile validated data into kb/_index.py, the one model every reader uses.

The index is a Python literal rather than JSON because `import json` (and the `re` it
pulls in) alone costs more than the whole query path may add to interpreter start-up;
a literal module loads from its cached bytecode with `marshal`, in well under a
millisecond. Everything a query needs is precomputed here: range bounds as release
keys, op-name lookup tables, resolved references, solution order.
"""

from __future__ import annotations

import json
import pprint
from pathlib import Path
from typing import Any

from kb import schema
from kb.catalog import Catalog
from kb.links import state as link_state
from kb.lint.links import resolve
from kb.lint.ops import PREFIXES
from kb.verify.merge import merged_runs
from kb.verify.static.merge import merged_static
from kb.versions import compile_range, release_key

INDEX_FILE = "kb/_index.py"
SCHEMA_FILES = {
    "source.schema.json": schema.SourceRecord,
    "versions.schema.json": schema.VersionRegistry,
}
LIST_SCHEMA_FILES = {"solutions.schema.json": schema.Solution, "links.schema.json": schema.Link}
FORMAT = 1


def _ranges(items: list[schema.Range]) -> tuple:
    out = []
    for item in items:
        lo, hi = compile_range(item.versions)
        out.append((lo, hi, item.versions, tuple(item.solutions), item.deterministic, item.raises, item.note,
                    item.batch_invariant))
    return tuple(sorted(out, key=lambda r: (r[0] is not None, r[0] or ())))


def _reference(ref: Any, links: list[schema.Link], live: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    data = ref.model_dump(exclude_none=True)
    if isinstance(ref, (schema.IssueRef, schema.CommitRef)):
        link = resolve(ref, links)
        if link is not None:
            data["title"] = link.title
            if link.state:
                data["state"] = link.state
            refreshed = (live or {}).get(link.key)
            if refreshed:
                # What GitHub said at the last `kb links refresh` (data/links-state.yaml); the
                # curated state stays under `curated_state` when the two differ.
                data["github"] = link_state.index_fields(refreshed)
                if refreshed.get("state") and refreshed.get("flag") != "deleted" and refreshed["state"] != data.get("state"):
                    if "state" in data:
                        data["curated_state"] = data["state"]
                    data["state"] = refreshed["state"]
            if link.sha:
                data["sha"] = link.sha
            number = f"pull/{link.number}" if link.kind == "pr" else f"issues/{link.number}"
            data["url"] = f"https://github.com/{link.repo}/" + (f"commit/{link.sha}" if link.sha else number)
    elif isinstance(ref, schema.ReleaseNotesRef) and "url" not in data and ref.framework == "tensorflow":
        data["url"] = f"https://github.com/tensorflow/tensorflow/releases/tag/v{_full(ref.version)}"
    return data


def _full(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def build_index(catalog: Catalog) -> dict[str, Any]:
    links = catalog.links
    live = link_state.load(catalog.root)
    sources: dict[str, Any] = {}
    names: dict[str, dict[str, list[str]]] = {}
    for record in sorted(catalog.sources.values(), key=lambda r: r.id):
        if record.withdrawn is not None:
            continue
        sources[record.id] = {
            "id": record.id,
            "framework": record.framework,
            "title": record.title,
            "device": record.device,
            "pass": record.pass_,
            "mechanism": record.mechanism,
            "summary": record.summary,
            "conditions": tuple(record.conditions),
            "notes": record.notes,
            "ops": tuple(record.ops),
            "aliases": tuple(record.aliases),
            "status": _ranges(record.status),
            "caused_by": tuple(record.caused_by),
            "distributions": {name: _ranges(items) for name, items in sorted(record.distributions.items())},
            "disputes": tuple(
                {
                    "claim": d.claim,
                    "status": _ranges(d.status),
                    "resolution": d.resolution,
                    "references": tuple(_reference(r, links, live) for r in d.references),
                }
                for d in record.disputes
            ),
            "references": tuple(_reference(r, links, live) for r in record.references),
            "verify": record.verify.verifier if record.verify else None,
            "unverifiable": record.verify.unverifiable if record.verify else None,
        }
        table = names.setdefault(record.framework, {})
        for name in (*record.ops, *record.aliases):
            table.setdefault(name, []).append(record.id)
    solutions = {
        s.code: {
            "title": s.title, "kind": s.kind, "how": s.how, "snippet": s.snippet,
            "phase": s.phase, "preference": s.preference, "implies": tuple(s.implies),
        }
        for s in catalog.solutions
    }
    registries = {
        name: {
            "framework": reg.framework,
            "keys": tuple(sorted({release_key(r.version) for r in reg.releases})),
            "latest": max(reg.releases, key=lambda r: release_key(r.version)).version,
        }
        for name, reg in sorted(catalog.registries.items())
    }
    return {
        "format": FORMAT,
        "prefixes": {fw: PREFIXES[fw] for fw in sorted(PREFIXES)},
        "solutions": solutions,
        "order": tuple(sorted(solutions, key=lambda c: (solutions[c]["phase"], solutions[c]["preference"], c))),
        "sources": sources,
        "names": {fw: {n: tuple(ids) for n, ids in sorted(table.items())} for fw, table in sorted(names.items())},
        "registries": registries,
        **merged_runs(catalog),
        **merged_static(catalog),
    }


def index_text(index: dict[str, Any]) -> str:
    from kb.site.render import render

    return render("index.py.j2", body=pprint.pformat(index, width=110, sort_dicts=False))


def schema_texts() -> dict[str, str]:
    from pydantic import TypeAdapter

    out = {}
    for name, model in SCHEMA_FILES.items():
        out[name] = json.dumps(model.model_json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"
    for name, model in LIST_SCHEMA_FILES.items():
        out[name] = json.dumps(TypeAdapter(list[model]).json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"
    return out


def lint_doc_text() -> str:
    """docs/lint.md: the table of check codes, from the check modules themselves."""
    from kb import lint
    from kb.site.render import render

    codes = sorted(lint.CODES.items())
    modules = [(m.CODE, m.__name__.replace(".", "/") + ".py") for m in lint.CHECKS]
    return render("lint.md.j2", codes=codes, modules=modules)


def generated_files(catalog: Catalog) -> dict[Path, str]:
    """Every file `kb build` writes, with its expected text; `--check` compares these."""
    root = catalog.root
    index = build_index(catalog)
    files = {root / INDEX_FILE: index_text(index)}
    if (root / "docs").is_dir():
        files[root / "docs" / "lint.md"] = lint_doc_text()
    for name, text in schema_texts().items():
        files[root / "schema" / name] = text
    readme = root / "README.md"
    if readme.is_file():
        from kb.site.readme import readme_text

        files[readme] = readme_text(readme.read_text(encoding="utf-8"), catalog, index)
    return files
