"""Which call made the first difference: the walk from the first differing record of a
`watch()` log to the framework calls that can have produced it, ranked by what the
knowledge base says about each call at the version that ran.

Why a walk and not the first differing module: a difference first seen in a gradient was
made by the backward of whatever consumed the forward value, which is often a functional
call between modules (attention inside a block's forward) that no module hook sees. The
log's places say, per module, the calls it made itself with their facts and which of its
inputs, parameters and children's outputs each call's arguments came from
(kb.probe._torch), so:

- X's input differs (kind `input`; everything recorded before it, its parent's input and
  its earlier siblings' outputs among them, did not): X was handed a different input and is
  not a suspect; the suspects are the calls of X's parent that made that input (the calls
  between its children: `F.dropout`, `torch.cat`, ...). With no such call recorded, no call
  is named: the difference came from outside the watched modules' calls;
- the output of a call X made between its children differs (kind `call`, recorded with
  KB_PROBE_CALLS=1): that call;
- forward of X differs (its input and its children's inputs and outputs, recorded before
  it, did not): X's own calls that made its output;
- the gradient arriving at X's output differs (every gradient recorded before it, i.e. at
  the outputs of everything after X in the forward, did not): the backward of a consumer of
  X's output, i.e. a call of X's parent, or a sibling module, that took X's output;
- a parameter's gradient differs: the calls of its module that took that parameter.

Standard library only.
"""

from __future__ import annotations

from kb.probe.kbask import DTYPE_NAMES, KINDS, ask, verdict

# calls that draw from a random generator: they differ between runs whenever the generator's
# state does (an unseeded run, a different number of draws before them), whatever the KB says
# about the op at a fixed seed; among suspects the KB does not tell apart they come first
RANDOM = {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "rrelu",
          "gumbel_softmax", "rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm",
          "bernoulli", "bernoulli_", "multinomial", "normal", "normal_", "uniform_", "exponential_",
          "geometric_", "cauchy_", "log_normal_", "random_", "poisson"}


# calls that only view or move bytes (no arithmetic): they cannot make a difference of their
# own, so they come last whatever the KB says
SHAPE_ONLY = {"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
              "unflatten", "contiguous", "expand", "expand_as", "chunk", "split", "unbind", "t", "narrow", "select",
              "movedim", "detach", "clone", "flip", "roll"}


def _rank(answer: dict) -> tuple[int, int]:
    """Non-deterministic first, then undecided, then no KB record, then deterministic, then
    calls that only move bytes; within each, calls that draw random numbers first."""
    short = answer["op"].rsplit(".", 1)[-1]
    random = 0 if short in RANDOM else 1
    if short in SHAPE_ONLY and answer.get("deterministic") is not False:
        return 4, random
    if "deterministic" not in answer:
        return 2, random
    return {False: 0, None: 1, True: 3}[answer["deterministic"]], random


def _key(rec: dict) -> tuple:
    return (rec["kind"], rec["name"], rec.get("path", ""), rec.get("occ", 0))


def _climb(name: str, first: tuple, differing: dict, places: dict) -> str:
    """A module whose output is its parent's output too carries the same gradient: go up to
    the outermost such module, whose consumers are the ones to look at."""
    rec_a, rec_b = first
    while True:
        parent = places.get(name, {}).get("parent")
        if not parent:
            return name
        pair = differing.get(("dout", parent, rec_a.get("path", ""), rec_a.get("occ", 0)))
        if pair is None or pair[1] is None or rec_b is None:
            return name
        if (pair[0]["hash"], pair[1]["hash"]) != (rec_a["hash"], rec_b["hash"]):
            return name
        name = parent


def _calls(places: dict, module: str, source: str | None, to: str | None = None) -> list[dict]:
    """The calls `module` made itself: those whose arguments came from `source` (None: all),
    and with `to`, those whose results flowed into `to` (a child, or "output"; logs from
    before the data flow "to" was recorded: all)."""
    info = places.get(module, {})
    out = []
    for call in info.get("calls", []):
        if source is not None and source not in call.get("from", []):
            continue
        if to is not None and "to" in call and to not in call["to"]:
            continue
        out.append({"op": call["op"], "call": call.get("call") or {}, "place": module, "shown": call.get("shown")})
    return out


