"""The static JSON API (api/v1/): what "check my stack" reads, and what scripts may fetch.

Same data in, same bytes out: keys sorted, no timestamps, compact separators.
"""

from __future__ import annotations

import json
from typing import Any

from kb import apinames, jsonio
from kb.catalog import Catalog
from kb.entries import DETERMINISTIC, HI, LO, SOLUTIONS, WHEN, range_fields
from kb.site import model, recipes, words
from kb.versions import release_key

SCHEMA_VERSION = 1
PREFIX = "api/v1"


def _dump(value: Any) -> str:
    """Strict JSON (a float that is not finite is "nan", "inf" or "-inf": kb.jsonio)."""
    return jsonio.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def _ranges(ranges: tuple) -> list[dict]:
    out = []
    for entry in ranges:
        fields = range_fields(entry)
        fields.update(lo=model.key_list(entry[LO]), hi=model.key_list(entry[HI]), solutions=list(entry[SOLUTIONS]),
                      deterministic=bool(entry[DETERMINISTIC]),
                      when=None if entry[WHEN] is None else {key: list(values) for key, values in entry[WHEN]})
        out.append(fields)
    return out


def source_json(source: dict) -> dict:
    out = {k: v for k, v in source.items() if k not in ("status", "distributions", "disputes")}
    out = json.loads(json.dumps(out))  # tuples -> lists
    out["calls"] = [{"ops": list(ops), "when": {key: list(values) for key, values in when}}
                    for ops, when in source["calls"]]
    out["status"] = _ranges(source["status"])
    out["distributions"] = {name: _ranges(r) for name, r in source["distributions"].items()}
    out["disputes"] = [
        {"claim": d["claim"], "resolution": d["resolution"], "status": _ranges(d["status"]),
         "references": json.loads(json.dumps(d["references"]))}
        for d in source["disputes"]
    ]
    return out


def all_json(catalog: Catalog, index: dict) -> dict:
    registries = {
        name: {
            "framework": reg.framework,
            "releases": [
                {"version": r.version, "date": r.date.isoformat() if r.date else None}
                for r in sorted(reg.releases, key=lambda r: release_key(r.version))
            ],
            "keys": [list(k) for k in index["registries"][name]["keys"]],
            "latest": index["registries"][name]["latest"],
            **({"keras": [{"key": list(key), "version": version, "requires": requires, "keras": keras, "keras3": keras3}
                          for key, version, requires, keras, keras3 in index["registries"][name]["keras"]]}
               if "keras" in index["registries"][name] else {}),
        }
        for name, reg in sorted(catalog.registries.items())
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "as_of": model.latest_date(catalog),
        "frameworks": model.frameworks(index),
        "prefixes": {fw: list(p) for fw, p in index["prefixes"].items()},
        "solutions": json.loads(json.dumps(index["solutions"])),
        "order": list(index["order"]),
        "sources": {sid: source_json(s) for sid, s in index["sources"].items()},
        "names": {fw: {n: list(ids) for n, ids in table.items()} for fw, table in index["names"].items()},
        "registries": registries,
        "runs": json.loads(json.dumps(index.get("runs", {}), default=str)),
        "static_reads": static_reads(index),
        "basis": basis_json(index),
    }


def static_reads(index: dict) -> dict[str, list[list[int]]]:
    """Per record, the release keys whose wheels were read for its alerts (kb/query/evidence.py static):
    the lookup says "code or binary read at this release" where kb.status does."""
    from kb.entries import STATIC_KEY

    return {sid: [list(entry[STATIC_KEY]) for entry in entries] for sid, entries in sorted(index.get("static", {}).items())}


