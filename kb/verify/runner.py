"""Run planned modes, each in a fresh child process with its own environment and timeout.

Isolation is the point: environment switches are read at import time by the frameworks,
and a crash, hang, CUDA error or out-of-memory must not take the run down. Every switch
variable any table knows is removed from the inherited environment first, so a user's
shell (or a previous mode) can never leak a switch into the default mode.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from verifiers.solutions import TABLES, UnknownCode, resolve

SWITCHES = {key for table in TABLES.values() for env, _, _ in table.values() for key in env} | {
    "TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC", "TF_CUDNN_USE_FRONTEND", "XLA_FLAGS",
    "CUBLAS_WORKSPACE_CONFIG", "TF_USE_CUDNN_AUTOTUNE",
}


def _limit(memory_mb: int | None):
    if not memory_mb:
        return None

    def apply() -> None:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_mode(
    verifier: str, module: str, framework: str, handles: tuple, codes: tuple[str, ...], *,
    n: int, device: str, scale: float, timeout: float, memory_mb: int | None = None, root: Path,
) -> dict:
    """One mode's measurement: a dict with outcome, distinct, diffs, median_s, message."""
    try:
        extra, _ = resolve(framework, codes, handles)
    except UnknownCode as exc:
        return {"outcome": "error", "message": str(exc)}
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with tempfile.TemporaryDirectory(prefix="kb-verify-") as tmp:
        spec = {
            "verifier": verifier, "module": module, "solutions": list(codes), "n": n,
            "device": device, "scale": scale, "result": os.path.join(tmp, "result.json"),
        }
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        proc = subprocess.Popen(
            [sys.executable, "-m", "verifiers.child", spec_path], env=env, cwd=str(root),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=_limit(memory_mb),
        )
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return {"outcome": "error", "message": f"timed out after {timeout:g} s (hang or too slow); killed"}
        try:
            with open(spec["result"], encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            pass
    tail = (err or b"").decode("utf-8", "replace").strip().splitlines()[-3:]
    code = proc.returncode
    if code is not None and code < 0:
        why = f"crashed: killed by signal {signal.Signals(-code).name}"
    else:
        why = f"crashed: exit status {code}"
    return {"outcome": "error", "message": (why + (": " + " | ".join(tail) if tail else ""))[:600]}


MODE_FIELDS = ("outcome", "distinct", "max_abs_diff", "max_ulp_diff", "median_s", "message", "hashes")


def mode_entry(mode: str, codes: tuple[str, ...], measured: dict) -> dict:
    """A mode in the run file's field order; numbers absent when nothing was measured."""
    entry = {"mode": mode, "solutions": list(codes)}
    for key in MODE_FIELDS:
        entry[key] = measured.get(key)
    return entry
