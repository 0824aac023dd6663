"""The collectives sweep: NCCL collectives, DDP, FSDP2, a MoE step and JAX collectives on several GPUs.

    PYTHONPATH=. python -m verifiers.collectives --out data/runs            # 4 GPUs, NCCL
    PYTHONPATH=. python -m verifiers.collectives --backend gloo --sizes 1024,4096 --out /tmp/r   # CPU dry run

Each launch forks one process per GPU (verifiers/collectives/launch.py) with a fresh process group
and one setting's NCCL variables; each setting gets up to --launches launches, round by round, so
that a --budget (seconds) that runs out still leaves every setting measured once. Writes ONE run
file <out>/<env-id>/<stamp>.yaml (kind `collectives`) with the environment (NCCL version, the
GPU topology from `nvidia-smi topo -m`, driver, torch and JAX versions) and, per collective and
per framework case, each setting's repeats (`distinct`) apart from its agreement with the
defaults (`same_as_default`), and the settings that failed with NCCL's error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from verifiers.collectives import table


def _args(argv):
    p = argparse.ArgumentParser(prog="python -m verifiers.collectives", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="data/runs", help="folder for the run file (default data/runs)")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto",
                   help="nccl on GPUs (auto: when nvidia-smi lists 4); gloo: CPU processes, the same code path")
    p.add_argument("--budget", type=float, default=420.0, help="seconds for all launches (default 420)")
    p.add_argument("--launches", type=int, default=None,
                   help="launches (fresh processes) per job, at most (default: table.LAUNCHES, else 1)")
    p.add_argument("--groups", type=int, default=table.GROUPS,
                   help=f"fresh process groups in each launch of torch ranks (default {table.GROUPS})")
    p.add_argument("--timeout", type=float, default=150.0, help="seconds one launch may take before it is killed")
    p.add_argument("--settings", default=None, help="comma-separated collective settings (default: all)")
    p.add_argument("--framework-settings", default=None, help="comma-separated framework settings (default: all)")
    p.add_argument("--jax-settings", default=None, help="comma-separated JAX settings (default: all)")
    p.add_argument("--sizes", default=None, help="comma-separated element counts (default: 1K to 64M)")
    p.add_argument("--no-framework", action="store_true")
    p.add_argument("--no-jax", action="store_true")
    p.add_argument("--raw", default=None, help="also write every launch's raw data to this JSON file")
    return p.parse_args(argv)


def _pick(all_settings, names: str | None, key=lambda s: s[0]):
    if not names:
        return tuple(all_settings)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = {key(s): s for s in all_settings}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise SystemExit(f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return tuple(known[n] for n in wanted)


def gpu_count() -> int:
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def topology() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    try:
        return subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=30).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def torch_nvls_guard() -> bool | None:
    """Whether the installed libtorch_cuda holds ProcessGroupNCCL's deterministic-mode NVLS guard
    (it sets NCCL_ALGO=^NVLS under torch.use_deterministic_algorithms(True) when NCCL_ALGO is unset)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.origin is None:
            return None
        lib = Path(spec.origin).parent / "lib" / "libtorch_cuda.so"
        if not lib.exists():
            return None
        needle = b"disabling NVLS algorithm in NCCL which can lead to non-deterministic reduction"
        with open(lib, "rb") as handle:
            tail = b""
            while chunk := handle.read(1 << 24):
                if needle in tail + chunk:
                    return True
                tail = chunk[-len(needle):]
        return False
    except (OSError, AttributeError):
        return None


