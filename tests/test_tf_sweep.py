"""The CPU sweep (kb.sweep): classification on a tiny TensorFlow subset and a tiny Keras subset
per backend (JAX, PyTorch), one evidence file per Keras backend, and the harness's restart of a
worker that crashes or hangs (a fake worker, no framework)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kb.sweep import harness

ROOT = Path(__file__).resolve().parents[1]

# Plans and runs each case in one interpreter (one TensorFlow import), once per mode: enough for
# `raises`, `same` and a seeded sequence; differences across processes need the real sweep's
# separate processes (python -m kb.sweep tensorflow), which a stateful kernel cached in one
# interpreter cannot stand in for.
PROBE = textwrap.dedent("""
    import json, sys
    from kb.sweep import harness, tf_worker as w
    tf = w._tf()
    tf.config.experimental.enable_op_determinism()
    out = {}
    for op in ("tf.raw_ops.RandomUniform", "tf.raw_ops.Add", "tf.nn.fractional_max_pool", "tf.random.uniform"):
        kind = "raw" if op.startswith("tf.raw_ops.") else "public"
        for case in w.plan_one(tf, {"op": op, "kind": kind})["cases"]:
            modes = {}
            for m in case["modes_run"]:
                tf.random.set_seed(None)  # one interpreter for every mode: no global seed carried over
                modes[m] = harness.summarize([w.run_case(tf, case, m)])
            out[op + ":" + case["pass"]] = [harness.classify(modes)[0], case["call"], modes]
    print(json.dumps(out))
""")


def _swept():
    pytest.importorskip("tensorflow")
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**harness._env(None), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_tensorflow_subset_classified():
    swept = _swept()
    cls, call, modes = swept["tf.raw_ops.RandomUniform:forward"]
    assert cls == "raises"
    assert call["seed"] == 0 and call["seed2"] == 0
    assert "must have a seed specified" in modes["no-seed"]["raised"]
    assert modes["op-seed"]["raised"] is None and modes["op-seed"]["distinct"] == 1
    assert modes["op-seed"]["within"]  # a seeded sequence: the second call differs, not non-determinism

    assert swept["tf.raw_ops.Add:forward"][0] == "same"
    assert swept["tf.raw_ops.Add:backward"][0] == "same"
    cls, _, modes = swept["tf.nn.fractional_max_pool:forward"]
    assert cls == "raises" and "non-zero seed" in modes["global-seed"]["raised"]  # the global seed does not help
    assert modes["op-seed"]["raised"] is None
    cls, _, modes = swept["tf.random.uniform:forward"]
    assert cls == "raises" and modes["global-seed"]["raised"] is None and modes["op-seed"]["raised"] is None


# The Keras worker on one backend, in one interpreter: a deterministic op, and keras.random.normal
# unseeded and seeded. Two ops keep it to one backend import (a few seconds) per backend.
KERAS_PROBE = textwrap.dedent("""
    import json
    from kb.sweep import harness, keras_worker as w
    keras = w._keras()
    out = {"backend": keras.backend.backend()}
    for op, kind in (("keras.ops.add", "ops"), ("keras.random.normal", "random")):
        case = w.plan_one(keras, {"op": op, "kind": kind})["cases"][0]
        modes = {}
        for m in case["modes_run"]:
            w.setup(keras, m)
            fn, _, _ = w.build(keras, case["spec"], m)
            modes[m] = harness.summarize([{"h1": w._hash(keras, fn()), "h2": w._hash(keras, fn()), "raised": None}])
        out[op] = [harness.classify(modes)[0], case["call"], case["modes_run"], modes]
    print(json.dumps(out))
