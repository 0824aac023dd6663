"""`kb verify`: run verifiers in fresh processes and write one run file per run.

Works on a machine with neither pydantic nor TensorFlow (the GPU runner): planning reads
the compiled index and the verifiers' source; run files are written with PyYAML.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kb import jsonio

HELP = "run verifiers (each mode in a fresh process) and write a run file under data/runs/"
DESCRIPTION = """\
Re-check records empirically: each planned verifier runs N times in its default mode and
N times under each solution of its record's range for the installed framework version,
each mode in a fresh process with a timeout. Results (distinct hashes out of N, max abs
and ULP difference, raised or not, median time) go to ONE new run file
<out>/<env-id>/<UTC date>.yaml; `kb build` merges run files into kb.status(...).verified.
"""
EPILOG = """\
examples:
  kb verify --dry-run                      show the plan (records x modes) for this machine
  kb verify                                run every applicable verifier, write data/runs/...
  kb verify --verifier tensorflow.unsorted_segment_sum --device cpu --scale 0.05
  kb verify --framework pytorch --out $OUT on the GPU runner (see docs/verification.md)
  kb verify --coverage                     records without a verifier, and why
  kb verify --e2e                          end-to-end recipe proof (GTC 2019 talk) for every
                                           installed framework: pytorch, tensorflow, jax
  kb verify --e2e --framework jax --scale 0.1 --no-write   one framework, a smaller model
  kb verify --flagged                      runs that contradict their records (KB015)
  kb verify --sweep pytorch-eager --out $OUT   every op_db operator, default vs the switch
  kb verify --sweep jax --sweep-limit 20 --device cpu   a smoke run of the JAX sweep
  kb verify --static                       read every registry release's released wheels (no GPU,
                                           nothing installed): data/runs/static-<framework>/
  kb verify --static pytorch --release 2.4.1   one release

