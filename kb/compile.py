"""Compile validated data and merged evidence into the index dict, the one model every reader uses.

The index is a Python literal rather than JSON because `import json` (and the `re` it
pulls in) alone costs more than the whole query path may add to interpreter start-up;
a literal module loads from its cached bytecode with `marshal`, in well under a
millisecond. Everything a query needs is precomputed here: range bounds as release
keys, op-name lookup tables, resolved references, solution order. Writing the index and the
other generated files is kb/generated.py's job, above this module.
"""

from __future__ import annotations

from typing import Any

from kb import schema
from kb.entries import LO, RANGE_FIELDS
from kb.catalog import Catalog
from kb.links import state as link_state
from kb.links.resolve import resolve
from kb.prefixes import PREFIXES
from kb.verify.merge import merged_runs
from kb.verify.extend import derived_ranges
from kb.verify.seen import seen_table
from kb.verify.static.merge import merged_static
from kb.versions import compile_range, release_key

FORMAT = 1


def _ranges(items: list[schema.Range], framework: str = "") -> tuple:
    out = []
    for item in items:
        lo, hi = compile_range(item.versions)
        fields = {"lo": lo, "hi": hi, "versions": item.versions, "solutions": tuple(item.solutions),
                  "deterministic": item.deterministic, "raises": item.raises, "note": item.note,
                  "batch_invariant": item.batch_invariant, "when": _when(item.when) if item.when is not None else None,
                  "switch": switch_effect(item, framework),
                  "varies": item.varies or (None if item.deterministic else "run-to-run"),
                  "varies_with": tuple(item.varies_with), "basis": item.basis,
                  "read": tuple(code_read(read) for read in item.read)}
        out.append(tuple(fields[name] for name in RANGE_FIELDS))
    return tuple(sorted(out, key=lambda r: (r[LO] is not None, r[LO] or ())))


def _with_derived(status: tuple, ranges: list) -> tuple:
    """The record's compiled ranges plus those a sweep of an uncovered release derives (kb/verify/extend.py):
    one release each (==X.Y.Z), basis `verified`, in order."""
    out = list(status)
    for versions, claim, note in ranges:
        lo, hi = compile_range(versions)
        fields = {"lo": lo, "hi": hi, "versions": versions, "solutions": tuple(claim["solutions"]),
                  "deterministic": claim["deterministic"], "raises": claim["raises"], "note": note,
                  "batch_invariant": None, "when": None, "switch": claim["switch"],
                  "varies": None if claim["deterministic"] else "run-to-run", "varies_with": (),
                  "basis": "verified", "read": ()}
        out.append(tuple(fields[name] for name in RANGE_FIELDS))
    return tuple(sorted(out, key=lambda r: (r[LO] is not None, r[LO] or ())))


def code_read(read: schema.CodeRead) -> dict[str, Any]:
    """A place read in the code as the index holds it: plain values, lines as a tuple, and its address
    (the file at the release's tag, at its first line)."""
    out = read.model_dump(exclude_none=True)
    out["lines"] = tuple(read.lines)
    out["tag"] = read.tag
    out["commit"] = read.commit
    binary = read.path.endswith((".so", ".whl", ".dylib")) or ".so." in read.path  # a library read in the wheel
    out["url"] = None if binary or (read.tag and " " in read.tag) else (
        f"https://github.com/{read.repo}/blob/{read.tag or read.commit}/{read.path}"
        + (f"#L{read.lines[0]}" if read.lines else ""))
    return out


def _op_versions(record: schema.SourceRecord) -> dict:
    """{op: (lo, hi, versions, note)}: the releases in which the op is this source (schema.OpVersions)."""
    out = {}
    for item in record.op_versions:
        lo, hi = compile_range(item.versions)
        for op in item.ops:
            out[op] = (lo, hi, item.versions, item.note)
    return out


