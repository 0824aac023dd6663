"""The processes of one check: an inventory run, the prediction, two runs as written, two
with the recipe applied, and, where a pair differs, two watched runs that name the call.

Every run is a fresh process in its own process group, started with the user's environment
plus the start-up hook on PYTHONPATH; a run past `timeout` is killed with its group, and so
is anything a finished run left behind (DataLoader workers, compile workers). Each run's
folder holds its stdout and stderr, its check.json and its probe log.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

from kb.check import boot
from kb.check.outcome import agreement, finite, pair, read_check, run_summary, time_ratio
from kb.check.outcome import blame as name_split
from kb.check.predict import predict

OURS = {"probes.jsonl", "places.json", "meta.json", boot.CHECK_FILE, boot.INVENTORY_FILE, "stdout.txt", "stderr.txt",
        "sitecustomize.py", "__pycache__", "report.json"}


class CheckError(Exception):
    """Bad input or a program that cannot be checked (exit code 2)."""


def _clear(directory: str) -> None:
    """Remove a previous check's run folder, never one that holds anything else."""
    if not os.path.lexists(directory):
        return
    if os.path.islink(directory) or not os.path.isdir(directory):
        raise CheckError(f"{directory}: exists and is not a folder of an earlier check; choose another --out")
    entries = set(os.listdir(directory))
    if not all(e in OURS or e.endswith(".tmp") for e in entries):
        raise CheckError(f"{directory}: exists and holds files that are not from kb check; choose another --out")
    shutil.rmtree(directory)


def _kill(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_once(cmd: list[str], env: dict, directory: str, timeout: float) -> dict:
    """Run the command once in `directory` (created); returns its summary."""
    _clear(directory)
    os.makedirs(directory)
    start = time.perf_counter()
    rc: int | None
    with open(os.path.join(directory, "stdout.txt"), "wb") as out, open(os.path.join(directory, "stderr.txt"), "wb") as err:
        try:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise CheckError(f"cannot start {cmd[0]!r}: {exc}") from None
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc.pid)
            proc.wait()
            rc = None
        finally:
            _kill(proc.pid)  # what the run left behind: its workers
    seconds = time.perf_counter() - start
    with open(os.path.join(directory, "stderr.txt"), "rb") as handle:
        handle.seek(max(0, os.path.getsize(handle.name) - 4000))
        tail = handle.read().decode("utf-8", "replace")
    return run_summary(directory, rc, seconds, tail)


