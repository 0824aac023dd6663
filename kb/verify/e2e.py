"""`kb verify --e2e`: each framework's full recipe from kb.status, proven on a small model.

The closing slide of the GTC 2019 talk "Determinism in Deep Learning" (S9911): a model with convolution, bias, pooling, an
embedding, dropout and shuffled batches, trained twice without and twice with the recipe.
Per framework: the recipe is the union of kb.status(op, version, device=...).recipe over the
model's ops (OPS), so the proof tests the KB's answer, not a hand-picked switch; each
training runs in a fresh child process (CHILDREN) with the mode's environment switches set
there only (every known switch is first stripped from the inherited environment, as the
verifier runner does). Reported per pair: final-weight hashes, whether they are identical,
churn (fraction of test predictions that differ between the two runs) and the time cost
(recipe train time / default train time). Every framework's result goes into ONE run file
of kind `e2e`.

No recipe code is ever silently dropped: each is recorded with what was done about it (an
environment switch, a call in the child, a practice the child honours, or why it does not
apply); a code nobody can apply makes that pair an error. A training that fails or times out
is an error in its pair, never a crash of the command.

Only the standard library is imported here at module level: `import kb` stays light, and the
frameworks are imported by the children alone.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kb import jsonio

# The model's ops, per framework, as the KB names them (checked with `kb status OP VERSION`).
# Ops the KB does not know are recorded as such in the run file, not hidden.
OPS: dict[str, tuple[str, ...]] = {
    "pytorch": ("torch.nn.Conv2d", "torch.nn.functional.max_pool2d", "torch.nn.Embedding",
                "torch.nn.functional.dropout", "torch.nn.Linear"),
    "tensorflow": ("tf.keras.layers.Conv2D", "tf.nn.conv2d", "tf.nn.bias_add", "tf.keras.layers.MaxPooling2D",
                   "tf.keras.layers.Embedding", "tf.keras.layers.Dropout", "tf.nn.dropout", "tf.keras.layers.Dense",
                   "tf.keras.losses.SparseCategoricalCrossentropy", "tf.data.Dataset.shuffle", "tf.keras.Model.fit"),
    "jax": ("jax.lax.conv_general_dilated", "jax.lax.reduce_window", "jax.numpy.take", "jax.numpy.take_along_axis",
            "jax.random.bernoulli", "jax.numpy.matmul", "jax.jit", "jax.grad"),
}

# The child module that trains the model once, per framework (verifiers/e2e_*.py).
CHILDREN: dict[str, str] = {
    "pytorch": "verifiers.e2e_torch",
    "tensorflow": "verifiers.e2e_tf",
    "jax": "verifiers.e2e_jax",
}

# The framework's global switch, used only when kb.status yields no code for any op (then
# `recipe_from` says so): a recipe pair identical to the default pair would prove nothing.
FALLBACK: dict[str, tuple[str, ...]] = {
    "pytorch": ("PT_DET",),
    "tensorflow": ("EOD", "SEED"),  # with op determinism on, TF wants a global seed (tf.random-seeds)
    "jax": ("XLA_DET",),
}

RUNS_PER_PAIR = 2


def recipe(framework: str, version: str, device: str) -> tuple[tuple[str, ...], str, list[dict[str, Any]]]:
    """(codes, where they came from, kb.status's answer per op) for the framework's model.

    The union of the ops' recipes, in first-seen order. An op whose recipe is None (a source
    without solution, or an unknown status) is named in the origin: the union cannot cover
    it, and the proof may then show the difference that remains."""
    import kb

    codes: list[str] = []
    answers: list[dict[str, Any]] = []
    for op in OPS[framework]:
        try:
            status = kb.status(op, version, framework=framework, device=device)
        except (LookupError, ValueError) as exc:
            answers.append({"op": op, "error": str(exc).split(";")[0]})
            continue
        answers.append({"op": op, "deterministic": status.deterministic,
                        "recipe": None if status.recipe is None else list(status.recipe)})
        for code in status.recipe or ():
            if code not in codes:
                codes.append(code)
    uncovered = [a["op"] for a in answers if a.get("deterministic") is not True and a.get("recipe") is None
                 and "error" not in a]
    unknown = [a["op"] for a in answers if "error" in a]
    notes = []
    if uncovered:
        notes.append(f"no recipe in the KB for {', '.join(uncovered)} (a source without solution, or unknown)")
    if unknown:
        notes.append(f"ops unknown to the KB: {', '.join(unknown)}")
    if codes:
        return tuple(codes), "; ".join(["kb.status"] + notes), answers
    why = f"fallback: kb.status gives no recipe for these ops ({framework} {version}, {device})"
    return FALLBACK[framework], "; ".join([why] + notes), answers


def _tables(framework: str) -> tuple[dict[str, str], dict[str, str]]:
    """(PRACTICES, NOT_APPLICABLE) of the framework's child: the practice codes it honours
    itself and those that do not apply to its model, each with why. The child module imports
    its framework inside train() only, so reading them here stays light; a child that cannot
    be imported has none (its trainings then fail and are recorded as errors)."""
    try:
        child = importlib.import_module(CHILDREN[framework])
    except ImportError:
        return {}, {}
    return dict(getattr(child, "PRACTICES", {})), dict(getattr(child, "NOT_APPLICABLE", {}))


def handled(framework: str) -> tuple[str, ...]:
    """Practice codes the framework's child applies itself or declares not applicable."""
    practices, not_applicable = _tables(framework)
    return tuple(practices) + tuple(not_applicable)


