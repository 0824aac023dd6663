"""The verifier harness: verdicts, isolation, atomic run files, merge into kb.status, KB014/KB015."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from kb.verify import runfile
from kb.verify.runner import run_mode
from site_build import warm_lint_cache

ROOT = Path(__file__).resolve().parents[1]


def measure(name: str, codes=(), *, n=5, timeout=30.0, memory_mb=None, framework="synthetic", handles=()):
    module = {"synthetic": "verifiers.synthetic", "tensorflow": "verifiers.tensorflow.cpu"}[framework]
    return run_mode(name, module, framework, handles, tuple(codes), n=n, device="cpu", scale=1.0,
                    timeout=timeout, memory_mb=memory_mb, root=ROOT)


def test_threads_adding_floats_differ_and_the_solution_removes_it() -> None:
    default = measure("synthetic.thread_sum", n=10)
    fixed = measure("synthetic.thread_sum", ("SYN_FIX",), n=10)
    assert default["outcome"] == "ok" and default["distinct"] > 1 and default["max_ulp_diff"] > 0
    assert fixed["outcome"] == "ok" and fixed["distinct"] == 1 and fixed["max_abs_diff"] == 0


def test_deterministic_op_is_stored_as_zero_of_n_differ() -> None:
    out = measure("synthetic.deterministic")
    assert (out["outcome"], out["distinct"], out["max_ulp_diff"]) == ("ok", 1, 0)
    assert out["median_s"] >= 0 and len(out["hashes"]) == 1


def test_crash_is_an_environment_failure_with_the_signal() -> None:
    out = measure("synthetic.crash")  # killed by a signal: no evidence about the op (issue 31)
    assert out["outcome"] == "env-error" and "SIGABRT" in out["message"] and out["retried"] is True


def test_hang_is_killed_at_the_timeout() -> None:
    out = measure("synthetic.hang", timeout=2.0)
    assert out["outcome"] == "error" and "timed out after 2 s while measuring" in out["message"]  # the phase it hung in


def test_memory_exhaustion_is_an_environment_failure() -> None:
    out = measure("synthetic.memory", memory_mb=1024, timeout=20)
    assert out["outcome"] == "env-error" and "MemoryError" in out["message"]


def test_solution_that_raises_is_recorded_with_its_message() -> None:
    out = measure("synthetic.raises", ("SYN_RAISE",), handles=("SYN_RAISE",))
    assert out["outcome"] == "raised" and "deterministic implementation" in out["message"]


def test_unknown_code_is_a_clear_error() -> None:
    out = measure("synthetic.deterministic", ("PT_NOPE",))
    assert out["outcome"] == "error" and "PT_NOPE" in out["message"]


def test_env_switch_reaches_only_its_mode(monkeypatch) -> None:
    monkeypatch.setenv("SYN_SWITCH", "leaked-from-shell")
    on = measure("synthetic.env_switch", ("SYN_ENV",), n=2)
    off = measure("synthetic.env_switch", n=2)
    again = measure("synthetic.env_switch", ("SYN_ENV",), n=2)
    assert on["hashes"] == again["hashes"] != off["hashes"]
    from verifiers import measure as m
    import numpy as np

    empty = m.digest({"out": np.frombuffer(b"".ljust(8, b"\0"), dtype=np.uint8)})
    assert off["hashes"] == [empty]  # neither the shell's value nor the previous mode's


def test_run_files_are_new_atomic_files(tmp_path, monkeypatch) -> None:
    created = runfile.now()
    env = {"env_id": "cpu-test", "gpu": {"name": None, "count": 0}}
    doc = runfile.document(env, [], created, "abc")
    first = runfile.write(tmp_path, doc, created)
    second = runfile.write(tmp_path, doc, created)
    assert first != second and first.exists() and second.exists()
    assert first.name == created.strftime("%Y-%m-%dT%H%M%SZ") + ".yaml"
    loaded = yaml.safe_load(first.read_text())
    assert loaded["schema_version"] == 1 and loaded["environment"]["env_id"] == "cpu-test"

    def fail(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        runfile.write(tmp_path, doc, created)
    assert sorted(p.name for p in (tmp_path / "cpu-test").iterdir()) == sorted([first.name, second.name])


def _copy(tmp_path: Path) -> Path:
    """The project's data without its run and sweep files, except the run and sweep files a record's
    verify.reviewed names (a review naming a missing file is itself a finding)."""
    import re

    root = tmp_path / "kb"
    shutil.copytree(ROOT / "data", root / "data", ignore=shutil.ignore_patterns("runs", "sweeps"))
    for path in (ROOT / "data" / "sources").rglob("*.yaml"):
        for name in re.findall(r"^\s+- run: (data/(?:runs/\S+\.yaml|sweeps/\S+\.json))$", path.read_text(), re.M):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, root / name)
    return warm_lint_cache(root)


def _plant(root: Path, eod_distinct: int, version="2.21.0", device="gpu") -> None:
    doc = {
        "schema_version": 1, "created": "2026-11-22T23:40:00Z",
        "environment": {"env_id": "h100-test", "gpu": {"name": "NVIDIA H100 80GB HBM3", "count": 1}, "driver": "580",
                        "cuda": "13.0", "cudnn": "91900", "frameworks": {"tensorflow": version}, "python": "3.12",
                        "cpu": "x", "platform": "Linux-x86_64"},
        "results": [{
            "source": "tf.unsorted-segment-sum", "verifier": "tensorflow.unsorted_segment_sum",
            "framework": "tensorflow", "version": version, "device": device, "n": 5,
            "modes": [
                {"mode": "default", "solutions": [], "outcome": "ok", "distinct": 5, "max_abs_diff": 0.5,
                 "max_ulp_diff": 12, "median_s": 0.010, "message": None},
                {"mode": "EOD", "solutions": ["EOD"], "outcome": "ok", "distinct": eod_distinct, "max_abs_diff": 0.0,
                 "max_ulp_diff": 0, "median_s": 0.014, "message": None},
            ],
        }],
    }
    folder = root / "data" / "runs" / "h100-test"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "2026-11-22T234000Z.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def _status(root: Path, *args, more: tuple = (), **kw):
    """kb.status(*args, **kw) over root's data, and the lint findings; each of `more` (args,
    kwargs) is asked of the same index too, its answer appended."""
    import kb
    from kb import query
    from kb.compile import build_index
    from kb.lint import run

    catalog, findings = run(root)
    query.reset(build_index(catalog))
    try:
        answers = [kb.status(*a, **k) for a, k in ((args, kw), *more)]
    finally:
        query.reset()
    return (answers[0], findings) if not more else (*answers, findings)


def test_planted_run_file_changes_verified_for_its_version_and_device_only(tmp_path) -> None:
    root = _copy(tmp_path)
    before, _ = _status(root, "tf.math.unsorted_segment_sum", "2.21")
    assert before.verified == ()
    _plant(root, eod_distinct=1)
    after, older, cpu, findings = _status(root, "tf.math.unsorted_segment_sum", "2.21", more=(
        (("tf.math.unsorted_segment_sum", "2.20"), {}), (("tf.math.unsorted_segment_sum", "2.21"), {"device": "cpu"})))
    (evidence,) = after.verified
    assert evidence.gpu == "NVIDIA H100 80GB HBM3" and evidence.version == "2.21.0" and evidence.n == 5
    assert [(m.mode, m.distinct, m.time_ratio) for m in evidence.modes] == [("default", 5, 1.0), ("EOD", 1, 1.4)]
    assert evidence.contradicts == () and not [f for f in findings if f.code == "KB015"]
    assert evidence.to_dict()["modes"][1]["solutions"] == ["EOD"]
    assert older.verified == ()
    assert cpu.verified == ()


def test_contradicting_run_is_kb015_warning_not_an_error(tmp_path, capsys) -> None:
    from kb.cli import main

    root = _copy(tmp_path)
    _plant(root, eod_distinct=3)
    status, findings = _status(root, "tf.math.unsorted_segment_sum", "2.21")
    assert status.verified[0].contradicts == ("differs under EOD: 3 distinct of 5",)
    # KB021 is the sweep files' own warning (a reviewed sweep file is copied with the records that name it)
    assert [f.code for f in findings if f.code != "KB021"] == ["KB015"]
    assert main(["--root", str(root), "validate"]) == 0
    assert main(["--root", str(root), "validate", "--strict"]) == 1
    assert "KB015" in capsys.readouterr().out


def test_unregistered_verifier_is_kb014(tmp_path) -> None:
    from kb.lint import run

    root = _copy(tmp_path)
    path = root / "data" / "sources" / "tensorflow" / "tf.segment-sum.yaml"
    path.write_text(path.read_text().replace("tensorflow.segment_sum", "tensorflow.segmnt_sum"))
    _, findings = run(root)
    (finding,) = [f for f in findings if f.code == "KB014"]
    assert "tensorflow.segmnt_sum" in finding.message and "tensorflow.segment_sum" in finding.hint


def test_malformed_run_file_is_reported_not_merged(tmp_path) -> None:
    from kb.lint import run

    root = _copy(tmp_path)
    (root / "data" / "runs" / "x").mkdir(parents=True)
    (root / "data" / "runs" / "x" / "bad.yaml").write_text("schema_version: 1\nresults: 3\n")
    _, findings = run(root)
    assert any(f.code == "KB002" and f.path.endswith("bad.yaml") for f in findings)


def test_tensorflow_cpu_verifier_runs_and_cpu1_removes_the_difference() -> None:
    pytest.importorskip("tensorflow", reason="tensorflow(-cpu) not installed")
    default = measure("tensorflow.cpu_thread_parallelism", n=4, timeout=120, framework="tensorflow")
    single = measure("tensorflow.cpu_thread_parallelism", ("CPU1",), n=4, timeout=120, framework="tensorflow")
    assert default["outcome"] == "ok" and single["outcome"] == "ok"
    assert single["distinct"] == 1
    if (os.cpu_count() or 1) > 1:
        assert default["distinct"] > 1


def test_every_record_verifier_is_discoverable_without_importing_frameworks() -> None:
    import subprocess
    import sys

    code = "import sys; from verifiers import discover; f = discover.scan(); print(len(f), any(m in sys.modules for m in ('torch','jax','tensorflow')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT).stdout.split()
    assert int(out[0]) >= 30 and out[1] == "False"


def test_parallel_children_measure_one_at_a_time_and_a_hang_holds_nobody_up() -> None:
    """Several children prepare at once; the timed loops never overlap; a child hanging in its
    timed loop is killed at its own deadline and every other mode still gets its result."""
    import time

    from kb.verify.runner import Task, run_modes

    names = ["synthetic.slow", "synthetic.hang", "synthetic.slow", "synthetic.crash",
             "synthetic.slow", "synthetic.thread_sum"]
    tasks = [Task(name, "verifiers.synthetic", "synthetic", (), (), 3, "cpu", key=i) for i, name in enumerate(names)]
    started = time.monotonic()
    results = {task.key: result for task, result in run_modes(tasks, root=ROOT, jobs=4, timeout=4.0)}
    wall = time.monotonic() - started
    assert sorted(results) == list(range(len(names)))
    assert results[1]["outcome"] == "error" and "while measuring" in results[1]["message"]
    assert results[3]["outcome"] == "env-error" and "SIGABRT" in results[3]["message"]
    ok = [r for r in results.values() if r["outcome"] == "ok"]
    assert len(ok) == 4
    spans = sorted((r["measure_start"], r["measure_end"]) for r in ok)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end, "two children measured at the same time"
    assert wall < 4.0 + 30, "the hang held the queue past its own timeout"


def test_jobs_must_be_positive(capsys) -> None:
    from kb.cli import main

    assert main(["verify", "--jobs", "0", "--verifier", "synthetic.deterministic"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def _record(record_id: str):
    from shared import repo_lint

    catalog, _ = repo_lint()
    return next(r for r in catalog.sources.values() if r.id == record_id)


def _nccl_result(ranks: int, across: int, pin_distinct: int = 1, limits: str | None = None) -> dict:
    mode = lambda name, codes, d: {"mode": name, "solutions": codes, "outcome": "ok", "distinct": d}  # noqa: E731
    result = {"source": "nccl.allreduce-order", "verifier": "nccl.allreduce_order", "framework": "nccl",
              "version": "2.27.7", "device": "gpu", "n": 5, "ranks": ranks, "cross_mode_distinct": across,
              "modes": [mode("default", [], 1), mode("NCCL_PIN", ["NCCL_PIN"], pin_distinct), mode("Tree/Simple", [], 1)]}
    if limits:
        result["limits"] = limits
    return result


def test_nccl_evidence_is_read_across_configurations_and_two_ranks_prove_nothing() -> None:
    """Repeats of one NCCL configuration agree (no false 'claims non-determinism'); with two
    ranks a + b == b + a, so identical bits across configurations are no evidence either way;
    from three ranks on they contradict the record; a pinned choice that differs always does."""
    from kb.verify.merge import contradictions

    record = _record("nccl.allreduce-order")
    assert contradictions(record, _nccl_result(ranks=2, across=1)) == []
    assert contradictions(record, _nccl_result(ranks=4, across=3)) == []
    assert contradictions(record, _nccl_result(ranks=4, across=1)) == [
        "the record says the result follows the configuration; every configuration gave the same bits"]
    assert contradictions(record, _nccl_result(ranks=2, across=1, pin_distinct=2)) == [
        "differs under NCCL_PIN: 2 distinct of 5"]


def test_a_raising_record_without_solutions_plans_the_switch_and_flags_a_silent_one() -> None:
    """torch.histc: no solution, but use_deterministic_algorithms is documented to raise. The
    plan runs PT_DET once to check that; a run where it did not raise is a contradiction."""
    from kb.verify.merge import contradictions
    from kb.verify.plan import plan
    from verifiers import discover

    (item,) = plan(discover.scan(), {"pytorch": "2.11.0"}, {"pytorch": "gpu"}, sources=("torch.histc",), unlinked=False)
    assert [m for m, _ in item.modes] == ["default", "PT_DET"] and item.expect_raises == "RuntimeError"
    base = {"source": "torch.histc", "verifier": "torch.histc", "framework": "pytorch", "version": "2.11.0",
            "device": "gpu", "n": 5}
    raised = {"mode": "PT_DET", "solutions": ["PT_DET"], "outcome": "raised", "distinct": None, "message": "x"}
    silent = {"mode": "PT_DET", "solutions": ["PT_DET"], "outcome": "ok", "distinct": 1}
    default = {"mode": "default", "solutions": [], "outcome": "ok", "distinct": 5}
    record = _record("torch.histc")
    assert contradictions(record, base | {"modes": [default, raised]}) == []
    assert contradictions(record, base | {"modes": [default, silent]}) == [
        "the record says RuntimeError under the solution; PT_DET did not raise"]


def test_a_reviewed_run_leaves_the_warning_list_and_keeps_its_note(tmp_path) -> None:
    """KB015 is for a person to read; once the record names the run in verify.reviewed with a
    note, the run moves from `flagged` to `reviewed` and the evidence carries the note."""
    from kb.compile import build_index
    from kb.lint import run

    root = _copy(tmp_path)
    _plant(root, eod_distinct=3)
    record = root / "data" / "sources" / "tensorflow" / "tf.unsorted-segment-sum.yaml"
    text = record.read_text()
    assert "  verifier: tensorflow.unsorted_segment_sum\n" in text
    record.write_text(text.replace(
        "  verifier: tensorflow.unsorted_segment_sum\n",
        "  verifier: tensorflow.unsorted_segment_sum\n  reviewed:\n"
        "    - run: data/runs/h100-test/2026-11-22T234000Z.yaml\n      note: planted for the test\n"))
    catalog, findings = run(root)
    assert not [f for f in findings if f.code == "KB015"]
    idx = build_index(catalog)
    assert idx["flagged"] == ()
    (item,) = [r for r in idx["reviewed"] if r["source"] == "tf.unsorted-segment-sum"]
    assert item["note"] == "planted for the test" and item["reasons"] == ("differs under EOD: 3 distinct of 5",)
    status, _ = _status(root, "tf.math.unsorted_segment_sum", "2.21")
    assert status.verified[0].reviewed == "planted for the test" and status.verified[0].contradicts

    record.write_text(record.read_text().replace("2026-11-22T234000Z.yaml", "2026-01-01T000000Z.yaml"))
    _, findings = run(root)
    kb015 = [f for f in findings if f.code == "KB015"]
    assert any("not a run file" in f.message and f.path.endswith("tf.unsorted-segment-sum.yaml") and f.line > 1
               for f in kb015)
    assert any("differs under EOD" in f.message for f in kb015)


def test_verification_page_lists_flagged_runs_for_review_and_reviewed_ones_with_their_note(tmp_path) -> None:
    from kb.compile import build_index
    from kb.lint import run
    from kb.site.pages import _verification
    from kb.render import render

    root = _copy(tmp_path)
    _plant(root, eod_distinct=3)
    catalog, _ = run(root)
    page = render("site/verification.md.j2", **_verification(build_index(catalog)))
    review = page[page.index("## Awaiting review"):page.index("## Reviewed")]
    assert "tf.unsorted-segment-sum" in review and "differs under EOD: 3 distinct of 5" in review
    assert "Nothing awaits review" not in review
    reviewed = page[page.index("## Reviewed"):]
    assert "torch.histc" in reviewed and "2^24" in reviewed  # the records' own verify.reviewed notes
    assert "1.4×" in page  # EOD's time over the default mode's: the cost of the switch


def test_a_solution_that_avoids_a_documented_raise_is_no_contradiction() -> None:
    """tf.random-seeds (2.7+): determinism without a seed raises, SEED avoids it; a SEED mode that
    ran ok and agreed is evidence for the record, not against it."""
    from kb.verify.merge import contradictions

    record = _record("tf.random-seeds")
    result = {"source": "tf.random-seeds", "verifier": "tensorflow.random_seeds", "framework": "tensorflow",
              "version": "2.21.0", "device": "cpu", "n": 5,
              "modes": [{"mode": "default", "solutions": [], "outcome": "ok", "distinct": 5},
                        {"mode": "SEED", "solutions": ["SEED"], "outcome": "ok", "distinct": 1}]}
    assert contradictions(record, result) == []
    result["modes"].append({"mode": "EOD", "solutions": ["EOD"], "outcome": "ok", "distinct": 1})
    assert contradictions(record, result) == ["the record says RuntimeError under the solution; EOD did not raise"]


def test_a_machines_nvls_off_setting_survives_every_mode(monkeypatch) -> None:
    """NCCL_NVLS_ENABLE is a switch a table knows (NCCL_NO_NVLS), but where the machine's owner
    sets it to 0 for safety, no mode may strip it back to NCCL's default."""
    from kb.verify.runner import child_env

    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    monkeypatch.setenv("TF_DETERMINISTIC_OPS", "1")
    env = child_env({}, ROOT)
    assert env["NCCL_NVLS_ENABLE"] == "0" and "TF_DETERMINISTIC_OPS" not in env


