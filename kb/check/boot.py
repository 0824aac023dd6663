"""The start-up hook of a checked run, the environment each run gets, and what the hook can
apply of a recipe.

Why a `sitecustomize` module: Python imports it at start-up from the first folder on its
path that has one, before the program's first line, in every interpreter that the command
starts (`python train.py`, `python -m pkg.train`, a shell script that starts Python). The
user's code is not edited. Ours runs only in the first Python process of the command: it
removes KB_CHECK_ACTIVE from the environment as it starts, so processes that process starts
(DataLoader workers, compile workers, subprocesses) run unhooked; and it first runs the
`sitecustomize` it shadows, if the environment has one.

Standard library only.
"""

from __future__ import annotations

import os

ENV_ACTIVE = "KB_CHECK_ACTIVE"    # "1": hook the next Python process that starts (then removed)
ENV_ROOT = "KB_CHECK_KB_ROOT"     # the folder that holds the kb package (imported from there)
ENV_MODE = "KB_CHECK_MODE"        # inventory | run
ENV_OUT = "KB_CHECK_OUT"          # this process's folder: check.json (and inventory.json)
ENV_STEPS = "KB_CHECK_STEPS"      # stop after this many training steps
ENV_RECIPE = "KB_CHECK_RECIPE"    # codes the hook applies inside the process, comma-separated
ENV_WATCH = "KB_CHECK_WATCH"      # "1": probe.watch() every top-level module (names the op that split)
ENV_SEED = "KB_CHECK_SEED"        # the seed SEED and PT_DLSEED use
ENV_INVENTORY = "KB_CHECK_INVENTORY"  # the inventory file (the ops under each jitted function, for the blame)

CHECK_FILE = "check.json"
INVENTORY_FILE = "inventory.json"
SEED = 0

HOOK = '''\
# Written by `kb check`: the start-up hook of one checked run (see docs/check.md).
import os as _os
import sys as _sys


def _kb_check_chain():
    """Run the sitecustomize this file shadows, as Python would have without it."""
    import importlib.machinery
    import importlib.util
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def _kb_check_start():
    if _os.environ.pop("KB_CHECK_ACTIVE", "") != "1":
        return
    root = _os.environ.get("KB_CHECK_KB_ROOT")
    if root:  # this check's own kb first (another kb may be installed), then off the path again
        _sys.path.insert(0, root)
    try:
        from kb.check import inside
    finally:
        if root and _sys.path and _sys.path[0] == root:
            del _sys.path[0]
    inside.start()


for _kb_step in (_kb_check_chain, _kb_check_start):
    try:
        _kb_step()
    except BaseException as _kb_exc:  # never into the program: told, and the program goes on
        try:
            print("kb check: start-up hook: %s failed: %s: %s" % (_kb_step.__name__, type(_kb_exc).__name__, _kb_exc),
                  file=_sys.stderr)
        except Exception:
            pass
del _kb_step
'''

# How each recipe code is applied without editing the program: "hook" (inside the process,
# kb/check/switches.py), an environment variable, or not at all (a change to the code).
ENVIRONMENT = {
    "PT_CUBLAS": {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"},
    "CUBLAS_WS": {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"},
    "PT_INDUCTOR_DET": {"TORCHINDUCTOR_DETERMINISTIC": "1"},
    "SEED": {"PYTHONHASHSEED": str(SEED)},
}
XLA_FLAGS = {
    "XLA_DET": "--xla_gpu_deterministic_ops=true",
    "XLA_EXCL": "--xla_gpu_exclude_nondeterministic_ops=true",
    "XLA_AT0": "--xla_gpu_autotune_level=0",
}
IN_PROCESS = ("PT_DET", "PT_DETW", "PT_FILL", "PT_CUDNN_DET", "PT_NOBENCH", "PT_CUDNN", "PT_DLSEED", "PT_SDPA_MATH", "SEED")


def applicable(code: str) -> str | None:
    """How the check applies `code`: "hook", "env", "hook+env", or None (it needs a code change)."""
    env = code in ENVIRONMENT or code in XLA_FLAGS
    hook = code in IN_PROCESS
    if hook and env:
        return "hook+env"
    return "hook" if hook else "env" if env else None


def recipe_environment(codes: tuple[str, ...] | list[str], base: dict[str, str]) -> dict[str, str]:
    """The variables a recipe sets (XLA flags appended to any the user set)."""
    out: dict[str, str] = {}
    for code in codes:
        out.update(ENVIRONMENT.get(code, {}))
        flag = XLA_FLAGS.get(code)
        if flag:
            current = out.get("XLA_FLAGS", base.get("XLA_FLAGS", ""))
            if flag not in current.split():
                out["XLA_FLAGS"] = (current + " " + flag).strip()
    return out


def kb_root() -> str:
    """The folder that holds this kb package (put on the checked program's path, last)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_hook(folder: str) -> str:
    """Write the start-up hook into `folder` (created); returns the folder for PYTHONPATH."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "sitecustomize.py")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(HOOK)
    os.replace(tmp, path)
    return folder


def run_environment(base: dict[str, str], *, hook_dir: str, out: str, mode: str, steps: int,
                    recipe: tuple[str, ...] = (), watch: bool = False, inventory: str | None = None,
                    extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of one checked run: the user's, the hook on PYTHONPATH (first), the
    check's settings, and the recipe's variables."""
    env = dict(base)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = hook_dir + (os.pathsep + path if path else "")
    env.update({ENV_ACTIVE: "1", ENV_ROOT: kb_root(), ENV_MODE: mode, ENV_OUT: os.path.abspath(out),
                ENV_STEPS: str(steps), ENV_SEED: str(SEED)})
    in_process = [c for c in recipe if c in IN_PROCESS]
    if in_process:
        env[ENV_RECIPE] = ",".join(in_process)
    else:
        env.pop(ENV_RECIPE, None)
    if watch:
        env[ENV_WATCH] = "1"
    else:
        env.pop(ENV_WATCH, None)
    if inventory:
        env[ENV_INVENTORY] = os.path.abspath(inventory)
    env.update(recipe_environment(recipe, base))
    if mode == "inventory":
        env["TORCH_COMPILE_DISABLE"] = "1"  # compiled modules run eagerly: every call is seen
    env.update(extra or {})
    return env
