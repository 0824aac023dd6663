"""The branch inventory: every catalog operator's CUDA dispatch branches, each with the source line
that selects it (data/branches/<framework>-<version>.json, written by scripts/branch_inventory.py),
read back and checked here, and matched against the sweep cases that ran each branch.

Why a loader that checks: the inventory is generated, but a hand edit or a half-written file
must not pass as evidence that a branch was read; a branch names its selecting facts in the call
model's terms (docs/calls.md), so a misspelt fact would silently match no case. Every problem is
a ValueError naming the file, the operator and the branch.

`coverage` says, for each branch, which sweep cases ran a call that the branch's facts describe
(the semantics of a record's `when:`: every fact the branch names must be stated by the case and
hold; a case that leaves one out is no evidence for that branch), and their classes. A branch
with no such case has no sweep evidence; docs/sweep.md gives the counts.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from kb.calls import FACTS, arg_fact, check_arg_fact, value_holds

KINDS = ("layout", "python", "backward", "dtype", "value", "library", "rank", "memory_format", "switch", "lowering")
"""What selects a branch: a dispatch key (layout), a Python `if` (python), a gradient formula
(backward), a CUDA dtype (dtype), an argument value (value), cuDNN/cuBLAS/cuSPARSE or native
(library), a rank (rank), a memory format, the determinism switch itself (switch), a JAX lowering rule."""
READS = ("wheel", "signature", "op_db", "code-index", "read_file", "installed", "none")
"""How a branch's source was read: a file of the release's wheel (with its line), the signature
inventory, the op_db dump, the code index (no line claimed), a file at a pinned commit, the installed
release's own lowering registry (file:line), or nothing to read (a dtype XLA compiles alike)."""
TOP = ("framework", "version", "tag", "read", "ops")


def limits():
    from kb.jsonio import Limits

    return Limits(max_bytes=32 * 1024 * 1024, max_nodes=4_000_000)


def load(path: Path | str) -> dict:
    """Read and check one inventory file; ValueError names the file, operator and branch."""
    from kb import jsonio

    path = Path(path)
    try:
        doc = jsonio.load(path, limits=limits(), within=path.resolve().parent)
    except jsonio.JsonError as exc:
        raise ValueError(f"{path}:{exc.line}: {exc.message}") from None
    check(doc, str(path))
    return doc


def _fail(where: str, message: str) -> None:
    raise ValueError(f"{where}: {message}")


def check(doc: Any, where: str) -> None:
    if not isinstance(doc, dict):
        _fail(where, "an inventory is a JSON object")
    missing = [k for k in TOP if k not in doc]
    if missing:
        _fail(where, f"missing top-level field(s): {', '.join(missing)}")
    if doc["framework"] not in ("pytorch", "jax"):
        _fail(where, f"framework must be pytorch or jax, not {doc['framework']!r}")
    if not isinstance(doc["ops"], list):
        _fail(where, "ops must be a list")
    for i, op in enumerate(doc["ops"]):
        at = f"{where}: ops[{i}]"
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or not isinstance(op.get("branches"), list):
            _fail(at, "each operator has `op` (its public name) and `branches` (a list)")
        at = f"{at} {op['op']}"
        seen: set[str] = set()
        for j, b in enumerate(op["branches"]):
            _check_branch(b, f"{at} branches[{j}]", seen)


def _check_branch(b: Any, at: str, seen: set[str]) -> None:
    if not isinstance(b, dict):
        _fail(at, "a branch is an object")
    for key in ("id", "kind", "pass", "kernel", "source"):
        if key not in b:
            _fail(at, f"lacks {key}")
    if b["id"] in seen:
        _fail(at, f"id {b['id']!r} twice in one operator")
    seen.add(b["id"])
    if b["kind"] not in KINDS:
        _fail(at, f"kind {b['kind']!r} is not one of {', '.join(KINDS)}")
    if b["pass"] not in ("forward", "backward"):
        _fail(at, f"pass must be forward or backward, not {b['pass']!r}")
    when = b.get("when", {})
    if not isinstance(when, dict):
        _fail(at, "when must be an object of call facts")
    for key, value in when.items():
        if not isinstance(key, str) or not (key in FACTS or arg_fact(key) or key.endswith(".len") or key.isidentifier()):
            _fail(at, f"when names {key!r}, which is neither a parameter nor a call fact (docs/calls.md)")
        if value is not None and type(value) not in (bool, int, float, str):
            _fail(at, f"when.{key} must be a plain literal, not {type(value).__name__}")
        try:
            check_arg_fact(key, value)
        except ValueError as exc:
            _fail(at, f"when.{key}: {exc}")
    src = b["source"]
    if not isinstance(src, dict) or src.get("read") not in READS:
        _fail(at, f"source.read must be one of {', '.join(READS)}")
    line = src.get("line")
    if line is not None and (type(line) is not int or line < 1):
        _fail(at, f"source.line must be a line number >= 1, not {line!r}")
    if src["read"] in ("wheel", "installed") and (not src.get("file") or line is None):
        _fail(at, f"a branch read in the {src['read']} files names its file and line")


