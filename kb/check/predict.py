"""From the inventory to a prediction: the knowledge base's answer for each call (with the
facts it was made with, on the device it ran on), one recipe for the program, and what the
runs will do as written and under that recipe, said before anything else runs.

Per call, each source of non-determinism the knowledge base says applies is, under the
recipe:
- fixed: a recipe code the check can apply (environment or start-up hook) is one of its
  solutions (or implies one);
- raises: it has no fix there and its record says the determinism switch raises for it,
  and the recipe turns that switch on (torch.use_deterministic_algorithms(True));
- still differs: neither; what fixes it is named (a code change, or nothing known).

The program's prediction is the worst of its calls': raises, else differs, else fixed (some
source applied, all fixed), else `unknown`: no call has a known source of non-determinism
and some calls have no record at all (no known source, not verified; never "deterministic"),
else `repeats` (every call answered deterministic on evidence). Runs of `fixed`, `unknown`
and `repeats` are expected to repeat; of `differs`, to differ; of `raises`, to raise.

Standard library plus the knowledge base (`kb.status`, the probe's `ask`).
"""

from __future__ import annotations

from kb.check.boot import applicable

RAISING = frozenset({"PT_DET", "PT_FILL", "PT_SETDET", "XLA_DET", "XLA_EXCL"})  # switches whose raising `switch` describes
SHAPE_ONLY_KINDS = ("view", "reshape", "transpose", "permute", "contiguous", "flatten", "unsqueeze", "squeeze")
# made before the first forward (a module's parameters, filled by its initialisation right after)
UNINITIALIZED = frozenset({"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.Tensor.new_empty"})
ADAPTIVE_MEAN = frozenset({"torch.nn.functional.adaptive_avg_pool1d", "torch.nn.functional.adaptive_avg_pool2d",
                           "torch.nn.functional.adaptive_avg_pool3d"})
ADAPTIVE_MEAN_WHY = ("output size 1: ATen computes it as input.mean() over the pooled dimensions "
                     "(adaptive_avg_pool2d_symint and adaptive_avg_pool3d_symint, AdaptiveAveragePooling.cpp and "
                     "AdaptiveAveragePooling3d.cpp), not with the adaptive pooling kernel; on the H100 with PyTorch "
                     "2.11.0 it neither raised under torch.use_deterministic_algorithms(True) nor differed "
                     "(kb check's workload corpus)")
BASIC_INDEXING = frozenset({"torch.Tensor.__getitem__", "torch.Tensor.__setitem__"})
EXPECT = {"raises": "raises", "differs": "differs", "fixed": "identical", "unknown": "identical", "repeats": "identical"}


def framework_of(op: str) -> str | None:
    if op.startswith("torchvision."):
        return "torchvision"
    if op.startswith("torch."):
        return "pytorch"
    if op.startswith("jax."):
        return "jax"
    return None


def answer(call: dict, versions: dict[str, str]) -> dict:
    """The knowledge base's answer for one recorded call: the probe's `ask` (which drops facts
    the KB does not take, saying so) and the applying sources with their switch and fixes."""
    import kb
    from kb.probe.kbask import ask

    op = call["op"]
    framework = framework_of(op)
    version = versions.get(framework or "")
    device: str = call["device"] if call.get("device") in ("gpu", "cpu") else "gpu"
    out = ask(op, framework, version, device, call=call.get("call") or None)
    out.pop("call", None)
    out["sources_detail"] = []
    if "deterministic" not in out or not version:  # ask answers only for a recorded version
        out["basis"] = None
        return out
    try:
        status = kb.status(op, version, framework=framework, device=device, call=out.get("call_used") or None)
    except (LookupError, ValueError) as exc:
        out["note"] = f"no KB answer: {exc}"
        return out
    out["basis"] = status.basis
    for source in status.sources:
        if source.deterministic is not False or source.applies is False:
            continue
        out["sources_detail"].append({
            "id": source.id, "title": source.title, "pass": source.pass_, "switch": source.switch, "solutions": list(source.solutions),
            "raises": source.raises, "applies": source.applies, "condition": source.condition,
            "depends_on": list(source.depends_on)})
    return out


