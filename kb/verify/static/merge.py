"""Merge static evidence into the compiled index, and compare it with the records' ranges.

A record names its signals in `verify.alerts` (PyTorch alert callers such as
`index_reduce_cuda`, TensorFlow ops named by a refusal message, or a raising Python check's
function). Per release read, the index keeps which of them the wheel holds, so
`kb.status(op, "2.4")` can say "the 2.4.1 wheel's libtorch_cuda.so raises index_reduce_cuda".
The same comparison feeds lint: KB017 (a range that disagrees with the evidence) and KB018
(a signal in a release that no record claims).
"""

from __future__ import annotations

from kb.entries import STATIC_FIELDS
from kb.verify.static.load import FRAMEWORK_OF_RECORD, Release, bypassed, load
from kb.versions import range_at, release_key


UNCLAIMED_FRAMEWORKS = ("pytorch", "tensorflow")
"""Frameworks whose alerts name ops (KB018); the libraries' evidence lists switches, not refusals."""


def static_of(catalog) -> tuple[list[Release], list]:
    """The catalog's static evidence, read once per catalog."""
    if catalog.static is None:
        catalog.static = load(catalog.root)
    return catalog.static


def releases_for(catalog, framework: str) -> list[Release]:
    name = FRAMEWORK_OF_RECORD.get(framework)
    return sorted((r for r in static_of(catalog)[0] if r.framework == name), key=lambda r: release_key(r.release))


def disagreements(record, releases: list[Release]) -> list[tuple[Release, str]]:
    """(release, why) for each release whose wheel contradicts the record's range there."""
    claimed = tuple(record.verify.alerts) if record.verify else ()
    if not claimed or record.withdrawn:
        return []
    out = []
    for release in releases:
        item = range_at(record.status, release.release)
        if item is None:
            continue
        found = [a for a in claimed if a in release.signals]
        bypass = [b for b in record.verify.bypasses if bypassed(release, b)]
        raises = bool(found) and not bypass
        if item.raises and not raises:
            why = (f"{bypass[0]} takes a deterministic path first" if bypass
                   else f"the {release.release} wheel holds none of {', '.join(claimed)}")
            out.append((release, f"the range {item.versions!r} raises, but {why}"))
        elif raises and not item.raises:
            seen = release.signals[found[0]]
            where = ", ".join(m.rsplit("/", 1)[-1] for m in seen.members) or seen.wheel
            out.append((release, f"the {release.release} wheel's {where} raises {found[0]}, but the range "
                                 f"{item.versions!r} does not say raises"))
    return out


def claimed_signals(catalog, framework: str) -> set[str]:
    out: set[str] = set()
    for record in catalog.sources.values():
        if record.framework == framework and record.verify:
            out.update(record.verify.alerts)
            out.update(record.verify.conditional_alerts)
    return out


def unclaimed(catalog, framework: str) -> dict[str, list[Release]]:
    """Signal -> releases holding it, for signals that no record of the framework claims."""
    claimed = claimed_signals(catalog, framework)
    out: dict[str, list[Release]] = {}
    for release in releases_for(catalog, framework):
        for name in release.signals:
            if name not in claimed:
                out.setdefault(name, []).append(release)
    return out


def merged_static(catalog) -> dict:
    """Index entries, kept compact (the index is loaded on every query): per source id, per
    release read, (release key, release, evidence file, claimed signals found as (signal,
    member file names), claimed signals missing, bypasses present); per evidence file, its
    wheels as (file name, sha256)."""
    by_source: dict[str, tuple] = {}
    wheels: dict[str, tuple] = {}
    for record in sorted(catalog.sources.values(), key=lambda r: r.id):
        claimed = tuple(record.verify.alerts) if record.verify else ()
        if not claimed:
            continue
        entries = []
        for release in releases_for(catalog, record.framework):
            wheels[release.file] = release.wheels
            found = tuple((n, tuple(m.rsplit("/", 1)[-1] for m in release.signals[n].members)) for n in claimed if n in release.signals)
            fields = {"key": release_key(release.release), "release": release.release, "file": release.file,
                      "found": found, "missing": tuple(n for n in claimed if n not in release.signals),
                      "bypassed_by": tuple(b for b in record.verify.bypasses if bypassed(release, b))}
            entries.append(tuple(fields[name] for name in STATIC_FIELDS))
        if entries:
            by_source[record.id] = tuple(entries)
    disagreeing = tuple(
        {"source": record.id, "release": release.release, "file": release.file, "reason": why}
        for record in sorted(catalog.sources.values(), key=lambda r: r.id)
        for release, why in disagreements(record, releases_for(catalog, record.framework))
    )
    missing = tuple(
        {"framework": framework, "signal": name, "releases": tuple(r.release for r in releases), "file": releases[-1].file}
        for framework in UNCLAIMED_FRAMEWORKS
        for name, releases in sorted(unclaimed(catalog, framework).items())
    )
    return {"static": by_source, "static_wheels": dict(sorted(wheels.items())),
            "static_disagreements": disagreeing, "static_unclaimed": missing}
