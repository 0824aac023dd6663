"""What the operator sweeps ran for ops that no record names: the calls that showed no difference (and
any that did), compiled into the index so that `kb.status` answers them without reading the sweep files.

A sweep (data/sweeps/, kb/verify/sweepfile.py) runs a framework's whole operator catalog; a case that
gave no difference ("0 of N differed") is attached to the records that cover it (kb/verify/merge.py),
but most operators have no record. For those, this module keeps each case that is evidence (`same`,
`fixed`, `raises`, `silent`) with the call facts that ran (kb/verify/sweepfile.py case_call), completed
with the op's plain-literal defaults, so a query can tell which calls the run covers and which it does
not: "no difference seen" holds only for the call that ran, on the device and release measured.

The index holds `seen_marks` (framework -> op -> ((release key, device, compiled), ...): whether any
case matches, without loading the details) and, in kb/_details.py, `seen` (framework -> op -> entries,
the SEEN_* fields of kb/entries.py) and `seen_files` (file -> what the case's Evidence needs of it).
"""

from __future__ import annotations

from typing import Any

from kb.entries import SEEN_FIELDS


def _inputs(case: dict) -> str | None:
    """How the sweep built the inputs that ran (docs/sweep.md, "Inputs"): enlarged how, values, shape."""
    raw: dict = case["call"] if isinstance(case.get("call"), dict) else {}
    parts = []
    if isinstance(raw.get("inputs.enlarged"), str) and raw["inputs.enlarged"] not in ("none", ""):
        parts.append(f"enlarged {raw['inputs.enlarged']}")
    if isinstance(raw.get("inputs.values"), str) and raw["inputs.values"] not in ("as sampled", ""):
        parts.append(f"values {raw['inputs.values']}")
    shape = raw.get("input.shape")
    if isinstance(shape, list) and all(type(n) is int for n in shape) and len(shape) <= 8:
        parts.append("shape [" + ", ".join(str(n) for n in shape) + "]")
    if case.get("numel") is not None and type(case["numel"]) is int:
        parts.append(f"{case['numel']} elements")
    return ", ".join(parts) or None


def _modes(data: dict, case: dict) -> tuple:
    """(mode, distinct, outcome) per mode: what a reader needs to see that nothing differed."""
    from kb.verify import sweepfile

    return tuple((m["mode"], m["distinct"], m["outcome"]) for m in sweepfile.modes_as_evidence(data, case))


def _plain(value: object) -> bool:
    return value is None or type(value) in (bool, int, str) or (type(value) is float and value == value)


def seen_table(catalog: Any, named: dict[str, set[str]]) -> dict[str, Any]:
    """{"seen_marks", "seen", "seen_files"} from every readable sweep file, for ops that `named`
    (framework -> every op and alias a record names) leaves out. Per op, suite, release, device,
    call, pass and dtype the newest file's case is kept."""
    from kb.verify import sweepfile
    from kb.versions import release_key

    newest: dict[tuple, tuple] = {}
    files: dict[str, tuple] = {}
    params: dict[tuple[str, str], tuple[tuple | None, tuple | None]] = {}  # (the op's signature, the one with its defaults)
    defaults_of: dict[str, dict[str, tuple]] = {}
    misstated = sweepfile.reviewed_cases(catalog.sources.values())
    for sweep in sweepfile.sweeps_of(catalog):
        data = sweep.data
        if data is None:
            continue
        framework = data["framework"]
        version, device = sweepfile.version_of(data), sweepfile.device_of(data)
        try:
            key = release_key(version)
        except ValueError:
            continue
        env = data["environment"]
        gpu = env.get("gpu") or {}
        files[sweep.rel] = (sweep.rel, data["suite"], framework, version, env["env_id"], gpu.get("name"),
                            gpu.get("count", 0), env.get("driver"), env.get("cuda"), env.get("cudnn"), data["started"],
                            data["runs_per_mode"])
        for index, case in enumerate(data["cases"]):
            if case["class"] not in sweepfile.EVIDENCE or (sweep.rel, index) in misstated:
                continue
            op = sweepfile.kb_op(case["op"])
            if op in named.get(framework, ()):
                continue  # records answer for it (their evidence is merged by kb/verify/merge.py)
            if (framework, op) not in params:
                own = sweepfile.params_for(framework, op, catalog.root)
                params[(framework, op)] = (own, sweepfile.defaults_for(framework, op, own, catalog.root))
                defaults = sweepfile.with_defaults({}, params[(framework, op)][1])
                defaults_of.setdefault(framework, {})[op] = tuple(sorted((k, v) for k, v in defaults.items() if _plain(v)))
            own, _ = params[(framework, op)]
            facts = sweepfile.case_call(case, data["suite"], own)
            entry = {
                "key": key, "device": device, "facts": tuple(sorted(facts.items())),
                "pass": case.get("pass"), "dtype": case.get("dtype"), "class": case["class"], "file": sweep.rel,
                "case": case["case"], "modes": _modes(data, case), "inputs": _inputs(case),
            }
            slot = (framework, op, data["suite"], key, device, entry["facts"], entry["pass"], entry["dtype"])
            found = newest.get(slot)
            if found is None or files[found[1]["file"]][10] <= data["started"]:
                newest[slot] = (op, entry)
    order = {rel: n for n, rel in enumerate(sorted(files))}
    seen: dict[str, dict[str, list]] = {}
    for (framework, *_), (op, entry) in sorted(newest.items(), key=lambda kv: repr(kv[0])):
        entry["file"] = order[entry["file"]]
        seen.setdefault(framework, {}).setdefault(op, []).append(tuple(entry[f] for f in SEEN_FIELDS))
    marks = {
        fw: {op: tuple(dict.fromkeys((e[0], e[1], any(k == "compiled" for k, _ in e[2])) for e in entries))
             for op, entries in sorted(ops.items())}
        for fw, ops in sorted(seen.items())
    }
    return {
        "seen_marks": marks,
        "seen": {fw: {op: tuple(entries) for op, entries in sorted(ops.items())} for fw, ops in sorted(seen.items())},
        "seen_defaults": {fw: {op: defaults_of[fw][op] for op in sorted(ops)} for fw, ops in sorted(seen.items())},
        "seen_files": tuple(files[rel] for rel in sorted(files)),
    }
