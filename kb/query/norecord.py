"""What answers an op that no record covers on the queried release and device: a sweep that ran the
call (`seen`), the kernel class read in the framework's code (`elementwise`), the framework's documented
guarantee under its switch (`guarantee`). With none of them the answer is "no known source, not
verified": `deterministic=None`, never True.

The tables come from kb/compile.py: `elementwise` and `kernel_classes` (data/basis/elementwise-*.yaml),
`guarantees` (data/basis/guarantees.yaml), `seen_marks` in kb/_index.py and `seen`/`seen_files` in
kb/_details.py (kb/verify/seen.py), which load only when a mark says a case of the op's release and
device exists.
"""

from kb.entries import (
    SEEN_CASE, SEEN_CLASS, SEEN_DEVICE, SEEN_DTYPE, SEEN_FACTS, SEEN_FILE, SEEN_INPUTS, SEEN_KEY, SEEN_MODES, SEEN_PASS,
)
from kb.model import CodeRead, Evidence, ModeEvidence
from kb.query.evidence import same_release
from kb.query.state import LIMIT, Lazy, detail, memo

calls = Lazy("calls", globals())

_reads: dict[str, tuple] = memo()
_seen: dict[tuple, tuple] = memo()


def code_reads(entries: tuple) -> tuple:
    """CodeRead objects for the index's read entries (kb/compile.py code_read)."""
    return tuple(CodeRead(**{f: r.get(f) for f in CodeRead._fields}) for r in entries)


def elementwise(op: str, framework: str, key: tuple, device: str, idx: dict) -> tuple:
    """(class title, what, listed_from, CodeRead...) per kernel class of `op` that covers the release and
    device: an elementwise kernel, deterministic by construction (data/basis/)."""
    ids = idx.get("elementwise", {}).get(framework, {}).get(op)
    if not ids:
        return ()
    out = []
    for class_id in ids:
        item = idx["kernel_classes"].get(class_id)
        if item is None or not (item["lo"] is None or item["lo"] <= key) or not (item["hi"] is None or key < item["hi"]):
            continue
        if device != "any" and item["device"] not in ("any", device):
            continue
        reads = _reads.get(class_id)
        if reads is None:
            reads = _reads[class_id] = code_reads(item["read"])
        out.append((item["title"], item["what"], item["listed_from"], reads))
    return tuple(out)


def guarantee(framework: str, key: tuple, device: str, idx: dict) -> dict | None:
    """The framework's documented guarantee under its switch that covers the release and device, if any."""
    for item in idx.get("guarantees", {}).get(framework, ()):
        if (item["lo"] is None or item["lo"] <= key) and (item["hi"] is None or key < item["hi"]) and (
                device == "any" or item["device"] in ("any", device)):
            return item
    return None


def _covers(call: dict, full: dict, dtype: object) -> bool:
    """Whether a case that ran with `full` (its call facts and the op's plain-literal defaults) speaks
    for `call`: every fact the call states must be one the case ran with, with the same value."""
    for name, value in call.items():
        if name == "compiled":
            continue  # matched by the caller (eager and compiled cases are different calls)
        if name == "input.dtype" and type(value) is str and value in calls.DTYPES and value not in calls.KINDS:
            if value != dtype:
                return False
            continue
        if name not in full:
            return False
        ran = full[name]
        if (name.endswith(".dtype") and value in calls.KINDS and type(ran) is str
                and calls.DTYPES.get(ran) == value):
            continue  # a case records its exact dtype (float32); a call may state only the kind (float)
        if not calls.same(value, ran):
            return False
    return True


def _evidence(op: str, entry: tuple, files: tuple) -> Evidence:
    path, suite, framework, version, env_id, gpu, gpu_count, driver, cuda, cudnn, date, n = files[entry[SEEN_FILE]]
    return Evidence(
        source=None, verifier=f"sweep:{suite}", env_id=env_id, date=date, file=path, gpu=gpu,
        gpu_count=gpu_count, driver=driver, cuda=cuda, cudnn=cudnn, framework=framework, version=version,
        device=entry[SEEN_DEVICE], n=n,
        modes=tuple(ModeEvidence(mode=mode, solutions=(), outcome=outcome, distinct=distinct, max_abs_diff=None,
                                 max_ulp_diff=None, median_s=None, time_ratio=None, message=None,
                                 same_as_default=None)
                    for mode, distinct, outcome in entry[SEEN_MODES]),
        contradicts=(), reviewed=None, op=op, call=dict(entry[SEEN_FACTS]),
        sweep={"suite": suite, "case": entry[SEEN_CASE], "class": entry[SEEN_CLASS], "pass": entry[SEEN_PASS],
               "dtype": entry[SEEN_DTYPE], "fixes": (), "inputs": entry[SEEN_INPUTS]},
    )


def seen(op: str, framework: str, key: tuple, device: str, call: dict | None, idx: dict) -> tuple:
    """(cases that saw no difference, cases that differed, cases of other calls that ran) of the sweeps
    for `op` on this release (or its series) and device, each an Evidence; `call=None` takes every
    eager case (each speaks for its own call only), a call only the cases whose facts cover it."""
    marks = idx.get("seen_marks", {}).get(framework, {}).get(op)
    if not marks:
        return (), (), ()
    compiled = call is not None and call.get("compiled") is not None
    if not any(same_release(k, key) and (device == "any" or d == device) and c == compiled for k, d, c in marks):
        return (), (), ()
    memo_key = (framework, op, key, device, compiled)
    cases = _seen.get(memo_key)
    if cases is None:
        files = detail(idx, "seen_files", ())
        defaults = dict(detail(idx, "seen_defaults", {}).get(framework, {}).get(op, ()))
        found = []
        for entry in detail(idx, "seen", {}).get(framework, {}).get(op, ()):
            if not same_release(entry[SEEN_KEY], key) or (device != "any" and entry[SEEN_DEVICE] != device):
                continue
            facts = dict(entry[SEEN_FACTS])
            if (facts.get("compiled") is not None) != compiled:
                continue
            found.append(({**defaults, **facts}, entry[SEEN_DTYPE], _evidence(op, entry, files)))
        cases = tuple(found)
        if len(_seen) < LIMIT:
            _seen[memo_key] = cases
    same, differ, other = [], [], []
    for full, dtype, evidence in cases:
        if call is not None and not _covers(call, full, dtype):
            other.append(evidence)
        elif evidence.sweep["class"] == "same":
            same.append(evidence)
        else:
            differ.append(evidence)
    return tuple(same), tuple(differ), tuple(other)
