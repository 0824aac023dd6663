"""Which verifiers to run, in which modes: from the compiled index, nothing else.

A record is planned when it names a registered verifier, its framework is installed and
its device matches the run's device (a record for `any` device runs anywhere). Its modes
are `default` plus one per solution code of the record's range for the installed version
(what `kb.status` answers for that record); where that range has no solution but says
requesting determinism raises, the verifier's own codes run once to check that they raise. Registered verifiers that no record names yet
("unlinked": the PyTorch and JAX verifiers before their records exist) run with the codes
their decorator lists, with `source: null`; `kb build` links them to records by name.
Every mode runs every case of the verifier (one call each, complementary calls included):
what the record predicts for a case is decided at merge time (kb/verify/cases.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from kb.case import WHOLE, Case
from kb.query import index


class Mode(NamedTuple):
    """One way a verifier runs: `default`, or a solution code and the codes it applies."""

    name: str
    codes: tuple[str, ...]


@dataclass
class PlanItem:
    """One verifier to run for one record (`source`; None for a verifier no record names yet)."""

    source: str | None
    verifier: str
    module: str
    framework: str | None
    version: str
    device: str  # the device this run measures on: gpu | cpu
    modes: list[Mode]
    handles: tuple[str, ...]
    expect_raises: str | None  # what the record says requesting determinism raises, if it does
    claim: bool | None  # the record's `deterministic` at the installed version (None: unknown)
    cases: list[Case]  # one call each (kb/case.py, kb/verify/cases.py)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cases": [c.to_dict() for c in self.cases]}


def _cases(entry) -> list[Case]:
    """The verifier's cases (one call each); one case of no particular call when it lists none."""
    return list(getattr(entry, "cases", ()) or (WHOLE,))


def record_status(source_id: str, version: str, device: str):
    """kb.status for one record at the installed version (device `any` keeps the record)."""
    import kb

    try:
        return kb.status(source_id, version, device="any").sources[0]
    except (LookupError, ValueError, IndexError):
        return None


def device_matches(record_device: str, run_device: str) -> bool:
    return record_device == "any" or record_device == run_device


def plan(
    found: dict,
    installed: dict[str, str],
    devices: dict[str, str],
    *,
    verifiers: tuple[str, ...] = (),
    sources: tuple[str, ...] = (),
    frameworks: tuple[str, ...] = (),
    unlinked: bool = True,
    any_device: bool = False,
) -> list[PlanItem]:
    """`found`: verifiers/discover.scan(); `installed`: framework -> version;
    `devices`: framework -> device this run measures on (gpu | cpu). `any_device` (an
    explicit --device) also runs verifiers written for another device: GPU verifiers on
    CPU prove they work; their evidence is stored as `device: cpu` and never shown for GPU."""
    idx = index()
    items: list[PlanItem] = []
    named: set[str] = set()
    for source in idx["sources"].values():
        name = source.get("verify")
        if not name:
            continue
        named.add(name)
        entry = found.get(name)
        framework = entry.framework if entry else None
        if entry is None or framework not in installed or getattr(entry, "gpus", 1) > 1:
            continue  # several GPUs: one process per GPU, planned by kb/verify/multigpu.py
        if verifiers and name not in verifiers or sources and source["id"] not in sources:
            continue
        if frameworks and framework not in frameworks:
            continue
        device = devices.get(framework, "cpu")
        if not any_device and not device_matches(source["device"], device):
            continue
        st = record_status(source["id"], installed[framework], device)
        codes = tuple(st.solutions) if st is not None else ()
        if st is None or st.deterministic is None:
            # No range covers the installed version: run the verifier's own switch to learn what it does.
            codes = tuple(entry.solutions)
        elif st.raises and not codes:
            # No switch fixes it, but requesting determinism is documented to raise: run the
            # verifier's own switch once to see that it does (an `ok` there contradicts the record).
            codes = tuple(entry.solutions)
        claim = None if st is None else st.deterministic
        items.append(PlanItem(
            source=source["id"], verifier=name, module=entry.module, framework=framework,
            version=installed[framework], device=device, handles=entry.handles,
            modes=[Mode("default", ())] + [Mode(code, (code,)) for code in codes],
            expect_raises=st.raises if st is not None else None, claim=claim, cases=_cases(entry),
        ))
    if unlinked or verifiers:
        for name, entry in sorted(found.items()):
            if name in named and not verifiers or entry.framework not in installed and entry.framework != "synthetic":
                continue
            if getattr(entry, "gpus", 1) > 1:
                continue
            if verifiers and name not in verifiers or sources:
                continue
            if not verifiers and (entry.framework == "synthetic" or frameworks and entry.framework not in frameworks):
                continue
            if any(i.verifier == name for i in items):
                continue
            device = devices.get(entry.framework, "cpu") if entry.device != "cpu" else "cpu"
            if not verifiers and not any_device and not device_matches(entry.device, device):
                continue
            items.append(PlanItem(
                source=None, verifier=name, module=entry.module, framework=entry.framework,
                version=installed.get(entry.framework, "n/a"), device=device, handles=entry.handles,
                modes=[Mode("default", ())] + [Mode(code, (code,)) for code in entry.solutions],
                expect_raises=None, claim=None, cases=_cases(entry),
            ))
    return items
