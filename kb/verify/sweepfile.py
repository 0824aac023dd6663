"""Sweep evidence files: data/sweeps/<env-id>/<UTC stamp>-<suite>.json, read back for `kb build`
and `kb validate`.

`kb verify --sweep SUITE` (kb/verify/sweep.py) runs a framework's whole operator catalog by
default and under the determinism switch and writes one JSON file per suite (pytorch-eager,
pytorch-compiled, jax), never edited afterwards. This module is the reader: every file goes
through the bounded JSON reader (kb/jsonio.py), its shape is checked field by field
(kb/shapes.py), and a file that fails is a coded finding with the file and the field (KB012
for a bound, KB002 for the shape), never a traceback; the build then leaves that file out.

It also says what a case *is* in the KB's terms (`case_call`): the sweep records everything
about the call it made (positional arguments, the exact dtype, the input's shape, how inputs
were enlarged); the KB keeps the facts a condition can name (docs/calls.md): the op's own
parameters with literal values, `input.ndim`, `input.dtype` (the exact dtype), and `compiled` for the
compiled suite. Evidence is attached to exactly that call, for the version and device measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.calls import AT_METHODS, DTYPES, arg_fact, check_arg_fact
from kb.memo import MISS

SWEEPS_DIR = "data/sweeps"
SUITES = {"pytorch-eager": "pytorch", "pytorch-compiled": "pytorch", "jax": "jax", "pytorch-branches": "pytorch",
          "jax-branches": "jax"}
CLASSES = ("same", "fixed", "raises", "silent", "differs", "sequence", "error", "skipped")
"""The one vocabulary of every sweep's cases, on the GPU (kb/verify/sweep.py) and on the CPU
(kb/sweep/harness.py):
- same: no mode saw two different results ("0 of N differed", never "deterministic");
- fixed: differed by default, identical under the switch;
- raises: the switch refused the op (the CPU sweeps: some mode raised in every process);
- silent: differed under the switch without raising;
- differs: differed from process to process in a sweep with no switch to set (Keras 3 on JAX or PyTorch);
- sequence: the same in every process, but two calls in one process differed (a seeded random
  sequence: not non-determinism);
- error: not run, or failed for a reason that is not the switch (never evidence);
- skipped: not run (inputs could not be built, or the time budget ran out)."""
CPU_WORDS = {"identical": "same", "differs-within-process-only": "sequence", "raises": "raises", "error": "error",
             "skipped": "skipped"}
"""The CPU sweeps' own words before they wrote CLASSES (files under data/sweeps/ keep them, as
written): each one's class. `differs-across-processes` is `silent` where every mode ran under the
switch (SWITCHED) and `differs` elsewhere."""
SWITCHED = ("tensorflow-cpu", "keras")
"""CPU sweep suites whose every mode ran under `tf.config.experimental.enable_op_determinism()`
(TensorFlow, and Keras 3 on its TensorFlow backend)."""


def cpu_class(word: str, suite: str) -> str:
    """The class (CLASSES) of a CPU sweep case, in either vocabulary; ValueError for another word."""
    if word in CLASSES:
        return word
    if word == "differs-across-processes":
        return "silent" if suite in SWITCHED else "differs"
    if word in CPU_WORDS:
        return CPU_WORDS[word]
    raise ValueError(f"unknown class {word!r}: one of {', '.join(CLASSES)} (or an earlier CPU sweep's "
                     f"{', '.join(sorted({*CPU_WORDS, 'differs-across-processes'}))})")


FINDINGS = ("fixed", "raises", "silent")
"""Classes that say an op is not reproducible by default (or under the switch)."""
EVIDENCE = ("same", "fixed", "raises", "silent")
"""Classes that are evidence about an op; `error` and `skipped` never are."""
MODE_CODES = {
    "pytorch": {"default": (), "switch": ("PT_DET",)},
    "jax": {"default": (), "deterministic_ops": ("XLA_DET",), "exclude_nondeterministic_ops": ("XLA_EXCL",)},
}
"""The sweep's modes as solution codes (data/solutions.yaml): what each mode set."""
SWITCH_MODE = {"pytorch": "switch", "jax": "deterministic_ops"}
COMPILED = {"pytorch-compiled": "inductor"}


