"""kb.probe: the diff names exactly the planted place and step, and identical runs pass.

The framework tests read the logs of docs/probe.md's examples (tests/probe_runs.py: each a real
`kb probe run`, made once per test run and shared with test_probe_docs.py): run 2 carries the
planted difference, and one more unplanted run of the same script (or the unplanted example)
must be identical to run 1, so the same trainings check both "differs here" and "identical".
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import probe_runs
from kb.probe.cli import EXIT_DIFFER, EXIT_SAME, EXIT_USAGE
from kb.probe.diff import Run, compare

ROOT = Path(__file__).resolve().parents[1]


def _write(d: Path, records: list[dict], meta: dict | None = None, places: dict | None = None) -> Path:
    d.mkdir(parents=True)
    (d / "probes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (d / "meta.json").write_text(json.dumps(meta or {"frameworks": {"tensorflow": "2.21.0"}}))
    (d / "places.json").write_text(json.dumps(places or {}))
    return d


def _rec(seq, step, kind, name, h, **extra):
    return dict(seq=seq, step=step, kind=kind, name=name, hash=h, shape=[2], dtype="float32", **extra)


def _kb(capsys, *args: str) -> tuple[int, str]:
    """`kb ARGS` in this process (the CLI's own entry point, no interpreter start-up): (exit code, stdout)."""
    from kb.cli import main

    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().out


def test_diff_first_difference_upstream_downstream_and_kb_answer(tmp_path: Path, capsys) -> None:
    stats = {"min": 0.0, "max": 1.0, "mean": 0.5, "sample": [0.0, 1.0]}
    common = [_rec(0, 0, "forward", "dense", "aa", framework="tensorflow", device="gpu", stats=stats)]
    a = _write(tmp_path / "a", common + [
        _rec(1, 1, "forward", "input", "i1"),
        _rec(2, 1, "forward", "dense", "d1", framework="tensorflow", device="gpu", stats=stats),
        _rec(3, 1, "forward", "out", "o1")], places={"dense": {"type": "tf.keras.layers.Dense"}})
    b = _write(tmp_path / "b", common + [
        _rec(1, 1, "forward", "input", "i1"),
        _rec(2, 1, "forward", "dense", "d2", framework="tensorflow", device="gpu",
             stats={**stats, "sample": [0.0, 1.25]}),
        _rec(3, 1, "forward", "out", "o2")])
    report = compare(Run(str(a)), Run(str(b)))
    first = report["first"]
    assert (first["step"], first["kind"], first["name"], first["upstream_identical"]) == (1, "forward", "dense", 1)
    assert first["max_abs_diff_at_least"] == 0.25
    assert [d["name"] for d in report["downstream"]] == ["out"]
    answer = report["blame"]["answers"][0]
    assert answer["op"] == "tf.keras.layers.Dense" and answer["deterministic"] is False and answer["fixes"]
    assert report["message"].startswith("differs first at step 1, forward of `dense` (tf.keras.layers.Dense): ")
    code, out = _kb(capsys, "probe", "diff", str(a), str(b), "--json")
    assert code == EXIT_DIFFER and json.loads(out)["first"]["name"] == "dense"
    assert _kb(capsys, "probe", "diff", str(a), str(a))[0] == EXIT_SAME


def test_diff_bad_input_exit_2_without_pydantic(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "probes.jsonl").write_text('{"step": 0}\nnot json\n')
    # pydantic unimportable: the diff path is standard library + rich only
    code = ("import sys; sys.modules['pydantic'] = None; from kb.cli import main; "
            f"raise SystemExit(main(['probe', 'diff', {str(bad)!r}, {str(bad)!r}]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == EXIT_USAGE
    assert "probes.jsonl:1: not a probe record" in out.stderr and "Traceback" not in out.stderr
    assert _kb(capsys, "probe", "diff", str(tmp_path / "missing"), str(bad))[0] == EXIT_USAGE
    assert _kb(capsys, "probe", "run", "--out", str(tmp_path / "r"))[0] == EXIT_USAGE  # no command


def test_import_kb_does_not_import_probe() -> None:
    code = "import sys, kb; kb.status('tf.nn.bias_add', '1.15'); print(any(m.startswith('kb.probe') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _report(a: Path, b: Path) -> dict:
    """What `kb probe diff --json a b` prints, as data."""
    return json.loads(json.dumps(compare(Run(str(a)), Run(str(b)))))


def _planted_run(name: str, clean: Path | None = None) -> dict:
    """The example's planted run 2 against run 1; run 1 against an unplanted run must be identical."""
    _, runs = probe_runs.example(name)
    planted = _report(runs / "run1", runs / "run2")
    clean = _report(runs / "run1", clean or probe_runs.clean_run(name))
    assert clean["identical"] and clean["first"] is None  # only run 2 is planted
    assert not planted["identical"] and planted["first"]["upstream_identical"] > 0
    assert all(d["step"] >= 1 for d in planted["downstream"])
    return planted


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")


def test_torch_backward_plant_is_blamed_on_the_consumer() -> None:
    _need("torch")
    # PLANT=backward; the unplanted example's run 1 is the clean run to compare with
    report = _planted_run("torch-mix", clean=probe_runs.example("torch-identical")[1] / "run1")
    first = report["first"]
    # the gradient arriving at the embedding's output is the first to differ: made by the
    # backward of its consumer, `mix`, whose own output gradient was identical
    assert (first["step"], first["kind"], first["name"]) == (1, "dout", "embedding")
    blame = report["blame"]
    assert blame["place"] == "Model" and "torch.Tensor.index_add_" in blame["ops"]
    assert {a["place"] for a in blame["answers"]} == {"mix"}
    assert all(a.get("note") == "no KB record" or "deterministic" in a for a in blame["answers"])


def _blocks(model: str) -> dict:
    report = _report(*(probe_runs.example(f"torch-{model}")[1] / run for run in ("run1", "run2")))
    assert not report["identical"]  # MODEL=model PLANT=1: run 2 is planted
    return report


def test_torch_attention_backward_is_blamed_on_the_functional_call() -> None:
    _need("torch")
    report = _blocks("attention")
    first, blame = report["first"], report["blame"]
    assert (first["step"], first["kind"], first["name"]) == (1, "dout", "attn.qkv")
    assert blame["place"] == "attn"  # the block's own calls, not the innocent qkv Linear
    sdpa = [a for a in blame["answers"] if a["op"] == "torch.nn.functional.scaled_dot_product_attention"]
    assert len(sdpa) == 1 and sdpa[0]["call"]["is_causal"] is True and sdpa[0]["call"]["input.ndim"] == 4
    assert sdpa[0]["call"].get("backend") in ("flash", "efficient", "math", "cudnn")
    assert "torch.nn.functional.linear" not in [a["op"] for a in blame["answers"] if a["place"] == "attn.qkv"]
    assert blame["certainty"].startswith("one of these")


def test_torch_embedding_backward_is_blamed_on_the_embedding_call() -> None:
    _need("torch")
    report = _blocks("embedding")
    first, blame = report["first"], report["blame"]
    assert (first["kind"], first["name"]) == ("grad", "embedding.weight")
    assert blame["place"] == "embedding" and blame["ops"] == ["torch.nn.functional.embedding"]
    assert blame["answers"][0]["shown"] == "embedding()" and blame["answers"][0]["call"]["input.dtype"] == "int64"


def test_blame_ranks_the_call_the_kb_knows_as_non_deterministic_first(tmp_path: Path) -> None:
    from kb.probe.blame import blame_calls

    calls = [{"op": "torch.Tensor.view", "call": {"input.ndim": 3}, "from": ["block.qkv"], "shown": "view()"},
             {"op": "torch.Tensor.index_add_", "call": {"dim": 0, "input.ndim": 2}, "from": ["block.qkv"],
              "shown": "index_add_(dim=0)"},
             {"op": "torch.nn.functional.relu", "call": {}, "from": ["input"], "shown": "relu()"}]
    places = {"block": {"calls": calls, "children": {"block.qkv": ["input"]}, "parent": "M"},
              "block.qkv": {"parent": "block", "type": "torch.nn.Linear", "leaf": True}}
    rec = _rec(5, 0, "dout", "block.qkv", "x", framework="pytorch", device="gpu")
    run = Run(str(_write(tmp_path / "a", [rec], meta={"frameworks": {"pytorch": "2.11.0"}}, places=places)))
    blame = blame_calls(rec, (rec, dict(rec, hash="y")), {}, run)
    assert blame["place"] == "block" and blame["ops"] == ["torch.Tensor.index_add_", "torch.Tensor.view"]
    top = blame["answers"][0]
    assert top["deterministic"] is False and top["fixes"][0]["code"] == "PT_DET"
    assert blame["certainty"].startswith("`index_add_(dim=0)` is the only call here the KB knows")


def test_first_only_and_sampled_statistics(tmp_path: Path) -> None:
    _need("torch")
    import torch

    from kb import probe

    logs = []
    for run in (1, 2):
        probe.configure(tmp_path / f"r{run}", stats_every=2)
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        handle = probe.watch(model, opt)
        for step in range(4):
            x = torch.ones(3, 4) * (1 + (run == 2 and step >= 2) * 1e-6)
            model(x).sum().backward()
            opt.step()
            opt.zero_grad()
        handle.remove()
        probe.close()
        logs.append(Run(str(tmp_path / f"r{run}")))
    with_stats = {s for s, recs in logs[0].steps.items() if all("stats" in r for r in recs)}
    without = {s for s, recs in logs[0].steps.items() if not any("stats" in r for r in recs)}
    assert with_stats == {0, 2} and without == {1, 3}
    full, short = compare(*logs), compare(*logs, first_only=True)
    assert full["first"] == short["first"] and full["first"]["step"] == 2
    # the planted difference is in the data: the model's input is the first record that differs,
    # and no module is blamed for it
    assert (full["first"]["kind"], full["first"]["name"]) == ("input", "Sequential")
    assert full["blame"]["answers"] == [] and "the model's input differs" in full["blame"]["how"]
    assert short["downstream_count"] is None and full["downstream_count"] > 0


def test_jax_plant_inside_jit_and_nested_structures() -> None:
    _need("jax")
    report = _planted_run("jax")  # PLANT=forward
    first = report["first"]
    assert (first["step"], first["kind"], first["name"]) == (1, "forward", "pool")
    assert report["blame"]["ops"] == ["jax.ops.segment_sum"]
    names = {(d["name"], d.get("path", "")) for d in report["downstream"]}
    assert ("out", ".pred") in names and ("out", ".loss['loss']") in names  # named tuple of dict


def test_tf_function_backward_plant_names_the_producing_layer() -> None:
    _need("tensorflow")
    report = _planted_run("tensorflow")  # PLANT=backward
    first = report["first"]
    assert (first["step"], first["kind"], first["name"], first["produced_by"]) == (1, "dout", "embedding", "mix")
    assert report["blame"]["type"] == "__main__.Mix"
    assert "in the backward of `mix`" in report["message"]
    assert not any(d["kind"] == "forward" and d["step"] == 1 for d in report["downstream"])  # forward untouched