exit codes: 0 ran (whatever the outcomes), 1 every mode errored / nothing to run,
2 bad arguments.
"""


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help=HELP, description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--verifier", action="append", default=[], metavar="NAME", help="run this verifier (repeatable; also runs synthetic.* ones)")
    p.add_argument("--source", action="append", default=[], metavar="ID", help="run the verifier of this record (repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="NAME", help="skip this verifier (repeatable), e.g. a slow one that gets a run of its own")
    p.add_argument("--framework", action="append", default=[], choices=("tensorflow", "pytorch", "jax", "torchvision", "synthetic"), help="only these frameworks")
    p.add_argument("--device", choices=("auto", "gpu", "cpu"), default="auto", help="measure on (auto: gpu when nvidia-smi lists one, and only verifiers written for that device; an explicit device runs every verifier there, e.g. GPU ones on CPU as a smoke test)")
    p.add_argument("-n", "--runs", type=int, default=5, help="runs per mode (default 5)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds each phase of a mode (preparing, measuring) may take before it is killed (default 120)")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="children preparing at once; measuring is always one at a time (default: one per core up to 16 on a GPU run; 1 on CPU, where preparing children would share the cores being timed)")
    p.add_argument("--memory-limit", type=int, default=None, metavar="MB", help="address-space limit per child (not with CUDA)")
    p.add_argument("--scale", type=float, default=1.0, help="input size factor (CI: small, to prove GPU verifiers work on CPU)")
    p.add_argument("--no-unlinked", action="store_true", help="skip registered verifiers no record names yet")
    p.add_argument("--out", default=None, help="folder for run files (default data/runs)")
    p.add_argument("--no-write", action="store_true", help="measure but write no run file")
    p.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    p.add_argument("--json", action="store_true", help="print results (or coverage) as JSON")
    p.add_argument("--coverage", action="store_true", help="list every record: verifier, evidence, or why none")
    p.add_argument("--flagged", action="store_true", help="list runs that contradict their records (from the index)")
    p.add_argument("--e2e", action="store_true", help="end-to-end recipe proof for each installed framework (PyTorch, TensorFlow, JAX; --framework limits it): a small model trained 2x without and 2x with the union of kb.status recipes for its ops; one run file of kind e2e (--scale shrinks the data, --timeout applies per training)")
    p.add_argument("--sweep", choices=("pytorch-eager", "pytorch-compiled", "jax", "pytorch-branches", "jax-branches"), default=None,
                   help="run a whole operator catalog (docs/sweep.md) by default and under the switch; "
                        "writes data/sweeps/<env-id>/<stamp>-<suite>.json (-n default 4 here, --timeout per operator, default 90)")
    p.add_argument("--sweep-workers", type=int, default=4, metavar="N", help="warm worker processes for --sweep (default 4)")
    p.add_argument("--sweep-budget", type=float, default=None, metavar="S", help="stop giving out operators after S seconds; the rest are `skipped`")
    p.add_argument("--sweep-limit", type=int, default=None, metavar="N", help="only the first N operators of the catalog (a smoke run)")
    p.add_argument("--sweep-op", action="append", default=[], metavar="NAME", help="only this catalog entry (repeatable), e.g. cumsum or jax.numpy.cumsum")
    p.add_argument("--sweep-dtypes", default="", metavar="LIST", help="dtypes to run, comma-separated (catalog default float32,bfloat16; "
                   "PyTorch branch units their own); a/b/c: the first of them the op takes, e.g. int64/int32/uint8")
    p.add_argument("--sweep-passes", default="", metavar="LIST", help="PyTorch op_db and modules: passes to run (default forward,backward)")
    p.add_argument("--sweep-any-module-dtype", action="store_true",
                   help="PyTorch modules: run the --sweep-dtypes asked even where module_db lists fewer for the module")
    p.add_argument("--sweep-planted", action="store_true", help="add planted operators (silent, fixed, raises, crash, hang) that prove the harness")
    from kb.verify.static.cli import add_arguments

    add_arguments(p)
    p.set_defaults(func=main)


def _devices(choice: str, installed: dict[str, str]) -> dict[str, str]:
    from kb.verify import env

    if choice == "auto":
        gpu = bool(env._gpus()[0])
        choice = "gpu" if gpu else "cpu"
    devices = {fw: choice for fw in installed}
    if "tensorflow" in installed and env.tensorflow_is_cpu_only():
        devices["tensorflow"] = "cpu"
    devices["synthetic"] = "cpu"
    return devices


def main(args: argparse.Namespace) -> int:
    from kb.verify import env
    from verifiers import discover

    from kb.root import root_of

    root = root_of(args)
    if args.sweep is not None:
        from kb.verify import sweep

        args.runs_given = any(a in ("-n", "--runs") or a.startswith("--runs=") for a in sys.argv)
        args.timeout_given = any(a == "--timeout" or a.startswith("--timeout=") for a in sys.argv)
        return sweep.main(args, root)
    if args.static is not None:
        from kb.verify.static.cli import main as static_main

        return static_main(args, root)
    if args.coverage:
        from kb.verify.coverage import coverage, print_coverage

        from kb.verify.coverage import print_static, static_rows

        rows = coverage(discover.scan(root / "verifiers" if (root / "verifiers").is_dir() else discover.HERE))
        if args.json:
            print(jsonio.dumps({"records": rows, "static": static_rows()}, indent=2, default=list))
        else:
            print_coverage(rows)
            print_static(static_rows())
        return 0
    if args.flagged:
        from kb.query import index

        flagged = list(index().get("flagged", ()))
        reviewed = list(index().get("reviewed", ()))
        if args.json:
            print(jsonio.dumps({"flagged": flagged, "reviewed": reviewed}, indent=2, default=list))
        else:
            from kb.verify.cases import label

            for f in flagged:
                case = f", case {label(f.get('op'), f.get('call'))}" if f.get("op") else ""
                print(f"{f['file']}: {f['source']} ({f['device']}, {f['version']}{case}): " + "; ".join(f["reasons"]))
            print(f"{len(flagged)} flagged run(s) awaiting review; {len(reviewed)} reviewed "
                  "(each record's verify.reviewed says why)", file=sys.stderr)
        return 0
    if args.jobs is not None and args.jobs < 1:
        print("kb verify: error: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.runs < 2:
        print("kb verify: error: --runs must be at least 2 (one run cannot differ from anything)", file=sys.stderr)
        return 2
    installed = env.framework_versions()
    devices = _devices(args.device, installed)
    if args.e2e:
        from kb.verify.e2e import run_e2e

        return run_e2e(args, root, installed, devices)
    found = discover.scan(root / "verifiers" if (root / "verifiers").is_dir() else discover.HERE)
    unknown = [v for v in (*args.verifier, *args.exclude) if v not in found]
    if unknown:
        print(f"kb verify: error: not a registered verifier: {', '.join(unknown)} (see `kb verify --coverage`)", file=sys.stderr)
        return 2
    from kb.verify import multigpu
    from kb.verify.plan import plan

    items = plan(found, installed, devices, verifiers=tuple(args.verifier), sources=tuple(args.source),
                 frameworks=tuple(args.framework), unlinked=not args.no_unlinked,
                 any_device=args.device != "auto")
    items = [item for item in items if item.verifier not in args.exclude]
    multi = [] if args.source else [m for m in multigpu.plan(
        found, len(env._gpus()[0]), installed, verifiers=tuple(args.verifier), frameworks=tuple(args.framework))
        if m["verifier"] not in args.exclude]
    for m in multi:
        if not m["runs"]:
            print(f"{m['verifier']}: {m['reason']}", file=sys.stderr)
    if args.dry_run:
        for m in multi:
            if m["runs"]:
                print(f"(several GPUs): {m['verifier']} [{m['framework']}, {m['gpus']} GPUs] "
                      f"runs: python {' '.join(multigpu.COMMAND)}")
        from kb.verify.cases import label

        for item in items:
            modes = ", ".join(m for m, _ in item.modes)
            print(f"{item.source or '(unlinked)'}: {item.verifier} [{item.framework} {item.version}, {item.device}] modes: {modes}")
            if len(item.cases) > 1 or item.cases[0].op:
                for one in item.cases:
                    print(f"    case {label(one.op, one.to_dict()['call'])}")
        cases = sum(len(i.cases) for i in items)
        print(f"{len(items)} verifier(s), {sum(len(i.modes) for i in items)} mode(s) (child processes), "
              f"{cases} case(s), {sum(len(i.modes) * len(i.cases) for i in items)} case-mode(s)", file=sys.stderr)
        return 0
    runnable = [m for m in multi if m["runs"]]
    if not items and not runnable:
        if multi:  # only verifiers this machine has too few GPUs for: said above, not a failure
            if args.json:
                print(jsonio.dumps({"multi_gpu": multi}, indent=2))
            return 0
        print("kb verify: nothing to run here (no installed framework has an applicable verifier); see --coverage", file=sys.stderr)
        return 1
    code = _run(args, root, items) if items else 0
    if runnable:
        out = Path(args.out) if args.out else root / "data" / "runs"
        done = multigpu.run(root, out) if not args.no_write else {"exit": None, "message": "--no-write: not run"}
        print(f"several GPUs ({', '.join(m['verifier'] for m in runnable)}): "
              + (f"wrote {done['file']}" if done.get("file") else f"exit {done['exit']}: {done['message']}"), file=sys.stderr)
    return code


def _progress(total: int):
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        return None
    from rich.console import Console

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=False)


def _run(args, root: Path, items) -> int:
    import time

    from kb.verify import env, runfile
    import collections

    from kb.verify.runner import Task, default_jobs, mode_entry, per_case, run_modes
    from verifiers.discover import code_hash

    created = runfile.now()
    gpu_run = any(i.device == "gpu" for i in items)
    environment = env.detect(gpu=gpu_run)
    jobs = args.jobs or default_jobs("gpu" if gpu_run else "cpu")
    tasks = [Task(item.verifier, item.module, item.framework, tuple(item.handles or ()), tuple(codes), args.runs,
                  item.device, args.scale, key=(i, j), cases=tuple(item.cases))
             for i, item in enumerate(items) for j, (_, codes) in enumerate(item.modes)]
    measured: dict[tuple[int, int], list[dict]] = {}
    progress = _progress(len(tasks))
    started = time.perf_counter()
    task_id = progress.add_task(f"verify ({jobs} preparing at once)", total=len(tasks)) if progress else None

    if progress:
        progress.start()
    try:
        for task, result in run_modes(tasks, root=root, jobs=jobs, timeout=args.timeout, memory_mb=args.memory_limit):
            item_i, mode_i = task.key
            measured[task.key] = per_case(result, len(items[item_i].cases))
            outcomes = collections.Counter(c.get("outcome") for c in measured[task.key])
            said = f"{task.verifier} [{items[item_i].modes[mode_i][0]}]: " + ", ".join(
                f"{k} {v}" if len(measured[task.key]) > 1 else str(k) for k, v in sorted(outcomes.items(), key=str))
            if progress:
                progress.update(task_id, description=said)
                progress.advance(task_id)
            else:
                print(said, file=sys.stderr, flush=True)
    finally:
        if progress:
            progress.stop()
    results = []
    for i, item in enumerate(items):
        for c, case in enumerate(item.cases):
            modes = [mode_entry(mode, codes, measured[(i, j)][c]) for j, (mode, codes) in enumerate(item.modes)]
            results.append({
                "source": item.source, "verifier": item.verifier, "op": case.op, "call": case.to_dict()["call"],
                "framework": item.framework,
                "version": item.version, "device": item.device, "n": args.runs, "scale": args.scale,
                "record_claims": {True: "deterministic", False: "non-deterministic", None: "unknown"}[item.claim],
                "record_raises": item.expect_raises, "modes": modes,
            })
    wall = round(time.perf_counter() - started, 1)
    doc = runfile.document(environment, results, created, code_hash(), "verify")
    doc["wall_s"] = wall
    doc["jobs"] = jobs
    path = None
    if not args.no_write:
        out = Path(args.out) if args.out else root / runfile.RUNS_DIR
        path = runfile.write(out, doc, created)
    if args.json:
        print(jsonio.dumps({runfile.JSON_FILE: str(path) if path else None, **doc}, indent=2))
    else:
        _print_results(results, path, wall)
    every_error = all(m["outcome"] in ("error", "env-error") for r in results for m in r["modes"])
    return 1 if every_error else 0


def _print_results(results: list[dict], path, wall: float) -> None:
    from rich.console import Console
    from rich.markup import escape as e
    from rich.table import Table

    from kb.verify.cases import label as case_label

    table = Table("source / verifier / case", "mode", "outcome", "distinct", "max abs", "max ulp", "median s", "message")
    for r in results:
        for i, m in enumerate(r["modes"]):
            label = (r["source"] or "(unlinked)") + "\n" + r["verifier"] + (
                "\n" + case_label(r.get("op"), r.get("call")) if r.get("op") else "") if i == 0 else ""
            table.add_row(
                e(label), e(m["mode"]), m["outcome"],
                "" if m["distinct"] is None else f"{m['distinct']}/{r['n']}",
                "" if m["max_abs_diff"] is None else f"{m['max_abs_diff']:.3g}",
                "" if m["max_ulp_diff"] is None else str(m["max_ulp_diff"]),
                "" if m["median_s"] is None else f"{m['median_s']:.4f}",
                e((m["message"] or "")[:80]),
            )
    console = Console(highlight=False, soft_wrap=True, width=max(Console().width, 150))
    console.print(table)
    console.print(f"wall time {wall} s" + (f"; wrote {e(str(path))}" if path else ""))
