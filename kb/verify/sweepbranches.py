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

from kb.calls import DTYPES, FACTS, arg_fact, check_arg_fact, value_holds

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
    """op_key of the name before a JAX unit's variant (`name|b:...`). An op_db name (`nn.functional.X`) is the public
    torch.nn.functional.X: data/branches/pytorch-2.11.json names two entries so (binary_cross_entropy, embedding_bag),
    taken by scripts/branch_inventory.py evidence_names from a unit-error case that spelled the op_db name, while
    their cases that ran spell torch.nn.functional.X."""
    name = op.split("|")[0]
    if name.startswith("nn."):
        name = "torch." + name
    return op_key(name)


def op_key(op: str) -> str:
    """One spelling per op: torch.Tensor.X is torch.X; in-place X_ is X."""
    if op.startswith("torch.Tensor."):
        op = "torch." + op[len("torch.Tensor."):]
    head, _, last = op.rpartition(".")
    if last.endswith("_") and not last.endswith("__") and len(last) > 1:
        last = last[:-1]
    return f"{head}.{last}" if head else last


SPARSE_LAYOUTS = ("sparse_coo", "sparse_csr")
"""A PyTorch inventory's `input.layout` of a sparse dispatch key (SparseCUDA, SparseCsrCUDA): the dispatcher takes the
key from every tensor argument, so any argument with that layout selects the kernel (baddbmm's SparseCsrCUDA kernel
takes its CSR operand as batch1, triangular_solve's as A; their self stays dense)."""


def states(when: dict, call: dict) -> bool:
    """Every fact of `when` is stated by the case's call and holds (a missing fact is no evidence); a sparse
    `input.layout` is stated by any tensor argument of that layout (SPARSE_LAYOUTS)."""
    for key, value in when.items():
        if key == "input.layout" and value in SPARSE_LAYOUTS and any(
                k.endswith(".layout") and call[k] == value for k in call):
            continue
        if key == "input.layout" and key not in call:
            call = dict(call, **{key: "strided"})  # a case that ran states its layout, or ran dense
        if key not in call or value_holds(call[key], (value,)) is not True:
            return False
    return True


PAD_MODES = {"torch.nn.ReflectionPad": "reflect", "torch.nn.ReplicationPad": "replicate", "torch.nn.CircularPad": "circular",
             "torch.nn.ConstantPad": "constant", "torch.nn.ZeroPad": "constant"}
"""The F.pad mode a padding module's class fixes: its forward is `return F.pad(input, self.padding, "<mode>")`
(torch/nn/modules/padding.py lines 42, 221, 377, 541 of the torch 2.11.0 wheel; ZeroPad subclasses ConstantPad)."""
CONV_MODULE = ("torch.nn.Conv1d", "torch.nn.Conv2d", "torch.nn.Conv3d", "torch.nn.LazyConv1d", "torch.nn.LazyConv2d",
               "torch.nn.LazyConv3d")
"""Convolution modules whose _conv_forward calls `F.pad(input, ..., mode=self.padding_mode)` when padding_mode is
not 'zeros' (torch/nn/modules/conv.py lines 357-360, 535-538, 705-708 of the torch 2.11.0 wheel)."""


WEIGHT_DTYPE = ("torch.nn.Embedding",)
"""Modules whose forward input is an index tensor and whose dtype branches are their weight's: nn.Embedding's come
from op_db's nn.functional.embedding entry (via `return F.embedding(` at torch/nn/modules/sparse.py:189 of the 2.11.0
wheel), whose cases take the weight as their input (input.dtype bfloat16, args[0] int64 indices), and from module_db's
dtypes, which are the module's parameter dtype."""


def module_facts(op: str, call: dict, dtype: str | None = None) -> dict:
    """A module case's call with the facts its class or constructor fixes for the functional call its forward
    makes: F.pad's `mode` for a padding module (from the class) and for a convolution module built with a
    padding_mode other than 'zeros' (its constructor's `padding_mode`, which the sweep states as `ctor.padding_mode`;
    'zeros' calls no F.pad, so no mode), and for nn.Embedding (WEIGHT_DTYPE) the dtype its branches name: the
    case's dtype, its weight's. A mode the case states itself is kept."""
    if op in WEIGHT_DTYPE and isinstance(dtype, str) and dtype in DTYPES:
        call = dict(call, **{"input.dtype": dtype})  # the module's dtype (its weight's), the case's own dtype
    if "mode" in call:
        return call
    for prefix, mode in PAD_MODES.items():
        if op.startswith(prefix) and op[len(prefix):] in ("1d", "2d", "3d"):
            return dict(call, mode=mode)
    if op in CONV_MODULE and call.get("padding_mode", "zeros") != "zeros":
        return dict(call, mode=call["padding_mode"])
    return call


