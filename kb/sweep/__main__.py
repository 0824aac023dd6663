"""`python -m kb.sweep tensorflow|keras [--backends B,..] [--only OPS] [--processes N] [--timeout S] [--no-write]`.

Runs a CPU sweep (kb.sweep.harness) and writes its evidence file under
data/sweeps/<env-id>/<UTC stamp>-<suffix>.json, atomically; the file is never edited. The Keras
sweep writes one file per backend: `-keras.json` (TensorFlow backend), `-keras-jax.json`,
`-keras-torch.json` (kb.verify.sweepfile.CPU_SWEEP_SUFFIXES lists them).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from pathlib import Path

from kb import jsonio
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
# Keras 3's backends as KERAS_BACKEND names them; each backend's sweep is its own file.
KERAS_BACKENDS = ("tensorflow", "jax", "torch")


def keras_suite(backend: str) -> str:
    """The file suffix of one backend's Keras sweep: `keras` (TensorFlow, the first one), `keras-<backend>`."""
    return "keras" if backend == "tensorflow" else f"keras-{backend}"


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
    ap.add_argument("--backends", default="tensorflow,jax,torch", help="keras: backends to sweep (tensorflow, jax, torch)")
    ap.add_argument("--out", default="", help="write here instead of data/sweeps/...")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    env = environment()
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    plan_args = ["--only", a.only] if a.only else []
    command = "python -m kb.sweep " + " ".join(argv if argv is not None else sys.argv[1:])
    backends = [b for b in a.backends.split(",") if b]
    for backend in backends:
        if backend not in KERAS_BACKENDS:
            ap.error(f"unknown Keras backend {backend!r}: choose from {', '.join(KERAS_BACKENDS)}")

    def finish(started_stamp: str, started: str, timing: dict, cases: list[dict], modes: dict[str, str],
               suffix: str, framework: str, backend: str | None) -> None:
        """Write one evidence file as soon as its sweep ends (a later backend's failure loses nothing)."""
        doc = {
            "kind": "sweep",
            "suite": suffix,
            "framework": framework,
            **({"backend": backend} if backend else {}),
            "environment": env,
            "started": started,
            "wall_s": round(timing["wall_s"], 1),
            "timing": timing,
            "processes": a.processes,
            "command": command,
            "modes": modes,
            "counts": harness.counts(cases),
            "cases": cases,
        }
        if a.out:
            out = Path(a.out) if a.suite == "tensorflow" or len(backends) == 1 else \
                Path(a.out).with_name(f"{Path(a.out).stem}-{backend}.json")
            out.write_text(jsonio.dumps(doc, indent=1) + "\n")
            print(out, flush=True)
        elif not a.no_write:
            print(harness.write(ROOT, env["env_id"], started_stamp, suffix, doc), flush=True)
        else:
            print(json.dumps(doc["counts"]), flush=True)

    if a.suite == "tensorflow":
        started_stamp, started = harness.stamp()
        timing, cases = harness.sweep("kb.sweep.tf_worker", plan_args, TF_MODES, a.processes, a.timeout, log=log)
        finish(started_stamp, started, timing, cases, TF_MODES, "tensorflow-cpu", "tensorflow", None)
        return 0
    for backend in backends:  # one file per backend: each is its own process family and its own evidence
        started_stamp, started = harness.stamp()
        timing, cases = harness.sweep("kb.sweep.keras_worker", plan_args, KERAS_MODES, a.processes, a.timeout,
                                      env={"KERAS_BACKEND": backend}, log=log,
                                      switch=backend == "tensorflow")  # the worker sets TensorFlow's switch only
        for row in cases:
            row["backend"] = backend
        timing[f"{backend}_s"] = timing["wall_s"]
        finish(started_stamp, started, timing, cases, KERAS_MODES, keras_suite(backend), "keras", backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