def _reach(call: dict, sources: list[dict]) -> tuple[list[dict], list[dict]]:
    """What the recorded call rules out beyond the KB's own conditions (facts its call model
    cannot state yet; docs/check.md lists them with their evidence): a source in the backward
    pass needs a gradient to flow through the call (an input that requires grad, with grad
    mode on, seen in the inventory); an advanced-indexing source needs an index tensor
    (`x[:, :4]` indexes with slices only); adaptive average pooling to an output of size 1 is
    a mean, never the adaptive pooling kernel."""
    kept, dropped = [], []
    for source in sources:
        why = None
        if source.get("pass") == "backward" and call.get("grad") is False:
            why = "no gradient flows through this call (no input requires grad)"
        elif call["op"] in BASIC_INDEXING and call.get("index") == "basic":
            why = "basic indexing (slices and integers, no index tensor)"
        elif call["op"] in ADAPTIVE_MEAN and call.get("output_ones") and source["id"].startswith("torch.adaptive-avg-pool"):
            why = ADAPTIVE_MEAN_WHY
        if why:
            dropped.append({"id": source["id"], "why": why})
        else:
            kept.append(source)
    return kept, dropped


def covers(codes, needed, solutions: dict) -> bool:
    """Does one of `codes` (or a code one of them implies) fix a source needing `needed`?"""
    for code in codes:
        if code in needed or set(solutions.get(code, {}).get("implies", ())) & set(needed):
            return True
    return False


def _compile_sources(answered: dict) -> None:
    """torch.compile itself: only its records that name no other op (Inductor's autotuning);
    a record of a compiled kernel (a scan, a scatter) applies through its op's call, which
    the inventory asks about with `compiled` among its facts."""
    from kb.query import index

    records = index()["sources"]
    answered["sources_detail"] = [s for s in answered["sources_detail"]
                                  if set(records.get(s["id"], {}).get("ops", ())) <= {"torch.compile"}]


def pseudo_calls(inventory: dict, settings: dict) -> list[dict]:
    """What is not a tensor call but the knowledge base has records for: DataLoaders with
    workers, cudnn.benchmark left on, torch.compile."""
    out = []
    for loader in inventory.get("loaders", []):
        if loader["call"].get("num_workers"):
            out.append({"op": loader["op"], "call": {"num_workers": loader["call"]["num_workers"]}, "device": "gpu",
                        "shown": f"DataLoader(num_workers={loader['call']['num_workers']})", "count": 1,
                        "program_fixed": bool(loader.get("generator") and loader.get("worker_init_fn"))})
    if settings.get("cudnn_benchmark"):
        out.append({"op": "torch.backends.cudnn.benchmark", "call": None, "device": "gpu",
                    "shown": "torch.backends.cudnn.benchmark = True", "count": 1})
    for compiled in inventory.get("compiles", [])[:1]:
        out.append({"op": "torch.compile", "call": None, "device": "gpu", "count": 1,
                    "shown": f"torch.compile(backend={compiled['backend']!r}, mode={compiled.get('mode')!r})"})
    return out


def program_codes(settings: dict, inventory: dict) -> set[str]:
    """The codes the program applies itself (as written)."""
    codes = set()
    if settings.get("deterministic_algorithms"):
        codes.add("PT_DETW" if settings.get("deterministic_warn_only") else "PT_DET")
    if settings.get("cudnn_deterministic"):
        codes.add("PT_CUDNN_DET")
    if not settings.get("cudnn_benchmark"):
        codes.add("PT_NOBENCH")
    if not inventory.get("draws_before_seed"):
        codes.add("SEED")
    return codes