# --- issue 31 item 4: environment failures are their own outcome, retried once, never evidence --


def test_backend_that_cannot_start_is_env_error_not_a_raise() -> None:
    out = measure("synthetic.backend")
    assert out["outcome"] == "env-error" and "Unable to initialize backend" in out["message"]
    assert out.get("retried") is True and "retried once alone" in out["message"]


def test_a_transient_environment_failure_is_retried_once_alone(tmp_path, monkeypatch) -> None:
    from kb.verify.runner import Task, run_modes

    monkeypatch.setenv("SYN_FLAKY_MARKER", str(tmp_path / "started-once"))
    tasks = [Task("synthetic.backend", "verifiers.synthetic", "synthetic", (), (), 3, "cpu", key="flaky"),
             Task("synthetic.slow", "verifiers.synthetic", "synthetic", (), (), 3, "cpu", key="slow")]
    results = {task.key: result for task, result in run_modes(tasks, root=ROOT, jobs=2, timeout=30.0)}
    assert results["flaky"]["outcome"] == "ok" and results["flaky"]["retried"] is True
    # alone: the retry measured after every other child had finished measuring
    assert results["flaky"]["measure_start"] >= results["slow"]["measure_end"]


@pytest.mark.parametrize("message,expected", [
    ("RuntimeError: Unable to initialize backend 'cuda': no supported devices found for platform CUDA", "env-error"),
    ("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8589934592 bytes.", "env-error"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB", "env-error"),
    ("RuntimeError: index_add_cuda_ does not have a deterministic implementation, but you set "
     "'torch.use_deterministic_algorithms(True)'", "raised"),
])
def test_child_classifies_environment_failures(message: str, expected: str) -> None:
    from verifiers.child import _classify

    kind, _, text = message.partition(": ")
    exc = type(kind.rsplit(".", 1)[-1], (Exception,), {})(text)
    assert _classify(exc) == expected


def test_a_recorded_raise_that_was_the_environment_is_read_as_env_error(tmp_path) -> None:
    """A committed run file is never edited: the reader classifies the recorded message."""
    root = _copy(tmp_path)
    _plant(root, eod_distinct=1)
    path = root / "data" / "runs" / "h100-test" / "2026-11-22T234000Z.yaml"
    text = path.read_text()
    planted = yaml.safe_load(text)
    planted["results"][0]["modes"][1].update(
        outcome="raised", distinct=None, message="RuntimeError: Unable to initialize backend 'cuda': no supported "
                                                  "devices found for platform CUDA")
    path.write_text(yaml.safe_dump(planted, sort_keys=False))
    status, findings = _status(root, "tf.math.unsorted_segment_sum", "2.21")
    assert not [f for f in findings if f.code == "KB015"]  # not a contradiction: not a raise at all
    [evidence] = [e for e in status.verified if e.env_id == "h100-test"]
    assert [m.mode for m in evidence.modes] == ["default"]  # the failed mode is no evidence
    loaded = runfile.load_runs(root)
    [mode] = [m for r in loaded if "h100-test" in r.rel for res in r.data["results"] for m in res["modes"]
              if m["mode"] == "EOD"]
    assert mode["outcome"] == "env-error"
    assert "Unable to initialize backend" in path.read_text() and "outcome: raised" in path.read_text()


def test_a_run_of_only_environment_failures_is_no_evidence(tmp_path) -> None:
    root = _copy(tmp_path)
    _plant(root, eod_distinct=1)
    path = root / "data" / "runs" / "h100-test" / "2026-11-22T234000Z.yaml"
    planted = yaml.safe_load(path.read_text())
    for mode in planted["results"][0]["modes"]:
        mode.update(outcome="env-error", distinct=None, message="crashed: killed by signal SIGKILL")
    path.write_text(yaml.safe_dump(planted, sort_keys=False))
    status, findings = _status(root, "tf.math.unsorted_segment_sum", "2.21")
    assert not [e for e in status.verified if e.env_id == "h100-test"]
    assert not [f for f in findings if f.code == "KB015"]