def _compiled(places: dict, module: str) -> list[dict]:
    """A torch.compile'd module as one suspect (watched at its boundary: no call inside it is
    recorded, and compiled code fuses calls): the KB is asked about `torch.compile`."""
    return [{"op": "torch.compile", "call": None, "place": module,
             "shown": f"torch.compile (the compiled code of `{module}`)", "compiled": True}]


def _compiled_owner(places: dict, module: str) -> str | None:
    """The compiled module that `module` is (or runs inside), if any."""
    info = places.get(module, {})
    if info.get("compiled"):
        return module
    return info.get("inside")


def _module_candidate(places: dict, module: str) -> list[dict]:
    """A whole module as a suspect: its own calls that took its input, or its type."""
    if owner := _compiled_owner(places, module):
        return _compiled(places, owner)
    found = _calls(places, module, "input")
    info = places.get(module, {})
    if not found and info.get("type"):
        found = [{"op": info["type"], "call": None, "place": module}]
    return found


def candidates(first: dict, pair: tuple, differing: dict, places: dict) -> tuple[list[dict], str, str]:
    """(suspect calls, the place they are in, how they were found)."""
    kind, name = first["kind"], first["name"]
    info = places.get(name, {})
    if kind == "call":  # KB_PROBE_CALLS: the output of one call between children, its inputs matched
        short = first.get("path", "").lstrip(":").split("[", 1)[0]
        found = [c for c in _calls(places, name, None) if c["op"].rsplit(".", 1)[-1] == short]
        return found, name, (f"the call `{short}` in `{name}` (its output is the first record that differs; "
                             "everything recorded before it, its inputs among them, matched)")
    if kind == "input":
        parent = info.get("parent")
        if not parent:
            return [], name, ("the model's input differs: it was made before the watched model ran (the data, "
                              "or code outside the watched modules)")
        found = _calls(places, parent, None, name)
        if not found:
            return [], parent, (f"`{name}` was handed a different input (so it is not a suspect), and no call of "
                                f"`{parent}` was recorded as making it: no call can be singled out")
        return found, parent, (f"the calls in `{parent}` that made the input of `{name}` (`{name}` was handed a "
                               "different input, so it is not a suspect)")
    if kind in ("forward", "grad") and (owner := _compiled_owner(places, info.get("module", name) if kind == "grad" else name)):
        return _compiled(places, owner), owner, (f"`{owner}` is compiled by torch.compile and watched at its boundary "
                                                  "(its input matched): the difference was made in its compiled code")
    if kind == "forward":
        found = _calls(places, name, None, "output")
        if info.get("leaf") and info.get("type") and not found:  # a leaf whose calls were not recorded
            found = [{"op": info["type"], "call": None, "place": name}] + found
        how = ("its own calls (its input and its children's inputs and outputs were identical)"
               if info.get("children") else "the calls it made")
        return found, name, how
    if kind == "grad":
        module = info.get("module", name)
        found = _calls(places, module, f"param:{info.get('param')}") or _calls(places, module, None)
        mod_info = places.get(module, {})
        if not found and mod_info.get("type"):
            found = [{"op": mod_info["type"], "call": None, "place": module}]
        return found, module, f"the calls of `{module}` that took this parameter"
    # dout: made by the backward of the consumers of `name`'s output
    name = _climb(name, pair, differing, places)
    parent = places.get(name, {}).get("parent")
    if not parent:
        return [], name, "the loss or code outside the watched modules (it consumed the model's output)"
    found = _calls(places, parent, name)
    for child, sources in places.get(parent, {}).get("children", {}).items():
        if child != name and name in sources:
            found += _module_candidate(places, child)
    how = f"the calls in `{parent}` that consumed the output of `{name}` (their backward made this gradient)"
    if not found:
        found = _calls(places, parent, None)
        how = f"the calls in `{parent}` (the data flow to `{name}`'s consumers was not recorded)"
    return found, parent, how


