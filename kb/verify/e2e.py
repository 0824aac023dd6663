"""`kb verify --e2e`: the framework's full recipe from kb.status, proven on a small model.

Two trainings without and two with the recipe, each in a fresh process (env switches
applied there only); reported: final-weight hashes, churn (fraction of test predictions
that differ between the two runs of a pair, seed 002) and the time cost. Writes a run
file of kind `e2e`. PyTorch only so far (verifiers/e2e_torch.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

OPS = {"pytorch": ("torch.nn.Conv2d", "torch.nn.functional.max_pool2d", "torch.nn.Embedding", "torch.nn.functional.dropout")}


def recipe(framework: str, version: str, device: str) -> tuple[tuple[str, ...], str]:
    """Union of kb.status recipes for the model's ops; PT_DET when the KB has none yet."""
    import kb

    codes: list[str] = []
    for op in OPS[framework]:
        try:
            for code in kb.status(op, version, framework=framework, device=device).recipe or ():
                if code not in codes:
                    codes.append(code)
        except (LookupError, ValueError):
            continue
    if codes:
        return tuple(codes), "kb.status"
    return ("PT_DET",), "fallback: the KB has no PyTorch recipe for these ops yet"


def _train(root: Path, codes: tuple[str, ...], device: str, timeout: float) -> dict:
    from kb.verify.runner import SWITCHES
    from verifiers.solutions import resolve

    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(resolve("pytorch", codes, ())[0])
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        try:
            proc = subprocess.run([sys.executable, "-m", "verifiers.e2e_torch", out, ",".join(codes), device],
                                  env=env, cwd=root, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:g} s"}
        if not os.path.exists(out):
            return {"error": " | ".join(proc.stderr.strip().splitlines()[-3:])[:500]}
        return json.load(open(out, encoding="utf-8"))


def run_e2e(args, root: Path, installed: dict[str, str], devices: dict[str, str]) -> int:
    from kb.verify import env, runfile
    from verifiers.discover import code_hash

    if "pytorch" not in installed:
        print("kb verify --e2e: PyTorch is not installed (the only framework with an end-to-end proof so far)", file=sys.stderr)
        return 1
    device = devices["pytorch"]
    codes, origin = recipe("pytorch", installed["pytorch"], device)
    created = runfile.now()
    pairs = {}
    for label, mode_codes in (("default", ()), ("recipe", codes)):
        runs = [_train(root, mode_codes, device, args.timeout) for _ in range(2)]
        entry = {"solutions": list(mode_codes), "runs": [{k: v for k, v in r.items() if k != "preds"} for r in runs]}
        if all("preds" in r for r in runs):
            a, b = runs[0]["preds"], runs[1]["preds"]
            entry["weights_identical"] = runs[0]["weights"] == runs[1]["weights"]
            entry["churn"] = round(sum(x != y for x, y in zip(a, b)) / len(a), 4)
            entry["train_s"] = round(sum(r["train_s"] for r in runs) / 2, 3)
        pairs[label] = entry
    if "train_s" in pairs["default"] and "train_s" in pairs["recipe"] and pairs["default"]["train_s"]:
        pairs["recipe"]["time_ratio"] = round(pairs["recipe"]["train_s"] / pairs["default"]["train_s"], 2)
    doc = runfile.document(env.detect(gpu=device == "gpu"), [{
        "source": None, "verifier": "e2e.pytorch", "framework": "pytorch", "version": installed["pytorch"],
        "device": device, "n": 2, "recipe": list(codes), "recipe_from": origin, "modes": [], "e2e": pairs,
    }], created, code_hash(), "e2e")
    path = None if args.no_write else runfile.write(Path(args.out) if args.out else root / runfile.RUNS_DIR, doc, created)
    print(json.dumps({"file": str(path) if path else None, "recipe_codes": codes, "recipe_from": origin, **pairs}, indent=2))
    return 0