def limits():
    """A whole catalog's cases in one file: larger than a run file, still bounded (docs/records.md)."""
    from kb.jsonio import Limits

    return Limits(max_bytes=64 * 1024 * 1024, max_nodes=5_000_000)


class SweepFile:
    __slots__ = ("path", "rel", "data", "problems")

    def __init__(self, path: Path, rel: str, data: Any, problems: list[tuple[int, str, str]]) -> None:
        # problems: (line, code, message)
        self.path, self.rel, self.data, self.problems = path, rel, data, problems


def shape():
    from kb.shapes import ANY, Map, Number, Seq, Text

    opt_text = Text(optional=True)
    count = Number(integer=True, optional=True, minimum=0)
    mode = Map(fields={"runs": count, "distinct": count, "max_abs": ANY, "median_ms": Number(optional=True, minimum=0),
                       "raised": opt_text}, values=ANY)
    fix = Map(fields={"fix": Text(), "distinct": count, "runs": count, "time_ratio": Number(optional=True),
                      "raised": opt_text}, required=("fix",), values=ANY)
    case = Map(
        fields={"op": Text(), "variant": opt_text, "case": Text(), "pass": Text(), "dtype": opt_text,
                "call": Map(values=ANY, optional=True), "numel": Number(optional=True), "modes": Map(values=mode),
                "class": Text(choices=CLASSES), "error": opt_text, "fixes": Seq(fix, optional=True),
                "kernel": Map(values=ANY, optional=True)},
        required=("op", "case", "pass", "modes", "class"), values=ANY,
    )
    environment = Map(
        fields={"env_id": Text(pattern=r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}", what="a name of letters, digits and . _ + -"),
                "gpu": Map(fields={"name": opt_text, "count": count}, optional=True, values=ANY),
                "frameworks": Map(values=Text())},
        required=("env_id", "frameworks"), values=ANY,
    )
    return Map(
        fields={"kind": Text(choices=("sweep",)), "suite": Text(choices=tuple(SUITES)),
                "framework": Text(choices=tuple(sorted(set(SUITES.values())))), "environment": environment,
                "started": Text(pattern=r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", what="a UTC timestamp such as 2026-11-25T23:40:00Z"),
                "wall_s": Number(optional=True), "runs_per_mode": Number(integer=True, minimum=0),
                "device": Text(choices=("cuda", "cpu"), optional=True),
                "modes": Map(values=ANY), "counts": Map(values=Number(integer=True, minimum=0)), "cases": Seq(case)},
        required=("kind", "suite", "framework", "environment", "started", "runs_per_mode", "modes", "counts", "cases"),
        values=ANY,
    )


def problems(data: Any, rel: str | None) -> list[str]:
    """Every reason `kb build` could not trust the file, each naming its field."""
    from kb.shapes import problems as shape_problems

    found = [message for _, message in shape_problems(data, shape())]
    if found or not isinstance(data, dict):
        return found
    if SUITES[data["suite"]] != data["framework"]:
        found.append(f"framework: the suite {data['suite']} is a {SUITES[data['suite']]} sweep, not {data['framework']}")
    if data["framework"] not in data["environment"]["frameworks"]:
        found.append(f"environment.frameworks: no {data['framework']} version, so no release the evidence is about")
    counted: dict[str, int] = {}
    for case in data["cases"]:
        counted[case["class"]] = counted.get(case["class"], 0) + 1
    stated = {k: v for k, v in data["counts"].items() if v}
    if stated != counted:
        found.append(f"counts: {stated} do not match the cases {counted}")
    env_id = data["environment"]["env_id"]
    if rel is not None and not (rel.startswith(f"{SWEEPS_DIR}/{env_id}/") and rel.count("/") == 3
                                and rel.endswith(f"-{data['suite']}.json")):
        found.append(f"a sweep file lies at {SWEEPS_DIR}/<env_id>/<stamp>-<suite>.json; this one's env_id is "
                     f"{env_id!r} and suite {data['suite']!r}")
    return found


# Files of the CPU sweeps of TensorFlow and Keras 3 (`python -m kb.sweep`, docs/sweep-tensorflow.md):
# another format (processes and seed modes, all under the switch) that this GPU evidence reader
# does not take; records cite them by path.
CPU_SWEEP_SUFFIXES = ("-tensorflow-cpu.json", "-keras.json", "-keras-jax.json", "-keras-torch.json")


def load_sweeps(root: Path, sweeps_dir: Path | None = None) -> list[SweepFile]:
    """Every file under data/sweeps/ (or `sweeps_dir`), read within bounds and checked; a file in
    the wrong place or of the wrong kind is listed with its problem, never skipped silently. A file
    of a `sweeps_dir` outside data/sweeps/ is not held to its place there.

    What a file's bytes read as (its data and problems) is remembered under .cache/kb/ (kb/memo.py,
    keyed by the bytes and this reading code): reading 11 MB with the bounded JSON reader and
    checking 9,000 cases' shapes was most of every `kb validate` (3-4 s)."""
    from kb import jsonio, shapes
    from kb.findings import rel as relative
    from kb.memo import Memo
    from kb.untrusted import files_under

    top = sweeps_dir if sweeps_dir is not None else root / SWEEPS_DIR
    memo = Memo(root, "sweeps", Path(__file__), Path(jsonio.__file__), Path(shapes.__file__))
    out = []
    for path in files_under(top) if top.is_dir() else ():  # no recursion: a 1,000-deep chain is no RecursionError
        where = relative(path, root)
        if path.name.startswith(".") or path.name == "README.md":
            continue
        if path.name.endswith(CPU_SWEEP_SUFFIXES):
            # the TensorFlow/Keras CPU sweeps' own format (kb/sweep): cited by records, not GPU evidence;
            # read within bounds all the same, so that a file under such a name is never unread with no word
            bad = _cpu_sweep_problem(path, top, memo)
            if bad is not None:
                out.append(SweepFile(path, where, None, [bad]))
            continue
        if path.suffix != ".json":
            out.append(SweepFile(path, where, None, [(1, "KB002", f"not a sweep file: sweeps are {SWEEPS_DIR}/<env_id>/<stamp>-<suite>.json")]))
            continue
        raw, failed = _raw(path, top)
        if raw is None:
            out.append(SweepFile(path, where, None, [failed] if failed else []))
            continue
        place = where if sweeps_dir is None else None
        key = memo.key("gpu", place or "", raw)
        cached = memo.get(key)
        if cached is MISS:
            try:
                data = jsonio.loads(raw, str(path), limits=limits())
            except jsonio.JsonError as exc:
                cached = (None, [(exc.line, exc.code or "KB002", exc.message)])
            else:
                found = problems(data, place)
                cached = (None if found else data, [(1, "KB002", f"sweep file: {m}") for m in found])
            memo.put(key, cached)
        data, found = cached
        out.append(SweepFile(path, where, data, [tuple(p) for p in found]))
    memo.save()
    return out


def _raw(path: Path, top: Path) -> tuple[bytes | None, tuple[int, str, str] | None]:
    """(the file's bytes, None), or (None, the problem): through kb.untrusted as jsonio.load reads."""
    from kb import untrusted

    try:
        return untrusted.read_bytes(path, limits().max_bytes, top), None
    except untrusted.Refused as exc:
        return None, (1, "KB012", exc.message)
    except OSError as exc:
        return None, (1, "KB002", f"cannot read the file: {exc.strerror or exc}")


def _cpu_sweep_problem(path: Path, top: Path, memo) -> tuple[int, str, str] | None:
    """(line, code, message) when a CPU sweep file is not one: unreadable, over a bound, not
    JSON, or not an object of kind "sweep" whose suite is the one its name says."""
    from kb import jsonio

    suite = next(s for s in CPU_SWEEP_SUFFIXES if path.name.endswith(s))[1:-len(".json")]
    raw, failed = _raw(path, top)
    if raw is None:
        return failed
    key = memo.key("cpu", suite, raw)
    cached = memo.get(key)
    if cached is not MISS:
        return tuple(cached[0]) if cached else None
    try:
        data = jsonio.loads(raw, str(path), limits=limits())
    except jsonio.JsonError as exc:
        bad: tuple | None = (exc.line, exc.code or "KB002", exc.message)
    else:
        bad = None
        if not isinstance(data, dict) or data.get("kind") != "sweep" or data.get("suite") != suite \
                or not isinstance(data.get("cases"), list):
            bad = (1, "KB002", f"not a CPU sweep file: its name says suite {suite!r} (written by python -m kb.sweep), "
                               "but it is not an object with kind 'sweep', that suite and a list of cases")
        else:
            for i, case in enumerate(data["cases"]):
                try:
                    cpu_class(case.get("class") if isinstance(case, dict) else None, suite)  # type: ignore[arg-type]
                except ValueError as exc:
                    bad = (1, "KB002", f"CPU sweep file: case {i}: {exc}")
                    break
    memo.put(key, [bad] if bad else [])
    return bad


def sweeps_of(catalog) -> list[SweepFile]:
    """Cached on the catalog: lint and the compiler read the same files in one command."""
    if catalog.sweeps is None:
        catalog.sweeps = load_sweeps(catalog.root)
    return catalog.sweeps


# --- what a case means to the KB -------------------------------------------------------------

def dtype_kind(name: object) -> str | None:
    """float32, bfloat16, float8_e4m3fn -> float; int64, uint8 -> int; bool; complex64 -> complex."""
    if not isinstance(name, str):
        return None
    name = name.rsplit(".", 1)[-1].lower()
    if name == "bool":
        return "bool"
    if name.startswith("complex"):
        return "complex"
    if name.startswith(("float", "bfloat", "half", "double")):
        return "float"
    if name.startswith(("int", "uint", "long", "short")):
        return "int"
    return None


def _literal(value: object) -> bool:
    return value is None or type(value) in (bool, int, str) or (type(value) is float and value == value)


def case_call(case: dict, suite: str, params: tuple | None) -> dict:
    """The KB call facts of one case (docs/calls.md): parameters by name (positional `args[i]`
    mapped through the op's signature, whose first parameter takes the input), `input.ndim`,
    `input.dtype` as a kind, `compiled` for the compiled suite, `at.method` for JAX's indexed updates. Anything else the sweep noted
    (shapes, how inputs were enlarged, non-literal arguments) is no call fact and is left out."""
    from kb import signatures

    raw = given if isinstance(given := case.get("call"), dict) else {}
    positional = [n for n, _ in params] if params else []
    positional = positional[:next((i for i, n in enumerate(positional) if n.startswith("*")), len(positional))]
    known = set(signatures.names(params)) if params else set()
    # A function's first parameter takes the input; a method's `self` (the input) is not in its
    # signature; a module's signature is its constructor's (the sweep says ctor[i], ctor.name).
    method = ".Tensor." in str(case.get("op")) or ".ndarray." in str(case.get("op"))
    out: dict[str, object] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            continue
        meta = None
        if isinstance(value, dict) and "dtype" in value:  # a tensor argument: its dtype kind (and below, its facts)
            meta = value
            value = dtype_kind(value["dtype"])
            if value is None:
                continue
        if key.startswith("ctor."):
            key = key[5:]
        elif key.startswith("ctor[") and key.endswith("]") and key[5:-1].isdigit():
            at = int(key[5:-1])
            if at < len(positional) and _literal(value):
                out[positional[at]] = value
            continue
        if key == "input.ndim" and type(value) is int and value >= 0:
            out[key] = value
        elif key == "input.dtype":  # the exact dtype (kb/calls.py DTYPES), which satisfies a condition on its kind
            if isinstance(value, str) and value in DTYPES:
                out[key] = value
            elif dtype_kind(value):
                out[key] = dtype_kind(value)
        elif (fact := arg_fact(key)) is not None:  # a tensor argument's facts (the branch sweep's targets.dtype, index.dtype, input.layout ...)
            tensor = fact[0]
            if tensor == "input" or not params or tensor in known or signatures.open_ended(params):
                try:
                    check_arg_fact(key, value)
                except ValueError:
                    continue
                out[key] = value
        elif key.startswith("args[") and key.endswith("]") and key[5:-1].isdigit():
            at = int(key[5:-1]) + (0 if method else 1)
            if at < len(positional) and _literal(value) and positional[at] not in raw:
                out[positional[at]] = value
                _tensor_facts(out, positional[at], meta)
        elif key == "backend" and type(value) is str:
            out[key] = value  # the backend the case forced (attention: flash, efficient, cudnn, math)
        elif key.endswith(".len") and type(value) is int and (not params or key[:-4] in known or signatures.open_ended(params)):
            out[key] = value  # a sequence parameter's length (F.pad's pad.len), a fact records name
        elif key.isidentifier() and _literal(value) and (not params or key in known or signatures.open_ended(params)):
            out[key] = value
            _tensor_facts(out, key, meta)
    if "input.numel" not in out and (count := _count(raw.get("input.shape"))) is not None:
        out["input.numel"] = count  # the element count of the input the case ran (a condition may state a range)
    if "input.dtype" not in out and case.get("dtype") in DTYPES:
        out["input.dtype"] = case["dtype"]
    elif "input.dtype" not in out and dtype_kind(case.get("dtype")):
        out["input.dtype"] = dtype_kind(case.get("dtype"))
    if suite in COMPILED:
        out["compiled"] = COMPILED[suite]
    head, _, update = str(case.get("op")).rpartition(".")
    if head in ("jax.numpy.ndarray.at", "jax.Array.at") and update in AT_METHODS:
        out["at.method"] = update  # the method kb_op drops from the name (x.at[i].add: scatter-add)
        # The JAX sweep calls getattr(x.at[i], method)(v) with no keywords (verifiers/sweep/jax_worker.py):
        # unique_indices is at its default, False (jax/_src/numpy/array_methods.py).
        out.setdefault("unique_indices", False)
    return dict(sorted(out.items()))


def _tensor_facts(out: dict, name: str, meta: dict | None) -> None:
    """A tensor argument the sweep recorded as {"tensor": shape, "dtype": ...}: its exact dtype and rank as
    call facts (`targets.dtype`, `targets.ndim`), unless the case states them itself."""
    if not meta:
        return
    if meta.get("dtype") in DTYPES:
        out.setdefault(f"{name}.dtype", meta["dtype"])
    if isinstance(meta.get("tensor"), list):
        out.setdefault(f"{name}.ndim", len(meta["tensor"]))


def _count(shape: object) -> int | None:
    """The element count of a shape the sweep wrote (a list of whole numbers); None for anything else."""
    if not isinstance(shape, list) or len(shape) > 64 or not all(type(n) is int and n >= 0 for n in shape):
        return None
    count = 1
    for n in shape:
        count *= n
    return count


def kb_op(op: str) -> str:
    """The public name a record lists for a sweep's catalog name: the JAX sweep names each
    indexed-update method (`jax.numpy.ndarray.at.add`), records name the `.at` property; an early
    PyTorch sweep file wrote `torch.torch.ops.aten.X` for `torch.ops.aten.X`."""
    if op.startswith("torch.torch."):  # an early sweep file spelled torch.ops.aten.* with the prefix twice
        op = op[len("torch."):]
    head, _, method = op.rpartition(".")
    if head in ("jax.numpy.ndarray.at", "jax.Array.at") and method.isidentifier():
        return head
    if head == "jax.lax.reduce_window" and method in ("max", "min", "add"):
        return head  # a hand-built unit names its computation, which its facts state (computation=max)
    if op.startswith("jax.numpy.") and method == "at" and head.count(".") == 2:
        return "jax.numpy.ufunc.at"  # jnp.add.at is the ufunc's .at method
    return op


def with_defaults(call: dict, params: tuple | None) -> dict:
    """The call as it ran: the parameters it left out at their plain-literal defaults (docs/calls.md:
    a parameter left out takes the op's default), for deciding which records cover it."""
    from kb import signatures

    out = {}
    for name, default in params or ():
        if not name.startswith("*") and default is not signatures.NO_DEFAULT and default is not signatures.UNKNOWN_DEFAULT:
            out[name] = default
    out.update(call)
    return out


def version_of(data: dict) -> str:
    return str(data["environment"]["frameworks"][data["framework"]])


def device_of(data: dict) -> str:
    return "cpu" if data.get("device") == "cpu" else "gpu"


def params_for(framework: str, op: str, root: Path) -> tuple | None:
    from kb import signatures

    fields = signatures.table(framework, str(root)).get(op)
    return None if fields is None else signatures.parse(fields)


def defaults_for(framework: str, op: str, params: tuple | None, root: Path) -> tuple | None:
    """The signature whose defaults complete a case's call: the op's own, else (a torch function the
    inventory has no signature for, such as torch.put) the same-named Tensor method's."""
    if params is not None or not op.startswith("torch.") or op.startswith("torch.Tensor."):
        return params
    return params_for(framework, "torch.Tensor." + op[len("torch."):], root)


def passes(record_pass: str, case_pass: str) -> bool:
    """A forward case is no evidence about a backward-only record. A backward case runs the op's
    forward too (the gradient is taken of its output), so it also speaks for a forward record."""
    return record_pass in ("both", case_pass) or case_pass not in ("forward", "backward") or (
        record_pass == "forward" and case_pass == "backward")


def covering(records, data: dict, case: dict, call: dict, params: tuple | None = None) -> list[tuple[Any, Any]]:
    """(record, range) for every current record of the sweep's framework whose op, device, pass,
    version and call condition cover this case (kb/verify/cases.py); `params`, the op's signature,
    fills in the defaults of parameters the case left out."""
    from kb.verify.cases import applies
    from kb.versions import range_at

    version, device = version_of(data), device_of(data)
    call = with_defaults(call, params)
    op = kb_op(case["op"])  # once per case, not once per record (half a million calls per `kb validate`)
    out = []
    for record in records:
        if op not in record.ops and op not in record.aliases:
            continue
        if record.withdrawn is not None or record.framework != data["framework"]:
            continue
        if record.device not in ("any", device) or not passes(record.pass_, case.get("pass", "")):
            continue
        try:
            item = range_at(record.status, version)
        except ValueError:
            continue
        if item is None:
            continue
        if applies(record.calls, item.when, op, call) is not True:
            continue
        out.append((record, item))
    return out


def modes_as_evidence(data: dict, case: dict) -> tuple[dict, ...]:
    """The case's modes in run-file terms (ModeEvidence): solution codes, outcome, distinct, time."""
    codes = MODE_CODES[data["framework"]]
    out = []
    base = (case["modes"].get("default") or {}).get("median_ms")
    for name, mode in case["modes"].items():
        raised = mode.get("raised")
        distinct = mode.get("distinct")
        median = mode.get("median_ms")
        out.append({
            "mode": name, "solutions": tuple(codes.get(name, ())),
            "outcome": "raised" if raised else ("ok" if distinct is not None else "error"),
            "distinct": distinct,
            "max_abs_diff": mode.get("max_abs") if type(mode.get("max_abs")) in (int, float) else None,
            "max_ulp_diff": None,
            "median_s": None if median is None else round(median / 1000, 6),
            "time_ratio": round(median / base, 2) if base and median and not raised else None,
            "message": raised, "same_as_default": None,
        })
    return tuple(out)


def reviewed_cases(records: Any) -> set[tuple[str, int]]:
    """(sweep file, case index) of every case a person read and found stated wrongly by its file (a
    record's verify.reviewed[].cases, withdrawn records included: one withdrawn because its sweep cases broke
    the op's contract keeps them there). Such a case is neither an undocumented source nor "seen" evidence."""
    return {(review.run, index) for r in records for review in (r.verify.reviewed if r.verify else ())
            for index in review.cases}


def disagreement(case: dict, ranges: list) -> str | None:
    """Why the covering records do not say what the sweep found (None: one of them does)."""
    klass = case["class"]
    if klass not in FINDINGS:
        return None  # "0 of N differed" contradicts nothing: the sweep's inputs may not show it
    states = []
    for item in ranges:
        if item.deterministic:
            states.append("deterministic by default")
            continue
        effect = item.switch or ("raises" if item.raises else None)
        if klass == "silent" and effect == "silent":
            return None
        if klass == "raises" and effect == "raises":
            return None
        if klass == "fixed" and (effect == "fixes" or (effect is None and item.solutions)):
            return None
        states.append({"silent": "the switch has no effect", "raises": "the switch raises",
                       None: "fixed by " + (" or ".join(item.solutions) or "nothing (NS)")}.get(effect, str(effect)))
    said = {"silent": "differs under the switch without an error", "raises": "the switch raises",
            "fixed": "differs by default and the switch fixes it"}[klass]
    return f"the sweep found that it {said}; the record says {'; '.join(dict.fromkeys(states))}"