class Cases:
    """A framework's sweep cases by the names an inventory entry is looked up under (`cases_for`)."""

    def __init__(self, framework: str, sweeps: list[dict], root: Path, classes: tuple[str, ...] | None = None) -> None:
        from kb.verify import sweepfile

        self.by_op: dict[str, list[tuple[dict, dict]]] = {}
        self.by_unit: dict[str, list[tuple[dict, dict]]] = {}  # a JAX unit's own name (jax.numpy.ndarray.at.multiply)
        self.by_catalog: dict[str, list[tuple[dict, dict]]] = {}  # a JAX branch unit (name|b:variant): the cases it ran
        keep = sweepfile.EVIDENCE if classes is None else classes
        params: dict[str, Any] = {}
        for data in sweeps:
            if data.get("framework") != framework:
                continue
            for case in data["cases"]:
                if case["class"] not in keep:
                    continue
                op = sweepfile.kb_op(case["op"])
                if op not in params:
                    own = sweepfile.params_for(data["framework"], op, root)
                    params[op] = (own, sweepfile.defaults_for(data["framework"], op, own, root))
                # the call as it ran: a parameter the case left out took the op's default (docs/calls.md)
                call = sweepfile.with_defaults(sweepfile.case_call(case, data["suite"], params[op][0]), params[op][1])
                call = module_facts(op, call, case.get("dtype"))
                self.by_op.setdefault(_key(op), []).append((case, call))
                if op != case["op"]:
                    self.by_unit.setdefault(_key(case["op"]), []).append((case, call))
                unit = case.get("branch") or case["case"].rsplit("|", 2)[0]
                if "|b:" in str(unit):
                    self.by_catalog.setdefault(unit, []).append((case, call))

    def cases_for(self, op: dict) -> list[tuple[dict, dict]]:
        """(case, call facts) of the cases that ran an inventory entry's op.

        A JAX branch unit's entry (catalog name|b:variant: the primitives of that one call) takes that
        unit's cases; an entry spelled as the function that ran (x.at[i].multiply, jnp.add.at) takes that
        function's cases; the name a record lists (jax.numpy.ndarray.at) takes all of them."""
        if "|b:" in str(op.get("catalog")):
            return self.by_catalog.get(op["catalog"], [])
        return self.by_unit.get(_key(op["op"])) or self.by_op.get(_key(op["op"]), [])


def ran(b: dict, cases: list[tuple[dict, dict]]) -> Counter:
    """The classes of the cases (of the branch's pass) whose call the branch's facts describe."""
    from kb.verify import sweepfile

    return Counter(c["class"] for c, call in cases
                   if sweepfile.passes(b["pass"], c.get("pass", "")) and states(b.get("when", {}), call))


def coverage(inventory: dict, sweeps: list[dict], root: Path, reasons: dict | None = None) -> dict:
    """Per branch id, the classes of the sweep cases that ran it; and the counts. A branch with a
    stated reason it cannot run (`reasons`, from load_reasons) is counted apart; one that has both
    evidence and a reason is listed in `conflicts` (the reason is wrong, or the evidence is)."""
    index = Cases(inventory["framework"], sweeps, root)
    reasons = reasons or {}
    out: dict[str, Counter] = {}
    for op in inventory["ops"]:
        cases = index.cases_for(op)
        for b in op["branches"]:
            out[f"{op['op']}|{op.get('catalog')}|{b['id']}"] = ran(b, cases)
    total = len(out)
    swept = sum(1 for c in out.values() if c)
    classes: Counter[str] = Counter()
    for c in out.values():
        classes.update(c.keys())
    conflicts = sorted(k for k in reasons if out.get(k))
    unrunnable = sum(1 for k in reasons if k in out and not out[k])
    return {"branches": total, "with_evidence": swept, "without": total - swept - unrunnable, "unrunnable": unrunnable,
            "conflicts": conflicts, "by_class": dict(classes), "per_branch": out}


# --- branches that cannot run on the device ------------------------------------------------