class Plan:
    """The jobs (kind, setting) and what each launch of them gave, round by round, within a budget."""

    def __init__(self, args, backend: str) -> None:
        self.args, self.backend = args, backend
        sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else table.SIZES
        self.sizes = sizes
        self.cases = [(c, d, s) for c in table.COLLECTIVES for d in table.DTYPES for s in sizes]
        jobs = [("collectives", s) for s in _pick(table.SETTINGS, args.settings)]
        if not args.no_framework:
            jobs += [("framework", s) for s in _pick(table.FRAMEWORK_SETTINGS, args.framework_settings)]
        if not args.no_jax:
            jobs += [("jax", s) for s in _pick(table.JAX_SETTINGS, args.jax_settings)]
        # The defaults first in each round: their repeats are the question every other setting is read against.
        first = [j for j in jobs if j[1][0] == "default"]
        self.jobs = first + [j for j in jobs if j not in first]
        self.launches: dict[tuple[str, str], list[dict]] = {}
        self.notes: dict[tuple[str, str], str] = {}

    def wanted(self, key: tuple[str, str]) -> int:
        return self.args.launches if self.args.launches is not None else table.LAUNCHES.get(key, 1)

    def run(self) -> float:
        started = time.perf_counter()
        estimate = {"collectives": 20.0, "framework": 30.0, "jax": 25.0}
        rounds = max(self.wanted((k, s[0])) for k, s in self.jobs)
        for round_ in range(rounds):
            for kind, setting in self.jobs:
                key = (kind, setting[0])
                done = self.launches.get(key, [])
                if round_ >= self.wanted(key):
                    continue
                spent = [launch["wall_s"] for launch in done] or [estimate[kind]]
                if time.perf_counter() - started + max(spent) > self.args.budget:
                    self.notes[key] = f"launch {round_ + 1} not run: the {self.args.budget:g} s budget was spent"
                    continue
                launch = self.launch(kind, setting, trace=round_ == 0)
                self.launches.setdefault(key, []).append(launch)
                estimate[kind] = max(estimate[kind] if not done else 0, launch["wall_s"])
                print(f"[{time.perf_counter() - started:6.1f}s] {kind} {setting[0]!r} launch {round_ + 1}: "
                      f"{launch['wall_s']} s, {_status(launch)}", flush=True)
        return time.perf_counter() - started

    def launch(self, kind: str, setting, trace: bool) -> dict:
        from verifiers.collectives import launch

        if kind == "jax":
            name, env, _ = setting
            return launch.jax_launch(env, table.REPS, self.args.timeout, devices=4, cpu=self.backend == "gloo")
        name, world, env, _ = setting
        if kind == "framework":
            framework = [dict(c, small=self.backend == "gloo") for c in table.FRAMEWORK_CASES]
            return launch.torch_launch("framework", world, env, framework, self.backend, table.REPS, self.args.timeout,
                                       groups=self.args.groups)
        cases = [list(c) for c in self.cases]
        if world != 4:  # the data-movement collectives of 2 ranks carry other data: not comparable, not run
            cases = [c for c in cases if c[0] in table.REDUCING]
        failed = self._failed(kind, name)
        cases = [c for c in cases if c[0] not in failed]
        return launch.torch_launch("collectives", world, env, cases, self.backend, table.REPS, self.args.timeout, trace,
                                   groups=self.args.groups)

    def _failed(self, kind: str, name: str) -> set[str]:
        """Collectives NCCL refused under this setting in an earlier launch: not asked again."""
        out = set()
        for launch in self.launches.get((kind, name), []):
            for line in launch["lines"]:
                if line.get("error") and "case" in line:
                    out.add(line["case"].split(":")[0])
        return out

    def merged(self, kind: str) -> dict:
        from verifiers.collectives import aggregate

        out = {}
        for (k, name), launches in self.launches.items():
            if k != kind:
                continue
            out[name] = {"cases": aggregate.per_setting(launches), "launches": len(launches),
                         "groups": sum(launch.get("groups") or 1 for launch in launches),
                         "devices": launches[0].get("devices"), "note": self.notes.get((k, name))}
        # Cases refused in the first launch and so not asked again stay refused in the merge.
        return out


def _status(launch: dict) -> str:
    ok = sum(1 for line in launch["lines"] if "prints" in line and line.get("rank") == 0)
    errors = {line["error"][:120] for line in launch["lines"] if line.get("error")}
    text = f"{ok} case(s) ok"
    if errors:
        text += f", errors: {sorted(errors)[:2]}"
    if launch["timed_out"]:
        text += ", TIMED OUT"
    if any(code not in (0, None) for code in launch["exitcodes"]):
        text += f", exit codes {launch['exitcodes']}"
    return text


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    gpus = gpu_count()
    backend = args.backend if args.backend != "auto" else ("nccl" if gpus >= 4 else "gloo")
    if backend == "nccl" and gpus < 4:
        print(f"skipped: needs 4 GPUs (this machine has {gpus})", file=sys.stderr)
        return 3
    import torch  # noqa: F401 - imported once here, so that every forked rank has it (no CUDA call here)

    from kb.verify import env, runfile
    from verifiers.collectives import results
    from verifiers.discover import code_hash

    created = runfile.now()
    plan = Plan(args, backend)
    wall = plan.run()
    inits = [line for launches in plan.launches.values() for launch in launches for line in launch["lines"]
             if line.get("event") == "init"]
    versions: dict[str, str | None] = dict(env.framework_versions())
    versions["nccl"] = next((line["nccl"] for line in inits if line.get("nccl")), None)
    environment = env.detect(gpu=backend == "nccl")
    environment["nccl"] = versions["nccl"]
    environment["topology"] = topology()
    environment["backend"] = backend
    environment["kept"] = {k: os.environ[k] for k in sorted(table.SAFETY) if k in os.environ}
    environment["torch_nvls_guard"] = torch_nvls_guard() if backend == "nccl" else None
    merged = plan.merged("collectives")
    out = results.collective_results(merged, versions, plan.sizes, table.DTYPES)
    out += results.framework_results(plan.merged("framework"), versions)
    out += results.jax_results(plan.merged("jax"), versions, table.DTYPES)
    out = json.loads(json.dumps(out))  # no shared objects: the YAML gets no anchors
    doc = runfile.document(environment, out, created, code_hash(), "collectives")
    doc["wall_s"] = round(wall, 1)
    doc["budget_s"] = args.budget
    doc["launches"] = {f"{k}: {n}": [launch["wall_s"] for launch in ls] for (k, n), ls in plan.launches.items()}
    doc["not_run"] = {f"{k}: {n}": note for (k, n), note in plan.notes.items()}
    path = runfile.write(Path(args.out), doc, created)
    if args.raw:
        Path(args.raw).write_text(json.dumps({f"{k}|{n}": ls for (k, n), ls in plan.launches.items()}), encoding="utf-8")
    print(f"wrote {path} ({wall:.1f} s)")
    for result in out:
        summary = result.get("summary") or {}
        print(f"{result['framework']:8} {result['op']:45} cross {result.get('cross_mode_distinct')}: "
              f"repeat {sum(summary.get('repeats_run_to_run', {}).values())}/{len(summary.get('repeats_run_to_run', {}))}, "
              f"differ from default {[m for m, s in summary.get('same_as_default', {}).items() if s is False]}, "
              f"failed {list(summary.get('failed', {}))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