def describe(framework: str, codes: tuple[str, ...]) -> list[dict[str, str]]:
    """What is done about each code, for the run file. Raises UnknownCode (from resolve) for a
    code with no action, or a practice the child neither honours nor declares not applicable."""
    from verifiers.solutions import TABLES, resolve

    practices, not_applicable = _tables(framework)
    resolve(framework, codes, tuple(practices) + tuple(not_applicable))  # the child's own check, made early
    out = []
    for code in codes:
        env, call, practice = TABLES[framework][code]
        if practice and code in practices:
            out.append({"code": code, "how": f"practice: {practices[code]}"})
        elif practice:
            out.append({"code": code, "how": f"not applicable: {not_applicable[code]}"})
        else:
            parts = [f"env {k}={v}" for k, v in env.items()] + ([f"call {call.__name__}"] if call else [])
            out.append({"code": code, "how": " + ".join(parts) or "no action"})
    return out


def _train(root: Path, framework: str, codes: tuple[str, ...], device: str, scale: float, timeout: float) -> dict:
    """One training in a fresh process: the result dict, or {"error": why} (never raises for a
    failing child). Environment switches of every table are stripped first, then this mode's
    are set, so neither the user's shell nor the previous mode leaks into this one."""
    from kb.verify.runner import child_env, crash_message
    from verifiers.solutions import UnknownCode, resolve

    try:
        extra = resolve(framework, codes, handled(framework))[0]
    except UnknownCode as exc:
        return {"error": str(exc)}
    env = child_env(extra, root)
    with tempfile.TemporaryDirectory(prefix="kb-e2e-") as tmp:
        out = os.path.join(tmp, "result.json")
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", CHILDREN[framework], out, ",".join(codes), device, repr(scale)],
                env=env, cwd=str(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
            )
        except OSError as exc:
            return {"error": f"could not start the child: {exc}"}
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"error": f"timed out after {timeout:g} s; killed"}
        try:
            with open(out, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            pass
    return {"error": crash_message(proc.returncode, err)}


def compare(runs: list[dict]) -> dict[str, Any]:
    """A pair's summary: identical weights, churn and mean train time when both runs finished;
    otherwise the runs' errors."""
    entry: dict[str, Any] = {"runs": [{k: v for k, v in r.items() if k != "preds"} for r in runs]}
    if all("preds" in r for r in runs):
        a, b = runs[0]["preds"], runs[1]["preds"]
        entry["weights_identical"] = len({r["weights"] for r in runs}) == 1
        entry["churn"] = round(sum(x != y for x, y in zip(a, b)) / max(len(a), 1), 4)
        entry["train_s"] = round(sum(r["train_s"] for r in runs) / len(runs), 3)
    else:
        entry["error"] = "; ".join(dict.fromkeys(r["error"] for r in runs if "error" in r))
    return entry


def prove(root: Path, framework: str, version: str, device: str, scale: float, timeout: float) -> dict[str, Any]:
    """One framework's result entry for the run file (both pairs, the recipe and its origin)."""
    from verifiers.solutions import UnknownCode

    started = time.perf_counter()
    codes, origin, answers = recipe(framework, version, device)
    how: list[dict[str, str]] = []
    for code in codes:  # one by one, so that a code nobody can apply is named next to the others
        try:
            how += describe(framework, (code,))
        except UnknownCode as exc:
            how.append({"code": code, "how": f"error: {exc}"})
    pairs: dict[str, Any] = {}
    for label, mode_codes in (("default", ()), ("recipe", codes)):
        runs = []
        for i in range(RUNS_PER_PAIR):
            print(f"e2e {framework} [{label}{': ' + '+'.join(mode_codes) if mode_codes else ''}] "
                  f"run {i + 1}/{RUNS_PER_PAIR} ...", end="", file=sys.stderr, flush=True)
            run = _train(root, framework, mode_codes, device, scale, timeout)
            print(f" error: {run['error'][:120]}" if "error" in run else f" {run['train_s']} s, weights {run['weights']}",
                  file=sys.stderr, flush=True)
            runs.append(run)
        pairs[label] = {"solutions": list(mode_codes), **compare(runs)}
    if pairs["default"].get("train_s") and "train_s" in pairs["recipe"]:
        pairs["recipe"]["time_ratio"] = round(pairs["recipe"]["train_s"] / pairs["default"]["train_s"], 2)
    return {
        "source": None, "verifier": f"e2e.{framework}", "framework": framework, "version": version,
        "device": device, "n": RUNS_PER_PAIR, "scale": scale, "recipe": list(codes), "recipe_from": origin,
        "codes": how, "ops": answers, "modes": [], "e2e": pairs,
        "wall_s": round(time.perf_counter() - started, 1),
    }


def frameworks_to_run(asked: list[str], installed: dict[str, str]) -> list[str]:
    """Installed frameworks with an end-to-end child, limited to --framework when given;
    what is asked for but cannot run is said on stderr."""
    names = [f for f in CHILDREN if f in installed and (not asked or f in asked)]
    for f in asked:
        if f not in CHILDREN:
            print(f"kb verify --e2e: no end-to-end proof for {f} (only {', '.join(CHILDREN)})", file=sys.stderr)
        elif f not in installed:
            print(f"kb verify --e2e: {f} is not installed here; skipped", file=sys.stderr)
    return names


def run_e2e(args, root: Path, installed: dict[str, str], devices: dict[str, str]) -> int:
    """Exit 0 when it ran (whatever the outcomes), 1 when nothing could run or every training
    errored (the run file is still written then, with the errors)."""
    from kb.verify import env, runfile
    from verifiers.discover import code_hash

    names = frameworks_to_run(list(args.framework), installed)
    if not names:
        print("kb verify --e2e: nothing to run (none of pytorch, tensorflow, jax is installed or asked for)", file=sys.stderr)
        return 1
    created = runfile.now()
    started = time.perf_counter()
    results = [prove(root, f, installed[f], devices[f], args.scale, args.timeout) for f in names]
    wall = round(time.perf_counter() - started, 1)
    doc = runfile.document(env.detect(gpu=any(devices[f] == "gpu" for f in names)), results, created, code_hash(), "e2e")
    doc["wall_s"] = wall
    path = None if args.no_write else runfile.write(Path(args.out) if args.out else root / runfile.RUNS_DIR, doc, created)
    summary = {r["framework"]: {"version": r["version"], "device": r["device"], "recipe_codes": r["recipe"],
                                "recipe_from": r["recipe_from"], "codes": r["codes"], "wall_s": r["wall_s"], **r["e2e"]}
               for r in results}
    print(jsonio.dumps({"file": str(path) if path else None, "wall_s": wall, "results": summary}, indent=2))
    every_error = all("error" in run for r in results for pair in r["e2e"].values() for run in pair["runs"])
    return 1 if every_error else 0