UNRUNNABLE = {
    "no-cuda-kernel": "the release has no CUDA kernel for this dtype, layout or call",
    "other-device": "the branch is selected only on another device or build (CPU, ROCm, MPS, XPU)",
    "not-reachable": "the public op never takes this branch: every call it makes fixes the selecting value otherwise",
    "needs-other-hardware": "the branch needs hardware one H100 lacks (several GPUs, another architecture)",
    "raises-on-device": "a GPU sweep case of the call that reaches it raised, with a message saying the release does not "
                        "take this dtype, layout or call (why: names the sweep file under data/sweeps/ and quotes the message)",
    "uninitialised-output": "the branch runs, but its output is uninitialised memory by the op's contract (torch.empty and "
                            "its kin): two runs' bytes differ or agree by chance, so no bitwise comparison is evidence "
                            "(why: names the release's documentation line that says so)",
}
"""Why a branch cannot run on the sweep's device (one H100, the release's CUDA wheel), or, for
`uninitialised-output`, why running it can give no evidence; `why:` says what was read, where. Time,
budget or a missing unit is never one of these: such a branch is missing."""


def reasons_path(inventory_path: Path | str) -> Path:
    """data/branches/pytorch-2.11.json -> data/branches/pytorch-2.11.reasons.yaml"""
    path = Path(inventory_path)
    return path.with_name(path.stem + ".reasons.yaml")


def load_reasons(path: Path | str, inventory: dict) -> dict[str, tuple[str, str]]:
    """Per coverage key (op|catalog|branch id), (reason, why) from a reasons file; {} when there is none.

    Each entry: `op`, optional `catalog` (else every entry of that op), `branches` (ids of that op),
    `unrunnable` (one of UNRUNNABLE) and `why` (what was read, file:line; for `raises-on-device`, the
    sweep file under data/sweeps/ whose case raised, which must exist next to the reasons file's
    data/ folder). ValueError names the file, the entry and the field."""
    import re

    import yaml

    path = Path(path)
    if not path.exists():
        return {}
    where = str(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: not YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("reasons"), list):
        _fail(where, "a reasons file is a mapping with a `reasons:` list")
    entries: dict[str, list[dict]] = {}
    for op in inventory["ops"]:
        entries.setdefault(op["op"], []).append(op)
    out: dict[str, tuple[str, str]] = {}
    for i, r in enumerate(doc["reasons"]):
        at = f"{where}: reasons[{i}]"
        if not isinstance(r, dict):
            _fail(at, "an entry is a mapping")
        extra = sorted(set(r) - {"op", "catalog", "branches", "unrunnable", "why"})
        if extra:
            _fail(at, f"unknown field(s) {', '.join(map(str, extra))}")
        if r.get("unrunnable") not in UNRUNNABLE:
            _fail(at, f"unrunnable must be one of {', '.join(UNRUNNABLE)}, not {r.get('unrunnable')!r}")
        if not isinstance(r.get("why"), str) or len(r["why"].strip()) < 20:
            _fail(at, "why: says what was read and where (20 characters at least)")
        if r["unrunnable"] == "raises-on-device":
            _check_sweep_named(r["why"], path, at)
        if r["unrunnable"] == "uninitialised-output" and not re.search(r"[\w/.-]+\.(py|yaml|h|cpp|cu):\d+", r["why"]):
            _fail(at, "an uninitialised-output reason names the release's file:line that says the output is uninitialised")
        ops = [o for o in entries.get(str(r.get("op")), []) if "catalog" not in r or o.get("catalog") == r["catalog"]]
        if not ops:
            _fail(at, f"op {r.get('op')!r}" + (f" catalog {r['catalog']!r}" if "catalog" in r else "") + " is not in the inventory")
        ids = r.get("branches")
        if not isinstance(ids, list) or not ids or not all(isinstance(b, str) for b in ids):
            _fail(at, "branches: a list of branch ids of that op")
        for bid in ids:
            keys = [f"{o['op']}|{o.get('catalog')}|{bid}" for o in ops if any(b["id"] == bid for b in o["branches"])]
            if not keys:
                _fail(at, f"{r['op']} has no branch {bid!r}")
            for key in keys:
                if key in out:
                    _fail(at, f"branch {bid!r} has a reason twice")
                out[key] = (r["unrunnable"], r["why"].strip())
    return out


def _check_sweep_named(why: str, path: Path, at: str) -> None:
    """A `raises-on-device` reason names the sweep file that raised (data/sweeps/<env>/<file>.json), and it exists."""
    import re

    named = re.findall(r"data/sweeps/[\w.-]+/[\w.:-]+\.json", why)
    if not named:
        _fail(at, "a raises-on-device reason names the sweep file whose case raised (data/sweeps/<env>/<file>.json)")
    root = path.resolve().parent.parent.parent  # data/branches/<file> -> the repository
    for name in named:
        if not (root / name).is_file():
            _fail(at, f"{name} is not a sweep file of this repository")
