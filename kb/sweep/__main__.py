"""`python -m kb.sweep tensorflow|keras [--only OPS] [--processes N] [--timeout S] [--no-write]`.

Runs a CPU sweep (kb.sweep.harness) and writes its evidence file under
data/sweeps/<env-id>/<UTC stamp>-<suffix>.json, atomically; the file is never edited.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from importlib import metadata
from pathlib import Path

from kb.sweep import harness

ROOT = Path(__file__).resolve().parents[2]

TF_MODES = {
    "no-seed": "enable_op_determinism(); no tf.random.set_seed; op seeds left at their defaults (raw ops seed=0, seed2=0)",
    "global-seed": "enable_op_determinism(); tf.random.set_seed(1234) before each case; no op seed",
    "op-seed": "enable_op_determinism(); op seed arguments given (raw ops seed=7, seed2=11; public seed=7); no global seed",
}
KERAS_MODES = {
    "no-seed": "no keras.utils.set_random_seed; no layer/initializer/function seed",
    "global-seed": "keras.utils.set_random_seed(1234) before each case; no layer seed",
    "layer-seed": "seed=7 given to the layer, initializer or function; no global seed",
}


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict:
    from kb.verify.env import detect

    env = detect(gpu=False)
    env["packages"] = {n: _version(n) for n in ("tensorflow-cpu", "tensorflow", "keras", "jax", "jaxlib", "torch", "numpy")
                       if _version(n)}
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kb.sweep")
    ap.add_argument("suite", choices=("tensorflow", "keras"))
    ap.add_argument("--only", default="", help="comma-separated op names (a subset, for tests)")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    ap.add_argument("--backends", default="tensorflow,jax", help="keras: backends to sweep")
    ap.add_argument("--out", default="", help="write here instead of data/sweeps/...")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    started_stamp, started = harness.stamp()
    env = environment()
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    plan_args = ["--only", a.only] if a.only else []
    if a.suite == "tensorflow":
        timing, cases = harness.sweep("kb.sweep.tf_worker", plan_args, TF_MODES, a.processes, a.timeout, log=log)
        modes, suffix, framework = TF_MODES, "tensorflow-cpu", "tensorflow"
    else:
        cases, timing = [], {"plan_s": 0.0, "wall_s": 0.0}
        for backend in [b for b in a.backends.split(",") if b]:
            t, c = harness.sweep("kb.sweep.keras_worker", plan_args, KERAS_MODES, a.processes, a.timeout,
                                 env={"KERAS_BACKEND": backend}, log=log)
            for row in c:
                row["backend"] = backend
            cases.extend(c)
            timing[f"{backend}_s"] = t["wall_s"]
            timing["plan_s"] += t["plan_s"]
            timing["wall_s"] += t["wall_s"]
        modes, suffix, framework = KERAS_MODES, "keras", "keras"
    doc = {
        "kind": "sweep",
        "suite": suffix,
        "framework": framework,
        "environment": env,
        "started": started,
        "wall_s": round(timing["wall_s"], 1),
        "timing": timing,
        "processes": a.processes,
        "command": "python -m kb.sweep " + " ".join(argv if argv is not None else sys.argv[1:]),
        "modes": modes,
        "counts": harness.counts(cases),
        "cases": cases,
    }
    if a.out:
        Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
        print(a.out)
    elif not a.no_write:
        print(harness.write(ROOT, env["env_id"], started_stamp, suffix, doc))
    else:
        print(json.dumps(doc["counts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