def predict(inventory: dict, settings: dict, versions: dict[str, str], device: str | None) -> dict:
    """The prediction for a program from its inventory (see the module's docstring)."""
    from kb.query import index, smallest_cover

    idx = index()
    solutions = idx["solutions"]
    calls = [dict(c) for c in inventory.get("calls", [])]
    if device == "gpu":
        calls += pseudo_calls(inventory, settings)
    else:
        calls += [c for c in pseudo_calls(inventory, settings) if c["op"] == "torch.utils.data.DataLoader"]
        for c in calls:
            if c["op"] == "torch.utils.data.DataLoader":
                c["device"] = "cpu"
    findings = []
    unverified: list[dict] = []
    unknown_ops: list[dict] = []
    setup = [c for c in calls if c.get("setup") and c["op"] in UNINITIALIZED]
    calls = [c for c in calls if c not in setup]
    for call in calls:
        got = answer(call, versions)
        if call["op"] == "torch.compile":
            _compile_sources(got)
        call["answer"] = got
        got["sources_detail"], call["not_applying"] = _reach(call, got.get("sources_detail", []))
        if not got.get("sources_detail"):
            if got.get("deterministic") is None or got.get("basis") in (None, "unverified"):
                (unknown_ops if got.get("deterministic") is None and got.get("known") else unverified).append(call)
            continue
        for source in got["sources_detail"]:
            findings.append({"op": call["op"], "shown": call.get("shown", call["op"]), "call": call.get("call"),
                             "device": call.get("device"), "modules": call.get("modules", []), "source": source,
                             "program_fixed": call.get("program_fixed", False)})
    draws = inventory.get("draws_before_seed") or {}
    if draws:
        reseeded = inventory.get("reseeded") or []
        why = f"random draws after {', '.join(reseeded)}() (a seed from the clock)" if reseeded else \
            "random draws before any torch.manual_seed"
        findings.append({"op": ", ".join(sorted(draws)), "shown": why,
                         "call": None, "device": device, "modules": [], "program_fixed": False,
                         "source": {"id": "unseeded random draws", "title": "random numbers drawn from an unseeded generator",
                                    "switch": None, "solutions": ["SEED"], "raises": None, "applies": True,
                                    "condition": None, "depends_on": [], "rule": "probe"}})
    needs = sorted({frozenset(f["source"]["solutions"]) for f in findings if f["source"]["solutions"]}, key=sorted)
    recipe = smallest_cover(needs, solutions, idx["order"]) if needs else ()
    applied = tuple(c for c in recipe if applicable(c))
    own = program_codes(settings, inventory)
    for finding in findings:
        finding["as_written"] = _as_written(finding, own, solutions)
        finding["under_recipe"] = _under(finding, applied, solutions)
    summary = _summary(findings, recipe, applied, calls, unverified, unknown_ops, own)
    summary["setup_uninitialized"] = [c.get("shown", c["op"]) for c in setup]
    return summary


def _as_written(finding: dict, own: set[str], solutions: dict) -> str:
    source = finding["source"]
    if finding.get("program_fixed") or covers(own, source["solutions"], solutions):
        return "fixed"
    if source["switch"] == "raises" and own & RAISING:
        return "raises"
    return "differs"


def _under(finding: dict, applied: tuple, solutions: dict) -> str:
    source = finding["source"]
    if covers(applied, source["solutions"], solutions):
        return "fixed"
    if source["switch"] == "raises" and set(applied) & RAISING:
        return "raises"
    return "differs"


def _summary(findings, recipe, applied, calls, unverified, unknown_ops, own) -> dict:
    def ops(kind: str, key: str) -> list[str]:
        return list(dict.fromkeys(f["op"] for f in findings if f[key] == kind))

    raising, differing = ops("raises", "under_recipe"), ops("differs", "under_recipe")
    if raising:
        verdict = "raises"
    elif differing:
        verdict = "differs"
    elif findings:
        verdict = "fixed"
    elif unverified or unknown_ops:
        verdict = "unknown"
    else:
        verdict = "repeats"
    written_raising, written_differing = ops("raises", "as_written"), ops("differs", "as_written")
    as_written = "raises" if written_raising else "differs" if written_differing else (
        "repeats" if not unverified and not unknown_ops else "unknown")
    fixes = {}
    for f in findings:
        if f["under_recipe"] == "differs":
            fixes[f["op"]] = [{"code": c, "applied_by_check": applicable(c) is not None} for c in f["source"]["solutions"]]
    return {
        "under_recipe": verdict, "expect": EXPECT[verdict], "raising": raising, "differing": differing,
        "fixes_for_differing": fixes, "as_written": as_written,
        "as_written_expect": EXPECT.get(as_written, "identical"), "as_written_ops": written_raising or written_differing,
        "recipe": list(recipe), "applied": list(applied),
        "not_applied": [c for c in recipe if c not in applied], "program_applies": sorted(own),
        "findings": findings, "calls": len(calls),
        "unverified": list(dict.fromkeys(c.get("shown", c["op"]) for c in unverified)),
        "unknown": list(dict.fromkeys(c.get("shown", c["op"]) for c in unknown_ops)),
        "answers": [{"op": c["op"], "shown": c.get("shown"), "call": c.get("call"), "device": c.get("device"),
                     "count": c.get("count"), "modules": c.get("modules", []),
                     "deterministic": c["answer"].get("deterministic"), "basis": c["answer"].get("basis"),
                     "sources": [s["id"] for s in c["answer"].get("sources_detail", [])],
                     "call_used": c["answer"].get("call_used"), "note": c["answer"].get("note"),
                     "grad": c.get("grad"), "not_applying": c.get("not_applying", [])} for c in calls],
    }