""")


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_keras_subset_per_backend(backend):
    pytest.importorskip(backend)
    pytest.importorskip("keras")
    done = subprocess.run([sys.executable, "-c", KERAS_PROBE], capture_output=True, text=True, cwd=ROOT, timeout=180,
                          env={**harness._env({"KERAS_BACKEND": backend}), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["backend"] == backend  # the parent's KERAS_BACKEND reached the worker
    cls, _, modes_run, _ = got["keras.ops.add"]
    assert cls == "same" and modes_run == ["no-seed"]  # no random draw: the seed modes are not run
    cls, call, modes_run, modes = got["keras.random.normal"]
    assert modes_run == ["no-seed", "global-seed", "layer-seed"] and call["seed"] is None
    # one interpreter cannot show a difference across processes; a seeded generator moving on can
    assert modes["layer-seed"]["within"] is False  # seed=7 is re-made for each call: the same draw
    assert modes["global-seed"]["within"] is True  # the global SeedGenerator moves on between the two calls


def test_keras_backends_write_their_own_files(tmp_path, monkeypatch, capsys):
    from kb.sweep import __main__ as cli
    from kb.verify import sweepfile

    assert [cli.keras_suite(b) for b in cli.KERAS_BACKENDS] == ["keras", "keras-jax", "keras-torch"]
    for b in cli.KERAS_BACKENDS:  # the GPU sweep reader leaves every Keras backend's file alone
        assert f"x-{cli.keras_suite(b)}.json".endswith(sweepfile.CPU_SWEEP_SUFFIXES)
    monkeypatch.setattr(cli, "environment", lambda: {"env_id": "cpu-test"})
    ran = []

    def fake_sweep(module, plan_args, modes, processes, timeout, env=None, log=None, switch=True):
        ran.append((env["KERAS_BACKEND"], switch))
        return {"plan_s": 0.0, "wall_s": 1.0}, [{"op": "keras.ops.add", "class": "same"}]

    monkeypatch.setattr(harness, "sweep", fake_sweep)
    assert cli.main(["keras", "--backends", "jax,torch", "--out", str(tmp_path / "k.json")]) == 0
    assert ran == [("jax", False), ("torch", False)]  # no switch on those backends: a difference is `differs`
    for b in ("jax", "torch"):
        doc = json.loads((tmp_path / f"k-{b}.json").read_text())
        assert doc["suite"] == f"keras-{b}" and doc["backend"] == b and doc["cases"][0]["backend"] == b
    with pytest.raises(SystemExit) as exc:  # an unknown backend is refused before anything runs
        cli.main(["keras", "--backends", "jax,mxnet", "--no-write"])
    assert exc.value.code == 2 and "mxnet" in capsys.readouterr().err
    assert len(ran) == 2


def test_committed_keras_files_one_backend_each():
    """Each committed Keras sweep file holds one backend's cases, named by its suffix."""
    from kb.sweep.__main__ import keras_suite

    files = sorted((ROOT / "data" / "sweeps").glob("*/*-keras*.json"))
    assert files
    for path in files:
        doc = json.loads(path.read_text())
        backends = {c.get("backend") for c in doc["cases"]}
        assert len(backends) == 1, path.name
        assert path.name.endswith(f"-{keras_suite(backends.pop())}.json") and path.name.endswith(f"-{doc['suite']}.json")


FAKE = textwrap.dedent('''
    import json, os, sys, time
    from kb.protocol import emit, result
    emit({"ready": True})
    for line in sys.stdin:
        i = int(line)
        emit({"start": i})
        if i == 1:
            os._exit(3)           # a crash
        if i == 3:
            time.sleep(60)        # a hang
        print("noise from the framework", flush=True)
        print(json.dumps({"case": {"i": 0, "h1": "not the protocol", "h2": "b"}}), flush=True)  # JSON, no prefix
        result(i, {"i": i, "h1": "a", "h2": "a", "raised": None})
''')


def test_harness_restarts_after_crash_and_hang(tmp_path, monkeypatch):
    (tmp_path / "fakeworker.py").write_text(FAKE)
    monkeypatch.syspath_prepend(str(tmp_path))
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    got = harness.drive("fakeworker", [], 5, timeout=2.0, env=env)
    assert sorted(got) == [0, 1, 2, 3, 4]
    assert "died (exit 3)" in got[1]["error"]
    assert "timed out after 2 s" in got[3]["error"]
    assert got[4]["h1"] == "a"
    assert got[0]["h1"] == "a"  # a JSON line a framework printed without the prefix is not a result


def test_classify():
    across = {"a": harness.summarize([{"h1": "x", "h2": "x", "raised": None}, {"h1": "y", "h2": "y", "raised": None}])}
    assert harness.classify(across)[0] == "silent"  # every mode under the switch (TensorFlow)
    assert harness.classify(across, switch=False)[0] == "differs"  # Keras on JAX or PyTorch: no switch to set
    assert harness.classify({"a": harness.summarize([{"h1": "x", "h2": "z", "raised": None},
                                                     {"h1": "x", "h2": "z", "raised": None}])})[0] == "sequence"
    assert harness.classify({"a": harness.summarize([{"error": "timeout"}, {"error": "timeout"}])})[0] == "error"
    mixed = harness.summarize([{"raised": "boom"}, {"h1": "x", "h2": "x", "raised": None}])
    assert "some processes only" in mixed["error"]


def test_keras_findings_answered_per_backend():
    """Every name a committed Keras sweep file found differing across processes is answered as not
    deterministic for the call the sweep made on that backend (device cpu), with a fix; the same
    ops on a backend where they were identical are not flagged by a backend-only record."""
    import kb
    from kb.verify import sweepfile

    checked = 0
    for path in sorted((ROOT / "data" / "sweeps").glob("*/*-keras*.json")):
        doc = json.loads(path.read_text())
        for case in doc["cases"]:
            call = {**case["call"], "backend": case["backend"]}
            if sweepfile.cpu_class(case["class"], doc["suite"]) in ("silent", "differs") \
                    and case["modes"]["no-seed"]["distinct"] > 1:
                s = kb.status(case["op"], doc["environment"]["packages"]["keras"], device="cpu", call=call)
                assert s.deterministic is False and s.solutions, (path.name, case["op"], call)
                checked += 1
    assert checked >= 190  # three backends, about 65 names each
    for backend in ("jax", "tensorflow"):  # the PyTorch-only records leave the other backends alone
        for op in ("keras.ops.empty", "keras.ops.lstsq"):
            assert kb.status(op, "3.15.1", device="cpu", call={"backend": backend}).deterministic is True