def check(cmd: list[str], *, out: str, steps: int, inventory_steps: int, timeout: float, blame: str = "all",
          predict_only: bool = False, progress=lambda text: None) -> dict:
    """The whole check (docs/check.md); returns the report (JSON-ready)."""
    if not cmd:
        raise CheckError("no command given; usage: kb check [--steps N] -- python train.py")
    os.makedirs(out, exist_ok=True)
    hook = boot.write_hook(os.path.join(out, "hook"))
    base = dict(os.environ)

    def env(mode: str, directory: str, recipe: tuple = (), watched: bool = False, inventory: str | None = None,
            extra: dict | None = None):
        return boot.run_environment(base, hook_dir=hook, out=directory, mode=mode, steps=steps, recipe=recipe,
                                    watch=watched, inventory=inventory, extra=extra)

    inv_dir = os.path.join(out, "inventory")
    progress(f"inventory: the calls of the first {min(steps, inventory_steps)} step(s) ...")
    inv_run = run_once(cmd, env("inventory", inv_dir, extra={"KB_CHECK_INVENTORY_STEPS": str(inventory_steps)}),
                       inv_dir, timeout)
    inventory = _inventory(inv_dir, inv_run)
    info = read_check(inv_dir) or {}
    versions = dict(info.get("frameworks") or {})
    device = info.get("device")
    prediction = predict(inventory, info.get("settings") or {}, versions, device)
    report: dict = {"format": 1, "command": list(cmd), "steps": steps, "device": device, "frameworks": versions,
                    "inventory": {"run": inv_run, "calls": len(inventory.get("calls", [])),
                                  "jax_functions": inventory.get("jax_functions", []), "compiles": inventory.get("compiles", []),
                                  "loaders": inventory.get("loaders", []), "seeded_at": inventory.get("seeded_at"),
                                  "draws_before_seed": inventory.get("draws_before_seed", {}),
                                  "settings": info.get("settings")},
                    "prediction": prediction, "out": out}
    progress(f"predicted under the recipe ({' + '.join(prediction['applied']) or 'nothing to apply'}): "
             f"{prediction['under_recipe']}" + _ops(prediction))
    if predict_only:
        return finite(report)
    recipe = tuple(prediction["recipe"])
    inventory_file = os.path.join(inv_dir, boot.INVENTORY_FILE)
    runs: dict[str, list[dict]] = {"as_written": [], "recipe": []}
    for label, codes in (("as_written", ()), ("recipe", recipe)):
        for i in (1, 2):
            directory = os.path.join(out, f"{label}{i}")
            progress(f"run {label.replace('_', ' ')} {i}/2 ({steps} steps) ...")
            runs[label].append(run_once(cmd, env("run", directory, codes, inventory=inventory_file), directory, timeout))
    written = pair(runs["as_written"][0], runs["as_written"][1], steps)
    under = pair(runs["recipe"][0], runs["recipe"][1], steps)
    if written["result"] == "failed" and runs["as_written"][0]["rc"] != 0:
        report.update(runs=runs, as_written=written, under_recipe=under)
        raise _Failed(report, "the program failed as written: " + written["why"])
    report.update(runs=runs, as_written=written, under_recipe=under, time=time_ratio(runs["as_written"], runs["recipe"]),
                  agreement=agreement(prediction, written, under), blame={})
    if blame != "none":
        for label, result, codes in (("as_written", written, ()), ("recipe", under, recipe)):
            if result["result"] != "differs" or (blame == "recipe" and label != "recipe"):
                continue
            progress(f"naming the first call that splits ({label.replace('_', ' ')}: two watched runs) ...")
            dirs = [os.path.join(out, f"watch-{label}{i}") for i in (1, 2)]
            for directory in dirs:
                run_once(cmd, env("run", directory, codes, watched=True, inventory=inventory_file), directory, timeout)
            report["blame"][label] = name_split(*dirs)
    return finite(report)


class _Failed(CheckError):
    def __init__(self, report: dict, message: str) -> None:
        super().__init__(message)
        self.report = finite(report)


def _inventory(directory: str, run: dict) -> dict:
    """The inventory run's calls. A program that raised as written (its own switch, say) is
    still checked when the inventory was written: its runs will show the same."""
    from kb import jsonio
    from kb.check.outcome import LIMITS

    path = os.path.join(directory, boot.INVENTORY_FILE)
    if not run["hooked"]:
        raise CheckError("the start-up hook did not run in the command (is it a Python program? python -I, -E "
                         f"and -S ignore the hook); see {directory}/stderr.txt")
    if run["rc"] is None:
        raise CheckError(f"the inventory run did not end within --timeout; see {directory}/stdout.txt")
    if not os.path.isfile(path):
        raise CheckError(f"the program exited with status {run['rc']} as written and wrote no inventory; "
                         f"see {directory}/stderr.txt")
    try:
        data = jsonio.load(path, limits=LIMITS)
    except (jsonio.JsonError, OSError) as exc:
        raise CheckError(f"{path}: not an inventory: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("calls"), list):
        raise CheckError(f"{path}: not an inventory")
    if run["rc"] != 0 and not run.get("raised"):
        raise CheckError(f"the program exited with status {run['rc']} as written (inventory run); "
                         f"see {directory}/stderr.txt")
    if not run["steps"] and not run.get("raised"):
        raise CheckError("no training step was seen in the inventory run: kb check follows PyTorch (optimizer.step(), "
                         "backward()) and JAX (a jitted function that takes a gradient); "
                         f"see {directory}/stdout.txt")
    return data


def _ops(prediction: dict) -> str:
    ops = prediction["raising"] or prediction["differing"]
    return (": " + ", ".join(ops[:4])) if ops else ""
