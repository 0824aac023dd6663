"""Run `kb check` on every program of the workload corpus and write one results file:
per program, the prediction under the recipe and as written, the outcome of the runs, right
or wrong, the time the recipe costs, and the environment (GPU, driver, CUDA, frameworks).

    PYTHONPATH=. python benchmarks/check_corpus/run_corpus.py --device cuda --results out.json
    PYTHONPATH=. python benchmarks/check_corpus/run_corpus.py --device cpu --only gpt_sdpa,mlp_dropout_reseed
    PYTHONPATH=. python benchmarks/check_corpus/run_corpus.py --corpus frozen --device cuda --results frozen.json

`--corpus` picks the programs: `project` (default) is this folder's corpus, the one kb check's
rules were tuned on; `frozen` is benchmarks/check_frozen/ (its list in programs.py there),
written before any further tuning and measured once.

Programs whose library is not installed (torchvision, jax) are listed as skipped, with the
reason. `--jobs N` checks N programs at a time (their runs then share the GPU: the time
ratios are noisier, the results are not); `--budget S` starts no new program after S
seconds (the rest are listed as not run). The file is written atomically, once, at the end.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
from types import ModuleType
import json
import os
import subprocess
import sys
import time
from datetime import datetime, UTC
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FROZEN = ROOT / "benchmarks" / "check_frozen"

# name, file, the library it needs beyond torch, extra arguments
PROGRAMS: list[tuple[str, str, str | None, list[str]]] = [  # the slow ones (compilation) first
    ("detector_roi_align", "detector_roi_align.py", "torchvision", []),
    ("compiled_transformer", "compiled_transformer.py", None, []),
    ("gpt_sdpa", "gpt_sdpa.py", None, []),
    ("resnet_amp_channels_last", "resnet_amp_channels_last.py", None, []),
    ("segmentation_ce4d", "segmentation_ce4d.py", None, []),
    ("jax_gnn_segment_sum", "jax_gnn_segment_sum.py", "jax", []),
    ("diffusion_unet", "diffusion_unet.py", None, []),
    ("ctc_speech", "ctc_speech.py", None, []),
    ("dlrm_embedding_bag", "dlrm_embedding_bag.py", None, []),
    ("gnn_index_add", "gnn_index_add.py", None, []),
    ("jax_cnn_maxpool", "jax_cnn_maxpool.py", "jax", []),
    ("dataloader_workers_numpy_aug", "dataloader_workers_numpy_aug.py", None, []),
    ("lstm_language_model", "lstm_language_model.py", None, []),
    ("vae_conv_transpose", "vae_conv_transpose.py", None, []),
    ("bert_mlm_encoder", "bert_mlm_encoder.py", None, []),
    ("stn_grid_sample", "stn_grid_sample.py", None, []),
    ("tts_length_regulator", "tts_length_regulator.py", None, []),
    ("mlp_dropout_reseed", "mlp_dropout_reseed.py", None, []),
]


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_corpus_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def corpus(name: str) -> tuple[Path, list[tuple[str, str, str | None, list[str]]]]:
    """The folder and the program list of a corpus: the project's (this folder) or the frozen one."""
    if name == "project":
        return HERE, PROGRAMS
    if name == "frozen":
        return FROZEN, _module(FROZEN / "programs.py").PROGRAMS
    raise ValueError(f"unknown corpus {name!r} (project or frozen)")