# --- coverage -----------------------------------------------------------------------------


def _key(op: str) -> str:
    """op_key of the name before a JAX unit's variant (`name|b:...`)."""
    return op_key(op.split("|")[0])


def op_key(op: str) -> str:
    """One spelling per op: torch.Tensor.X is torch.X; in-place X_ is X."""
    if op.startswith("torch.Tensor."):
        op = "torch." + op[len("torch.Tensor."):]
    head, _, last = op.rpartition(".")
    if last.endswith("_") and not last.endswith("__") and len(last) > 1:
        last = last[:-1]
    return f"{head}.{last}" if head else last


def states(when: dict, call: dict) -> bool:
    """Every fact of `when` is stated by the case's call and holds (a missing fact is no evidence)."""
    for key, value in when.items():
        if key == "input.layout" and key not in call:
            call = dict(call, **{key: "strided"})  # a case that ran states its layout, or ran dense
        if key not in call or value_holds(call[key], (value,)) is not True:
            return False
    return True


def coverage(inventory: dict, sweeps: list[dict], root: Path) -> dict:
    """Per branch id, the classes of the sweep cases that ran it; and the counts."""
    from kb.verify import sweepfile

    by_op: dict[str, list[tuple[dict, dict]]] = {}
    by_unit: dict[str, list[tuple[dict, dict]]] = {}  # a JAX unit's own name (jax.numpy.ndarray.at.multiply)
    by_catalog: dict[str, list[tuple[dict, dict]]] = {}  # a JAX branch unit (name|b:variant): the cases it ran
    params: dict[str, Any] = {}
    for data in sweeps:
        if data.get("framework") != inventory["framework"]:
            continue
        for case in data["cases"]:
            if case["class"] not in sweepfile.EVIDENCE:
                continue
            op = sweepfile.kb_op(case["op"])
            if op not in params:
                params[op] = sweepfile.params_for(data["framework"], op, root)
            call = sweepfile.case_call(case, data["suite"], params[op])
            by_op.setdefault(_key(op), []).append((case, call))
            if op != case["op"]:
                by_unit.setdefault(_key(case["op"]), []).append((case, call))
            if "|b:" in str(case.get("branch")):
                by_catalog.setdefault(case["branch"], []).append((case, call))
    out: dict[str, Counter] = {}
    for op in inventory["ops"]:
        # A JAX branch unit's entry (catalog name|b:variant: the primitives of that one call) takes that
        # unit's cases; an entry spelled as the function that ran (x.at[i].multiply, jnp.add.at) takes that
        # function's cases; the name a record lists (jax.numpy.ndarray.at) takes all of them.
        if "|b:" in str(op.get("catalog")):
            cases = by_catalog.get(op["catalog"], [])
        else:
            cases = by_unit.get(_key(op["op"])) or by_op.get(_key(op["op"]), [])
        for b in op["branches"]:
            seen = Counter(c["class"] for c, call in cases
                           if sweepfile.passes(b["pass"], c.get("pass", "")) and states(b.get("when", {}), call))
            out[f"{op['op']}|{op.get('catalog')}|{b['id']}"] = seen
    total = len(out)
    swept = sum(1 for c in out.values() if c)
    classes: Counter[str] = Counter()
    for c in out.values():
        classes.update(c.keys())
    return {"branches": total, "with_evidence": swept, "without": total - swept, "by_class": dict(classes), "per_branch": out}