def blame_calls(first: dict, pair: tuple, differing: dict, run) -> dict:
    found, place, how = candidates(first, pair, differing, run.places)
    framework = first.get("framework") or "pytorch"
    version = run.meta.get("frameworks", {}).get(framework)
    device = first.get("device") or ("gpu" if "gpu" in run.meta.get("devices", []) else "cpu")
    answers = []
    seen = set()
    for cand in found:
        key = (cand["op"], repr(sorted((cand["call"] or {}).items(), key=str)))
        if key in seen:
            continue
        seen.add(key)
        answer = ask(cand["op"], framework, version, device, call=cand["call"])
        answer["place"] = cand["place"]
        answer["shown"] = cand.get("shown") or show(cand["op"], cand["call"])
        if cand.get("compiled"):
            answer["compiled"] = True
        answers.append(answer)
    for answer in answers:
        if answer["op"].rsplit(".", 1)[-1] in RANDOM and answer.get("deterministic") is not False:
            answer["random"] = True
            if not answer.get("fixes"):
                answer["fixes"] = _seed_fix()
    answers.sort(key=_rank)
    module = run.places.get(place, {})
    sure = certainty(answers)
    compiled = [a["place"] for a in answers if a.get("compiled")]
    if compiled:
        said = (f"`{compiled[0]}` runs as compiled code (torch.compile), where no single call can be singled out; "
                "run it again with TORCH_COMPILE_DISABLE=1 to watch its modules and calls eagerly (a difference "
                "that goes away then is the compiled code's)")
        sure = said if len(answers) == 1 else f"{sure}; {said}"
    if first["kind"] in ("input", "forward") and len(answers) > 1 and module.get("children") \
            and not _calls_recorded(run, first["step"]) and sum(a.get("deterministic") is False for a in answers) != 1:
        sure += ("; the output of each of these calls was recorded in the first step only: "
                 "`kb probe run --calls` records it every step and names the one")
    return {"place": place, "module": module.get("module"), "type": module.get("type"), "how": how,
            "ops": [a["op"] for a in answers], "framework": framework, "version": version, "device": device,
            "answers": answers, "certainty": sure}


def _calls_recorded(run, step: int) -> bool:
    """Were call outputs recorded in this step (the first step, or every step with KB_PROBE_CALLS)?"""
    return any(r.get("kind") == "call" for r in run.steps.get(step, []))


def _seed_fix() -> list[dict]:
    """The knowledge base's fix for a random draw that differs between runs: seed it."""
    try:
        from kb.query import index

        found = index().get("solutions", {}).get("SEED")
    except Exception:  # a KB without that solution: the blame names no fix
        return []
    if not found:
        return []
    return [{"code": "SEED", "title": found.get("title"), "snippet": found.get("snippet")}]


def certainty(answers: list[dict]) -> str:
    """How sure the blame is, in words."""
    bad = [a for a in answers if a.get("deterministic") is False]
    if len(bad) == 1:
        return (f"`{bad[0]['shown']}` is the only call here the KB knows as non-deterministic"
                + (f" (of {len(answers)} calls)" if len(answers) > 1 else ""))
    if bad:
        return f"one of these {len(bad)} calls the KB knows as non-deterministic: " + ", ".join(f"`{a['shown']}`" for a in bad)
    if not answers:
        return "no call can be singled out"
    if len(answers) == 1:
        return f"`{answers[0]['shown']}` is the only call here; the KB knows no non-determinism in it"
    return f"one of these {len(answers)} calls; the KB knows none of them as non-deterministic here"


def show(op: str, call: dict | None) -> str:
    """A call as people write it: "interpolate(mode='nearest') [backend flash]"."""
    if call is None:
        return op
    short = op.rsplit(".", 1)[-1]
    shown = [f"{k}={v!r}" for k, v in call.items()
             if "." not in k and k != "backend" and v not in KINDS and v not in DTYPE_NAMES]
    text = f"{short}({', '.join(shown)})"
    if call.get("backend"):
        text += f" [backend {call['backend']}]"
    return text


def message(first: dict, blame: dict, words: dict) -> str:
    what = f"{words.get(first['kind'], first['kind'])} `{first['name']}{first.get('path', '')}`"
    text = f"differs first at step {first['step']}, {what}"
    lead = blame["answers"][0] if blame["answers"] else None
    if lead is not None and lead.get("deterministic") is False:
        return text + f": {lead['shown']} in `{lead['place']}`: {verdict(lead)} ({blame['certainty']})"
    if lead is None:
        return text + f": {blame['certainty']}: {blame['how']}"
    if lead.get("random"):
        fixes = " + ".join(f"{f['code']} ({f['title']})" if f.get("title") else f["code"] for f in lead.get("fixes") or [])
        return (text + f": {lead['shown']} in `{lead['place']}` draws random numbers: it differs between runs unless "
                f"its generator is seeded the same" + (f"; fix: {fixes}" if fixes else "") + f" ({blame['certainty']})")
    return text + f"; suspects in `{blame['place']}`: {blame['certainty']}"