def basis_json(index: dict) -> dict:
    """What answers an op no record covers (kb/query/norecord.py), for the page's lookup: the elementwise
    kernel classes, the frameworks' documented guarantees, and the sweep cases of ops with no record,
    each as [release key, device, call facts, exact dtype, class, version, GPU, runs per mode]."""
    from kb.entries import SEEN_CLASS, SEEN_DEVICE, SEEN_DTYPE, SEEN_FACTS, SEEN_FILE, SEEN_KEY

    files = index.get("seen_files", ())
    return {
        "elementwise": {fw: {op: list(ids) for op, ids in ops.items()} for fw, ops in index.get("elementwise", {}).items()},
        "kernel_classes": {cid: {"lo": model.key_list(c["lo"]), "hi": model.key_list(c["hi"]), "device": c["device"],
                                 "title": c["title"], "read": json.loads(json.dumps(c["read"]))}
                           for cid, c in index.get("kernel_classes", {}).items()},
        "guarantees": {fw: [{"lo": model.key_list(g["lo"]), "hi": model.key_list(g["hi"]), "device": g["device"],
                             "code": g["code"], "claim": g["claim"], "versions": g["versions"]} for g in items]
                       for fw, items in index.get("guarantees", {}).items()},
        "seen": {fw: {op: [[list(e[SEEN_KEY]), e[SEEN_DEVICE], dict(e[SEEN_FACTS]), e[SEEN_DTYPE], e[SEEN_CLASS],
                            files[e[SEEN_FILE]][3], files[e[SEEN_FILE]][5], files[e[SEEN_FILE]][11]] for e in entries]
                      for op, entries in ops.items()} for fw, ops in index.get("seen", {}).items()},
        "seen_defaults": {fw: {op: dict(pairs) for op, pairs in ops.items() if pairs}
                          for fw, ops in index.get("seen_defaults", {}).items()},
    }


def op_json(catalog: Catalog, index: dict, framework: str, op: str, memo: dict | None = None) -> dict:
    """`memo`: see kb.model's to_dict (one per API build: records' answers repeat across ops)."""
    out = {
        "schema_version": SCHEMA_VERSION,
        "op": op,
        "framework": framework,
        "series": [{"series": label, "status": st.to_dict(memo)} for label, st in model.op_series(catalog, framework, op)],
    }
    ids = index["names"][framework][op]
    if any(index["sources"][i]["distributions"].get(model.DISTRIBUTION) for i in ids):
        out["ngc"] = [
            {"series": label, "status": st.to_dict(memo)}
            for label, st in model.op_series(catalog, framework, op, model.DISTRIBUTION)
        ]
    return out


def inventory_names(catalog: Catalog) -> dict[str, list[str]]:
    """Each framework's public names (data/api/<framework>.txt.gz), as kb.status() reads them.

    The page needs them to tell a real op with no record (no known source) from a typo or a
    short name (suggestions), exactly as kb.status() does; without them it would give an
    all-clear for any name it does not know.
    """
    out = {}
    folder = catalog.root / "data" / "api"
    for path in sorted(folder.glob("*" + apinames.SUFFIX)) if folder.is_dir() else ():
        framework = path.name[:-len(apinames.SUFFIX)]
        if "." in framework:
            continue
        try:  # a link out of data/, a device, a FIFO or corrupt gzip is lint's KB012 (kb/catalog.py)
            out[framework] = sorted(apinames.read(str(path), str(catalog.root / "data")))
        except ValueError:
            continue
    return out


def front_coded(names: list[str]) -> str:
    """Sorted names as "N<TAB>suffix" lines (N characters shared with the previous name).

    PyTorch's 200,000 names are 9 MB plain and 2 MB this way; stack-core.js decodes them.
    """
    lines, previous = [], ""
    for name in names:
        # The longest shared prefix by bisection on slices: ~log2(len) C-level comparisons
        # instead of one Python step per character (this ran 6 s of a build).
        lo, hi = 0, min(len(name), len(previous))
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if name[:mid] == previous[:mid]:
                lo = mid
            else:
                hi = mid - 1
        lines.append(f"{lo}\t{name[lo:]}")
        previous = name
    return "\n".join(lines) + "\n"


