"""Launches: one fresh set of processes (one per GPU) and one fresh process group per launch.

The parent imports torch once and forks the ranks, so a launch costs CUDA and NCCL start-up,
not a Python and torch import per rank. The parent never touches CUDA (a CUDA context made
before a fork breaks the children). Each launch gets a clean environment: every NCCL variable
the sweep sets is removed first, then the setting's own are set, and the machine's safety
settings (NVLink multicast off) are kept or set. A launch that outlives its deadline is killed,
rank by rank, by the ids this module started; what its ranks wrote so far is kept.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifiers.collectives.table import NCCL_VARIABLES, SAFETY

TRACE = re.compile(r"NCCL INFO (\w+): (\d+) Bytes -> Algo (\S+) proto (\S+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(extra: dict, base: dict | None = None) -> dict:
    """The inherited environment without the sweep's NCCL variables or XLA_FLAGS, plus `extra`;
    the safety settings are kept as the machine set them, or set."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in NCCL_VARIABLES and k != "XLA_FLAGS"}
    for key, value in SAFETY.items():
        env.setdefault(key, value)
    env.update(extra)
    return env


def _rank(target: str, rank: int, world: int, ports: list[int], backend: str, cases: list, folder: str, reps: int,
          env: dict, trace: bool) -> None:
    os.environ.clear()
    os.environ.update(env)
    if trace and backend == "nccl":
        os.environ.update({"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "TUNING",
                           "NCCL_DEBUG_FILE": os.path.join(folder, f"nccl-rank{rank}.log")})
    out = os.open(os.path.join(folder, f"rank{rank}.out"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    if target == "framework":
        from verifiers.collectives.framework import main
    else:
        from verifiers.collectives.ranks import main
    try:
        main(rank, world, ports, backend, cases, folder, reps)
    except BaseException as exc:  # noqa: BLE001 - a rank's failure is data: written, then exit 1
        with open(os.path.join(folder, f"rank{rank}.jsonl"), "a", encoding="utf-8") as log:
            log.write(json.dumps({"event": "crash", "rank": rank, "error": f"{type(exc).__name__}: {exc}"[:600]}) + "\n")
        os._exit(1)
    os._exit(0)


def read_lines(path: Path) -> list[dict]:
    out = []
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def read_trace(path: Path) -> list[list]:
    """(function, bytes, algorithm, protocol, channels) of every collective rank 0 logged."""
    if not path.exists():
        return []
    found = []
    for match in TRACE.finditer(path.read_text(encoding="utf-8", errors="replace")):
        func, size, algo, proto, lo, hi = match.groups()
        found.append([func, int(size), algo, proto, int(hi) - int(lo) + 1])
    return found


def _tail(path: Path, lines: int = 6) -> str:
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return " | ".join(t.strip() for t in text[-lines:])[:800]


def torch_launch(target: str, world: int, extra: dict, cases: list, backend: str, reps: int, timeout: float,
                 trace: bool = False, groups: int = 1) -> dict:
    """Fork `world` ranks of `target` ("collectives" or "framework"), which run `groups` fresh
    process groups one after another, and wait for them."""
    env = clean_env(extra)
    if backend == "nccl" and world < 4 and "CUDA_VISIBLE_DEVICES" not in extra:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(world))
    if target == "framework":
        env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    folder = Path(tempfile.mkdtemp(prefix="kb-coll-"))
    ports: list[int] = []
    while len(ports) < groups:
        port = free_port()
        if port not in ports:
            ports.append(port)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_rank, args=(target, r, world, ports, backend, cases, str(folder), reps, env, trace))
             for r in range(world)]
    started = time.perf_counter()
    for p in procs:
        p.start()
    deadline = started + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.perf_counter()))
    timed_out = any(p.is_alive() for p in procs)
    for p in procs:
        if p.is_alive():
            p.kill()  # only the ranks this launch forked, by their own handles
            p.join(5)
    wall = time.perf_counter() - started
    lines = [line for r in range(world) for line in read_lines(folder / f"rank{r}.jsonl")]
    result = {
        "world": world, "groups": groups, "exitcodes": [p.exitcode for p in procs], "timed_out": timed_out, "wall_s": round(wall, 2),
        "lines": lines, "trace": read_trace(folder / "nccl-rank0.log"),
        "stderr": {r: _tail(folder / f"rank{r}.out") for r in range(world) if (procs[r].exitcode or timed_out)},
    }
    _remove(folder)
    return result


def jax_launch(extra: dict, reps: int, timeout: float, devices: int, cpu: bool) -> dict:
    """One fresh JAX process over the first `devices` devices."""
    env = clean_env(extra)
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    if cpu:
        env["JAX_PLATFORMS"] = "cpu"
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={devices}").strip()
    else:
        env.setdefault("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(devices)))
    folder = Path(tempfile.mkdtemp(prefix="kb-coll-jax-"))
    path = folder / "jax.jsonl"
    started = time.perf_counter()
    timed_out, code, err = False, None, ""
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run([sys.executable, "-m", "verifiers.collectives.jaxcase", str(path), str(reps)], env=env,
                              capture_output=True, text=True, timeout=timeout, cwd=root)
        code, err = proc.returncode, " | ".join(proc.stderr.strip().splitlines()[-6:])[:800]
    except subprocess.TimeoutExpired:
        timed_out = True
    result = {"world": 1, "devices": devices, "exitcodes": [code], "timed_out": timed_out, "wall_s": round(time.perf_counter() - started, 2),
              "lines": read_lines(path), "trace": [], "stderr": {0: err} if code else {}}
    _remove(folder)
    return result


def _remove(folder: Path) -> None:
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
