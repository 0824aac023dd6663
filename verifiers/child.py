"""Child process entry: `python -m verifiers.child SPEC.json` runs one verifier in one mode,
every case of it (one call each) one after another.

The parent (kb/verify/runner.py) has already put the mode's environment switches into this
process's environment; here the solution calls are applied, the verifier's module is
imported, and the measurement is written as JSON to the spec's `result` path (not stdout:
frameworks print freely). An exception raised by the op or by a solution (e.g. PyTorch's
"does not have a deterministic implementation") is outcome `raised`; a harness problem,
an unknown code or a CUDA error is `error`; a backend that cannot start or memory that ran
out is `env-error` (verifiers/outcomes.py), never evidence. A crash or hang leaves no result
file: the parent reports it (`env-error` for a signal, `error` for a hang).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback


def _classify(exc: BaseException) -> str:
    """`env-error` when the environment failed (verifiers/outcomes.py), `error` for a harness
    problem or a CUDA error, else `raised`: the op or its switch refused."""
    from verifiers.outcomes import ENV_ERROR, environment_failure

    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, MemoryError) or environment_failure(text):
        return ENV_ERROR
    if isinstance(exc, ImportError):
        return "error"
    if "CUDA error" in text or "CUDA_ERROR" in text:
        return "error"
    return "raised"


def _message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= 600 else text[:597] + "..."


def _turn(spec: dict) -> bool:
    """Say "ready" (imports done, inputs built) and wait for the parent's "go".

    The parent lets one child measure at a time (kb/verify/runner.py), so the timed loop never
    shares the device with another verifier's timed loop. Without the pipes (a child started
    by hand) it measures at once.
    """
    ready, go = spec.get("ready_fd"), spec.get("go_fd")
    if ready is None or go is None:
        return True
    try:
        os.write(ready, b"R")
        return os.read(go, 1) == b"G"
    except OSError:
        return False


def _done(spec: dict) -> None:
    """Say "done" as soon as the timed loop is over, so that the next child may measure while
    this one hashes and compares its results, writes them and tears down its CUDA context
    (together often longer than the op itself)."""
    if spec.get("ready_fd") is not None:
        try:
            os.write(spec["ready_fd"], b"D")
        except OSError:
            pass


def _private(spec: dict) -> None:
    """Keep the pipes out of grandchildren (data-loader workers): the parent reads EOF on
    the ready pipe as this process's exit, which an inherited copy would delay."""
    for key in ("ready_fd", "go_fd"):
        if spec.get(key) is not None:
            try:
                os.set_inheritable(spec[key], False)
            except OSError:
                pass


def _case(entry, spec: dict, case: dict):
    """Build one case's callable (inputs on the device); an exception is that case's outcome."""
    import verifiers

    ctx = verifiers.Context(tuple(spec["solutions"]), spec["device"], float(spec.get("scale", 1.0)), case=case)
    return entry.fn(ctx)


def _failure(exc: BaseException) -> dict:
    if os.environ.get("KB_VERIFY_TRACEBACK"):
        traceback.print_exc()
    return {"outcome": _classify(exc), "message": _message(exc)}


def _measure_cases(entry, spec: dict, out: dict) -> None:
    """Every case of this mode, one after another, in this one process.

    Every case's inputs are built before "ready", while other children may still be importing,
    so the turn holds only the timed loops; results are copied to host memory during the turn
    and hashed after "done", for every case at once. A case whose building raised keeps that
    outcome and is not measured.
    """
    from verifiers import measure

    cases = spec.get("cases") or [{"op": None, "call": None}]
    results: list[dict] = [{"outcome": "error", "message": "not measured"} for _ in cases]
    runs: list = [None] * len(cases)
    kept: list[tuple | None] = [None] * len(cases)
    for i, case in enumerate(cases):
        try:
            runs[i] = _case(entry, spec, case)
        except Exception as exc:  # noqa: BLE001 - every failure becomes evidence
            results[i] = _failure(exc)
    if not _turn(spec):
        out["message"] = "the parent went away before this mode's turn to measure"
        return
    out["measure_start"] = time.time()
    try:
        for i, run in enumerate(runs):
            if run is None:
                continue
            try:
                kept[i] = measure.collect(run, int(spec["n"]))
                results[i] = {"outcome": "ok", "message": None}
            except Exception as exc:  # noqa: BLE001
                results[i] = _failure(exc)
                if results[i]["outcome"] in ("error", "env-error") and "CUDA error" in (results[i]["message"] or ""):
                    # A CUDA error poisons the context: the rest cannot run here.
                    for j in range(i + 1, len(cases)):
                        results[j] = {"outcome": "error", "message": f"not run: an earlier case hit {results[i]['message']}"}
                    break
            finally:
                runs[i] = None
    finally:
        out["measure_end"] = time.time()
        _done(spec)
    for i, taken in enumerate(kept):
        if taken is not None:
            results[i].update(measure.summarize(*taken))
    out["cases"] = results
    out.update({k: v for k, v in results[0].items()})


def main(spec_path: str) -> int:
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    _private(spec)
    out: dict = {"outcome": "error", "message": None}
    try:
        import verifiers
        from verifiers.solutions import UnknownCode, resolve

        try:
            importlib.import_module(spec["module"])
            entry = verifiers.REGISTRY[spec["verifier"]]
            _, calls = resolve(entry.framework, tuple(spec["solutions"]), entry.handles)
        except (UnknownCode, KeyError, ImportError) as exc:
            out["message"] = _message(exc)
            raise SystemExit(0) from None
        try:
            for call in calls:
                call()
        except Exception as exc:  # noqa: BLE001 - a switch that raises is evidence
            out.update(_failure(exc))
            raise SystemExit(0) from None
        _measure_cases(entry, spec, out)
    finally:
        tmp = spec["result"] + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(out, handle)
        os.replace(tmp, spec["result"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
