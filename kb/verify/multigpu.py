"""Verifiers that need several GPUs (one process per GPU): planned here, not by the one-child harness.

A verifier registered with `gpus=N` (N > 1; verifiers/collectives) runs as its own command,
`python -m verifiers.collectives`, which forks one rank per GPU and writes its own run file.
`kb verify` (and so `kb nightly`, which calls it) starts that command where the machine has N
GPUs and the verifier's framework is installed; elsewhere it says "skipped: needs N GPUs" and
runs nothing, which is not a failure.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

COMMAND = ("-m", "verifiers.collectives")
INSTALLED_FOR = {"nccl": "pytorch"}
"""The framework whose package runs a library's verifier (NCCL's collectives run through torch)."""


def plan(found: dict, gpus: int, installed: dict[str, str], *, verifiers: tuple[str, ...] = (),
         frameworks: tuple[str, ...] = ()) -> list[dict]:
    """One entry per multi-GPU verifier in scope: its name, the GPUs it needs, whether it runs here,
    and if not, why ("skipped: needs 4 GPUs (this machine has 0)")."""
    out = []
    for name, entry in sorted(found.items()):
        need = getattr(entry, "gpus", 1) or 1
        if need <= 1 or verifiers and name not in verifiers:
            continue
        if frameworks and entry.framework not in frameworks and INSTALLED_FOR.get(entry.framework) not in frameworks:
            continue
        package = INSTALLED_FOR.get(entry.framework, entry.framework)
        if gpus < need:
            reason = f"skipped: needs {need} GPUs (this machine has {gpus})"
        elif package not in installed:
            reason = f"skipped: needs {package}, which is not installed"
        else:
            reason = None
        out.append({"verifier": name, "framework": entry.framework, "gpus": need, "runs": reason is None,
                     "reason": reason})
    return out


def run(root: Path, out: Path, budget: float = 420.0) -> dict:
    """Run the collectives sweep once (it covers every multi-GPU verifier) and say how it ended."""
    cmd = [sys.executable, *COMMAND, "--out", str(out), "--budget", str(budget)]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    wrote = next((line.split(" ", 2)[1] for line in lines if line.startswith("wrote ")), None)
    return {"command": " ".join(cmd[1:]), "exit": proc.returncode, "file": wrote,
            "message": None if proc.returncode == 0 else " | ".join(proc.stderr.strip().splitlines()[-3:])[:500]}