def keras_requirements(registry: schema.VersionRegistry, keras: schema.VersionRegistry | None) -> tuple:
    """Per release with a `keras:` requirement (data/versions/tensorflow.yaml), sorted by key:
    (key, version, requirement, newest known Keras release it admits or None, Keras 3 or later or not).
    A requirement is Keras 3 when every Keras release it admits is 3.x or later (tf.keras is then Keras 3:
    tensorflow/python/util/lazy_loader.py, KerasLazyLoader, from 2.16)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    out = []
    known = sorted((Version(r.version) for r in keras.releases), reverse=True) if keras else []
    for release in registry.releases:
        if release.keras is None:
            continue
        spec = SpecifierSet(release.keras.requires)
        admitted = [v for v in known if spec.contains(v)]
        newest = str(admitted[0]) if admitted else None
        keras3 = bool(admitted) and all(v.major >= 3 for v in admitted)
        out.append((release_key(release.version), release.version, release.keras.requires, newest, keras3))
    return tuple(sorted(out))


def switch_effect(item: schema.Range, framework: str) -> str | None:
    """What the framework's determinism switch does for a source in this range: the range's own
    `switch:`, else derived: `raises` where requesting determinism raises, `fixes` where a switch
    code (schema.SWITCHES) is among the solutions, None where nothing says (deterministic by
    default, no switch in this framework, or a solution that is not the switch)."""
    if item.switch is not None:
        return item.switch
    if item.deterministic:
        return None
    if item.raises:
        return "raises"
    if set(item.solutions) & set(schema.SWITCHES.get(framework, ())):
        return "fixes"
    return None


def _when(when: dict[str, list[Any]]) -> tuple:
    """A condition as a sorted tuple of (key, values): hashable, so queries can memoize on it."""
    return tuple((key, tuple(values)) for key, values in sorted(when.items()))


def _calls(record: schema.SourceRecord) -> tuple:
    """(ops or (), when) per pattern; () when the record applies to every call."""
    return tuple((tuple(p.ops), _when(p.when)) for p in record.calls)


def _scan_value(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _scan(record: schema.SourceRecord) -> dict[str, Any] | None:
    """The record's `scan:` block (schema.ScanRules) as kb/scan/rules.py reads it: tuples, lists of
    values as tuples (a YAML list is a tuple argument such as `output_size=(1, 1)`)."""
    rules = record.scan
    if rules is None:
        return None
    shape = rules.unknown_shape
    return {
        "ruled_out": tuple((r.parameter, tuple(_scan_value(v) for v in r.values), r.why, tuple(r.ops))
                           for r in rules.ruled_out),
        "only_if": tuple((r.parameter, tuple(_scan_value(v) for v in r.values), r.depends_on, tuple(r.unless),
                          tuple(r.ops)) for r in rules.only_if),
        "needs_word": tuple(rules.needs_word),
        "unknown_shape": (shape.fact, shape.at_least, shape.why, shape.level) if shape is not None else None,
        "data_note": rules.data_note,
        "resolvers": tuple(rules.resolvers),
        "unique_index": rules.unique_index,
    }


def _params(catalog: Catalog, sources: dict[str, Any]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Signature fields of every op a record names, per framework (kb/signatures.py)."""
    from kb import signatures

    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for source in sources.values():
        table = signatures.table(source["framework"], str(catalog.root)) if source["framework"] in PREFIXES else {}
        for name in (*source["ops"], *source["aliases"]):
            if name in table:
                out.setdefault(source["framework"], {})[name] = table[name]
            elif name.startswith("tf.") and "tf.compat.v1." + name[3:] in table:  # TF 1's name: tf.compat.v1's in TF 2
                out.setdefault(source["framework"], {})[name] = table["tf.compat.v1." + name[3:]]
    return {fw: dict(sorted(ops.items())) for fw, ops in sorted(out.items())}


def reference(ref: Any, links: list[schema.Link], live: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A reference as the index and the site show it: resolved title, state, URL (and GitHub's live state)."""
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
            "calls": _calls(record),
            "notes": record.notes,
            "scan": _scan(record),
            "ops": tuple(record.ops),
            "aliases": tuple(record.aliases),
            "status": _ranges(record.status, record.framework),
            "op_versions": _op_versions(record),
            "caused_by": tuple(record.caused_by),
            "distributions": {name: _ranges(items, record.framework) for name, items in sorted(record.distributions.items())},
            "disputes": tuple(
                {
                    "claim": d.claim,
                    "status": _ranges(d.status, record.framework),
                    "resolution": d.resolution,
                    "references": tuple(reference(r, links, live) for r in d.references),
                }
                for d in record.disputes
            ),
            "references": tuple(reference(r, links, live) for r in record.references),
            "verify": record.verify.verifier if record.verify else None,
            "unverifiable": record.verify.unverifiable if record.verify else None,
        }
        table = names.setdefault(record.framework, {})
        for name in (*record.ops, *record.aliases):
            table.setdefault(name, []).append(record.id)
    for record_id, ranges in derived_ranges(catalog).items():
        if record_id in sources:
            sources[record_id]["status"] = _with_derived(sources[record_id]["status"], ranges)
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
            **({"keras": keras} if (keras := keras_requirements(reg, catalog.registries.get("keras"))) else {}),
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
        "switches": {fw: codes for fw, codes in sorted(schema.SWITCHES.items())},
        "params": _params(catalog, sources),
        **merged_runs(catalog),
        **merged_static(catalog),
        **basis_tables(catalog),
        **seen_table(catalog, {fw: set(table) for fw, table in names.items()}),
    }


def basis_tables(catalog: Catalog) -> dict[str, Any]:
    """What answers an op with no record (data/basis/): `kernel_classes` (id -> the class, its releases
    and the code read), `elementwise` (framework -> op -> class ids) and `guarantees` (framework -> the
    documented guarantees of its determinism switch, with their releases)."""
    classes: dict[str, Any] = {}
    members: dict[str, dict[str, list[str]]] = {}
    for listing in catalog.kernel_classes:
        for item in listing.classes:
            lo, hi = compile_range(item.versions) if item.versions else (None, None)
            classes[item.id] = {"framework": listing.framework, "title": item.title, "what": item.what,
                                "lo": lo, "hi": hi, "versions": item.versions, "device": item.device,
                                "read": tuple(code_read(r) for r in item.read), "listed_from": item.listed_from,
                                "release": listing.release}
            for op in item.ops:
                members.setdefault(listing.framework, {}).setdefault(op, []).append(item.id)
    guarantees: dict[str, list] = {}
    for guarantee in catalog.guarantees:
        lo, hi = compile_range(guarantee.versions)
        guarantees.setdefault(guarantee.framework, []).append({
            "code": guarantee.code, "lo": lo, "hi": hi, "versions": guarantee.versions, "device": guarantee.device,
            "claim": guarantee.claim, "raises": guarantee.raises,
            "references": tuple(reference(r, catalog.links) for r in guarantee.references)})
    return {
        "kernel_classes": dict(sorted(classes.items())),
        "elementwise": {fw: {op: tuple(ids) for op, ids in sorted(ops.items())} for fw, ops in sorted(members.items())},
        "guarantees": {fw: tuple(items) for fw, items in sorted(guarantees.items())},
    }
