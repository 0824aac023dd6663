"""`kb check` end to end on the CPU, and what it makes of runs: a corpus program with a planted
difference (it reseeds from the clock before training, so dropout draws differ) must be caught
as written, the call named (dropout), predicted fixed by the recipe (SEED) and found identical
under it; the JSON report has no NaN or Infinity. Runs of other shapes (a raise under the
switch, a run that failed) are read from planted logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kb.check import boot
from kb.check.cli import EXIT_DIFFER, EXIT_SAME, exit_code
from kb.check.outcome import agreement, pair, run_summary, time_ratio
from kb.check.report import render

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "benchmarks" / "check_corpus" / "mlp_dropout_reseed.py"


def _no_constants(name: str):
    raise AssertionError(f"JSON holds {name}")


def test_planted_difference_is_caught_named_and_fixed(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "kb-check"
    proc = subprocess.run(
        [sys.executable, "-m", "kb", "check", "--json", "--steps", "2", "--inventory-steps", "1", "--blame", "all",
         "--out", str(out), "--", sys.executable, str(PLANTED), "--device", "cpu"],
        capture_output=True, text=True, timeout=1200, cwd=ROOT, env={**_env(), "PYTHONPATH": str(ROOT)})
    assert proc.returncode == EXIT_SAME, proc.stderr[-3000:]
    report = json.loads(proc.stdout, parse_constant=_no_constants)
    p = report["prediction"]
    assert p["as_written"] == "differs" and p["under_recipe"] == "fixed" and p["recipe"] == ["SEED"]
    assert [f["source"]["id"] for f in p["findings"]] == ["unseeded random draws"]
    assert report["as_written"]["result"] == "differs"
    assert report["under_recipe"]["result"] == "identical" and report["under_recipe"]["steps"] == 2
    assert report["agreement"]["right"] is True and report["agreement"]["as_written_right"] is True
    named = report["blame"]["as_written"]
    assert "dropout" in named["message"] and any("dropout" in c["call"] for c in named["calls"])
    assert "recipe" not in report["blame"]  # identical under the recipe: nothing to name
    assert report["exit"] == EXIT_SAME
    assert "kb check: run recipe 2/2" in proc.stderr  # progress on stderr
    text = render(report)
    assert "prediction under the recipe: right" in text and "dropout" in text


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("KB_")}


def _run(directory: Path, values: list[float], **check) -> dict:
    """A planted run: a probe log of `values` (one loss a step) and its check.json."""
    from kb.probe import recorder

    recorder.configure(str(directory))
    for value in values:
        recorder.record("loss", "forward", value, framework="pytorch")
        recorder.set_step()
    recorder.close()
    recorder.configure(None)
    account = {"steps": len(values), "stopped": "steps", "step_times": [1.0 + i * 0.01 for i in range(len(values))],
               **check}
    (directory / boot.CHECK_FILE).write_text(json.dumps(account), encoding="utf-8")
    return run_summary(str(directory), 0 if not check.get("raised") else 1, 2.0, "")


def test_pairs_of_runs_identical_differing_raising_failed(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", [1.0, 0.5, 0.25])
    b = _run(tmp_path / "b", [1.0, 0.5, 0.25])
    c = _run(tmp_path / "c", [1.0, 0.5000001, 0.25])
    assert pair(a, b, 3)["result"] == "identical"
    differs = pair(a, c, 3)
    assert differs["result"] == "differs" and differs["first"]["step"] == 1 and differs["first"]["name"] == "loss"
    raised = _run(tmp_path / "r", [1.0], raised={"type": "RuntimeError", "where": ["train.py:12: loss = ce(x, y)"],
                                                 "message": "nll_loss2d_forward_out_cuda_template does not have a "
                                                            "deterministic implementation, but you set ..."})
    got = pair(a, raised, 3)
    assert got["result"] == "raises" and got["raised"]["kernel"] == "nll_loss2d_forward_out_cuda_template"
    assert got["raised"]["line"] == "train.py:12: loss = ce(x, y)"
    for message in ("CUDA error: out of memory\nSearch for `cudaErrorMemoryAllocation'",
                    "Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA"):
        starved = _run(tmp_path / f"oom{len(message)}", [1.0], raised={"type": "RuntimeError", "message": message,
                                                                       "where": ["train.py:3: x.to(dev)"]})
        got = pair(a, starved, 3)
        assert got["result"] == "failed" and "GPU memory" in got["why"], got
    unhooked = run_summary(str(tmp_path / "nothing"), 0, 1.0, "")
    assert pair(a, unhooked, 3)["result"] == "failed"
    timing = time_ratio([a, b], [c, c])
    assert timing["step_ratio"] == 1.0 and timing["as_written_step_s"] == 0.01


def test_right_and_wrong_and_exit_codes() -> None:
    prediction = {"under_recipe": "raises", "expect": "raises", "as_written": "differs", "as_written_expect": "differs"}
    right = agreement(prediction, {"result": "differs"}, {"result": "raises"})
    assert right["right"] is True and right["as_written_right"] is True
    wrong = agreement(prediction, {"result": "identical"}, {"result": "identical"})
    assert wrong["right"] is False and wrong["as_written_right"] is False
    assert agreement(prediction, {"result": "failed"}, {"result": "failed"})["right"] is None
    assert exit_code({"under_recipe": {"result": "identical"}}) == EXIT_SAME
    assert exit_code({"under_recipe": {"result": "raises"}}) == EXIT_DIFFER
    assert exit_code({"under_recipe": {"result": "failed"}}) == 2
    assert exit_code({"prediction": {"expect": "differs"}}) == EXIT_DIFFER


def test_no_command_is_bad_input() -> None:
    proc = subprocess.run([sys.executable, "-m", "kb", "check", "--"], capture_output=True, text=True, cwd=ROOT,
                          env={**_env(), "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2 and "no command given" in proc.stderr
    helped = subprocess.run([sys.executable, "-m", "kb", "check", "--help"], capture_output=True, text=True, cwd=ROOT,
                            env={**_env(), "PYTHONPATH": str(ROOT)}, timeout=120)
    assert helped.returncode == 0 and "PREDICTED" in helped.stdout and "exit codes" in helped.stdout


def test_the_corpus_table_in_the_docs_is_made_from_the_results_files() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks" / "check_corpus"))
    import table

    doc = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    assert f"{table.BEGIN}\n{table.table()}{table.END}" in doc


def test_a_short_noise_schedule_is_no_long_scan(tmp_path: Path) -> None:
    """Issue 42: the corpus's diffusion model builds its noise schedule with torch.cumprod over 1,000
    elements (forward only), which repeated on the H100. The inventory records the input's element
    count, and the prediction made from it, read as the GPU run would be (the cumprod record is about
    CUDA), no longer says cumprod differs under the recipe; without the count it still would."""
    pytest.importorskip("torch")
    from kb.check.predict import predict
    from kb.check.runner import read_check

    out = tmp_path / "kb-check"
    proc = subprocess.run(
        [sys.executable, "-m", "kb", "check", "--json", "--predict-only", "--inventory-steps", "1", "--out", str(out),
         "--", sys.executable, str(ROOT / "benchmarks" / "check_corpus" / "diffusion_unet.py"), "--device", "cpu",
         "--steps", "2"],
        capture_output=True, text=True, timeout=1200, cwd=ROOT, env={**_env(), "PYTHONPATH": str(ROOT)})
    assert proc.returncode in (EXIT_SAME, EXIT_DIFFER), proc.stderr[-3000:]
    report = json.loads(proc.stdout, parse_constant=_no_constants)
    (answer,) = [a for a in report["prediction"]["answers"] if a["op"] == "torch.cumprod"]
    assert answer["call"]["input.numel"] == 1000 and answer["call"]["input.ndim"] == 1
    assert "torch.cumprod" not in report["prediction"]["differing"]
    inventory = json.loads((out / "inventory" / "inventory.json").read_text(encoding="utf-8"))
    settings = (read_check(str(out / "inventory")) or {}).get("settings") or {}
    on_gpu = {**inventory, "calls": [{**c, "device": "gpu"} for c in inventory["calls"]]}
    gpu = predict(on_gpu, settings, {"pytorch": "2.11.0"}, "gpu")
    assert "torch.cumprod" not in gpu["differing"]
    assert not [f for f in gpu["findings"] if f["source"]["id"] == "torch.cumprod"]
    uncounted = {**on_gpu, "calls": [{**c, "call": {k: v for k, v in c["call"].items() if k != "input.numel"}}
                                     if c["op"] == "torch.cumprod" else c for c in on_gpu["calls"]]}
    assert "torch.cumprod" in predict(uncounted, settings, {"pytorch": "2.11.0"}, "gpu")["differing"]