def shared_gpu_env(jobs: int) -> dict[str, str]:
    """Variables that let several programs share one GPU. JAX takes 75% of the GPU's memory at
    start-up by default, so a second JAX program (or any program beside it) ran out of memory
    when programs were checked side by side: with `--jobs` above 1 JAX allocates as it goes.
    This changes where buffers live, not what is computed; the results file lists it."""
    if jobs <= 1 or "XLA_PYTHON_CLIENT_PREALLOCATE" in os.environ:
        return {}
    return {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


def environment(device: str) -> dict:
    from kb.verify.env import detect

    env = detect(gpu=device == "cuda")
    env["python"] = sys.version.split()[0]
    for name in ("torchvision", "numpy"):
        try:
            from importlib import metadata

            env.setdefault("packages", {})[name] = metadata.version(name)
        except Exception:
            pass
    return env


def summary(report: dict) -> dict:
    """The row of the results table for one program."""
    p = report["prediction"]
    row = {
        "predicted": p["under_recipe"], "expected": p["expect"], "raising": p["raising"], "differing": p["differing"],
        "recipe": p["recipe"], "applied": p["applied"], "not_applied": p["not_applied"],
        "as_written_predicted": p["as_written"], "as_written_expected": p["as_written_expect"],
        "findings": [{"op": f["op"], "shown": f["shown"], "source": f["source"]["id"], "as_written": f["as_written"],
                      "under_recipe": f["under_recipe"]} for f in p["findings"]],
        "calls": p["calls"], "unverified": len(p["unverified"]), "unknown": len(p["unknown"]),
    }
    if "under_recipe" in report:
        agree = report["agreement"]
        row.update(outcome=agree["outcome"], right=agree["right"], as_written_outcome=agree["as_written_outcome"],
                   as_written_right=agree["as_written_right"], time=report.get("time"),
                   outcome_detail=_detail(report["under_recipe"]), as_written_detail=_detail(report["as_written"]),
                   blame={k: v.get("message") or v.get("note") or v.get("why") for k, v in report.get("blame", {}).items()},
                   notes=[n["text"] for run in report["runs"]["recipe"][:1] for n in run.get("notes", [])])
    return row


def _detail(result: dict) -> dict:
    if result["result"] == "differs":
        return {"first": result.get("first"), "message": result.get("message")}
    if result["result"] == "raises":
        return result["raised"]
    if result["result"] == "failed":
        return {"why": result.get("why"), "tail": result.get("tail")}
    return {"steps": result.get("steps"), "compared": result.get("compared")}


def check_one(name: str, file: str, extra: list[str], args, python: str, folder: Path = HERE) -> dict:
    prog_args = list(extra)
    if file.startswith("jax_"):
        if args.device == "cpu":
            prog_args += ["--device", "cpu"]
    else:
        prog_args += ["--device", args.device]
    out = Path(args.work) / name
    cmd = [python, "-m", "kb", "check", "--json", "--quiet", "--steps", str(args.steps), "--out", str(out),
           "--timeout", str(args.timeout), "--blame", args.blame, "--", python, str(folder / file), *prog_args]
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.update(shared_gpu_env(args.jobs))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    row: dict = {"program": name, "file": f"benchmarks/{folder.name}/{file}", "args": prog_args, "exit": proc.returncode,
                 "seconds": round(time.perf_counter() - start, 1)}
    try:
        report = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        report = None
    if report is None or "prediction" not in report:
        row["error"] = (proc.stderr or "")[-1500:] or "kb check printed no report"
        return row
    row.update(summary(report))
    if report.get("error"):
        row["error"] = report["error"]
    row["report"] = report
    print(f"{name}: predicted {row['predicted']} ({row['expected']}), outcome {row.get('outcome')}, "
          f"right={row.get('right')} [{row['seconds']} s]", file=sys.stderr, flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--corpus", choices=("project", "frozen"), default="project",
                    help="which programs: the project corpus (default) or benchmarks/check_frozen/")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--results", required=True, help="the results file to write (JSON)")
    ap.add_argument("--work", default="/tmp/kb-check-corpus", help="folder for the runs")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--budget", type=float, default=0, help="start no program after this many seconds (0: no limit)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one run may take")
    ap.add_argument("--blame", choices=("all", "recipe", "none"), default="recipe")
    args = ap.parse_args(argv)
    folder, programs = corpus(args.corpus)
    wanted = {n for n in args.only.split(",") if n}
    unknown = wanted - {p[0] for p in programs}
    if unknown:
        ap.error(f"unknown program(s): {', '.join(sorted(unknown))}")
    python = sys.executable
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = time.perf_counter()
    rows: dict[str, dict] = {}
    todo = []
    for name, file, needs, extra in programs:
        if wanted and name not in wanted:
            continue
        if needs and importlib.util.find_spec(needs) is None:
            rows[name] = {"program": name, "file": f"benchmarks/{folder.name}/{file}", "skipped": f"needs {needs}"}
            continue
        todo.append((name, file, extra))

    def task(item):
        name, file, extra = item
        if args.budget and time.perf_counter() - t0 > args.budget:
            return {"program": name, "file": f"benchmarks/{folder.name}/{file}", "skipped": "not run: --budget spent"}
        try:
            return check_one(name, file, extra, args, python, folder)
        except Exception as exc:  # one program's failure is its row, the others go on
            return {"program": name, "file": f"benchmarks/{folder.name}/{file}", "error": f"{type(exc).__name__}: {exc}"}

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for row in pool.map(task, todo):
            rows[row["program"]] = row
    ordered = [rows[p[0]] for p in programs if p[0] in rows]
    decided = [r for r in ordered if r.get("right") is not None]
    doc = {
        "kind": "check-corpus", "started": started, "wall_s": round(time.perf_counter() - t0, 1),
        "command": "python benchmarks/check_corpus/run_corpus.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "corpus": args.corpus, "device": args.device, "steps": args.steps, "jobs": args.jobs, "set_for_programs": shared_gpu_env(args.jobs), "environment": environment(args.device),
        "counts": {"programs": len(ordered), "decided": len(decided), "right": sum(1 for r in decided if r["right"]),
                   "as_written_right": sum(1 for r in decided if r.get("as_written_right")),
                   "skipped": sum(1 for r in ordered if "skipped" in r), "errors": sum(1 for r in ordered if "error" in r)},
        "programs": ordered,
    }
    path = Path(args.results)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    print(json.dumps(doc["counts"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