def files(catalog: Catalog, index: dict) -> dict[str, str]:
    """relative path -> text, for every file of the API."""
    inventories = inventory_names(catalog)
    everything = all_json(catalog, index)
    everything["inventories"] = {fw: f"{PREFIX}/names/{fw}.txt" for fw in inventories}
    everything["display_names"] = {fw: words.name(fw) for fw in everything["frameworks"]}
    # Signatures of every op a record names, so the page fills in defaults as kb.status(call=) does.
    everything["params"] = {fw: {op: list(fields) for op, fields in table.items()}
                            for fw, table in (index.get("params") or {}).items()}
    everything["recipes"] = {fw: recipes.blocks(catalog, index, fw) for fw in everything["frameworks"]
                             if catalog.registries.get(fw)}
    out = {f"{PREFIX}/all.json": _dump(everything)}
    # The same data as scripts: a page opened from disk (file://) cannot fetch() files beside it,
    # but it can load a <script>, so the lookup form works without a web server (stack-ui.js).
    out[f"{PREFIX}/all.js"] = f"window.KB_ALL = {jsonio.dumps(everything, sort_keys=True, separators=(',', ':'))};\n"
    for fw, names in inventories.items():
        coded = front_coded(names)
        out[f"{PREFIX}/names/{fw}.txt"] = coded
        out[f"{PREFIX}/names/{fw}.js"] = (
            f"(window.KB_NAMES = window.KB_NAMES || {{}})[{json.dumps(fw)}] = {json.dumps(coded)};\n")
    for sid, source in index["sources"].items():
        out[f"{PREFIX}/sources/{sid}.json"] = _dump(
            {"schema_version": SCHEMA_VERSION, "source": source_json(source)}
        )
    memo: dict = {}
    for framework, table in index["names"].items():
        for op in table:
            out[f"{PREFIX}/ops/{op}.json"] = _dump(op_json(catalog, index, framework, op, memo))
    out[f"{PREFIX}/schema.json"] = json.dumps(schema(), indent=2, sort_keys=True) + "\n"
    return out


def schema() -> dict:
    """JSON Schema (draft 2020-12) for the three kinds of API file."""
    key = {"type": ["array", "null"], "items": {"type": "integer"}}
    rng = {
        "type": "object",
        "required": ["lo", "hi", "versions", "solutions", "deterministic"],
        "properties": {
            "lo": key, "hi": key, "versions": {"type": "string"},
            "solutions": {"type": "array", "items": {"type": "string"}},
            "deterministic": {"type": "boolean"},
            "raises": {"type": ["string", "null"]}, "note": {"type": ["string", "null"]}, "batch_invariant": {"type": ["boolean", "null"]},
            "varies": {"enum": ["run-to-run", "configuration", None]},
            "varies_with": {"type": "array", "items": {"type": "string"}},
        },
    }
    source = {
        "type": "object",
        "required": ["id", "framework", "title", "device", "ops", "status", "references"],
        "properties": {
            "id": {"type": "string"}, "framework": {"type": "string"}, "title": {"type": "string"},
            "device": {"enum": ["gpu", "cpu", "any"]}, "summary": {"type": "string"},
            "ops": {"type": "array", "items": {"type": "string"}},
            "status": {"type": "array", "items": {"$ref": "#/$defs/range"}},
            "distributions": {"type": "object", "additionalProperties": {"type": "array", "items": {"$ref": "#/$defs/range"}}},
            "references": {"type": "array", "items": {"type": "object", "required": ["kind"]}},
        },
    }
    status = {
        "type": "object",
        "required": ["op", "framework", "version", "device", "deterministic", "solutions", "recipe", "sources"],
        "properties": {
            "deterministic": {"type": ["boolean", "null"]},
            "solutions": {"type": "array", "items": {"type": "string"}},
            "recipe": {"type": ["array", "null"], "items": {"type": "string"}},
            "sources": {"type": "array", "items": {"type": "object"}},
        },
    }
    version = {"const": SCHEMA_VERSION}
    series = {"type": "array", "items": {"type": "object", "required": ["series", "status"],
                                         "properties": {"series": {"type": "string"}, "status": {"$ref": "#/$defs/status"}}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Determinism KB JSON API v1 (all.json, ops/<op>.json, sources/<id>.json)",
        "$defs": {"range": rng, "source": source, "status": status},
        "oneOf": [
            {"title": "all.json", "type": "object",
             "required": ["schema_version", "sources", "solutions", "order", "names", "registries"],
             "properties": {"schema_version": version,
                            "sources": {"type": "object", "additionalProperties": {"$ref": "#/$defs/source"}}}},
            {"title": "ops/<op>.json", "type": "object", "required": ["schema_version", "op", "framework", "series"],
             "properties": {"schema_version": version, "op": {"type": "string"}, "series": series, "ngc": series}},
            {"title": "sources/<id>.json", "type": "object", "required": ["schema_version", "source"],
             "properties": {"schema_version": version, "source": {"$ref": "#/$defs/source"}}},
        ],
    }
