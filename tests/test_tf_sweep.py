"""The CPU sweep (kb.sweep): classification on a tiny TensorFlow subset, and the harness's
restart of a worker that crashes or hangs (a fake worker, no framework)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kb.sweep import harness

ROOT = Path(__file__).resolve().parents[1]

# Plans and runs each case in one interpreter (one TensorFlow import), once per mode: enough for
# `raises`, `identical` and a seeded sequence; differences across processes need the real sweep's
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

    assert swept["tf.raw_ops.Add:forward"][0] == "identical"
    assert swept["tf.raw_ops.Add:backward"][0] == "identical"
    cls, _, modes = swept["tf.nn.fractional_max_pool:forward"]
    assert cls == "raises" and "non-zero seed" in modes["global-seed"]["raised"]  # the global seed does not help
    assert modes["op-seed"]["raised"] is None
    cls, _, modes = swept["tf.random.uniform:forward"]
    assert cls == "raises" and modes["global-seed"]["raised"] is None and modes["op-seed"]["raised"] is None


FAKE = textwrap.dedent('''
    import json, os, sys, time
    start = int(sys.argv[sys.argv.index("--start") + 1])
    for i in range(start, 5):
        print(json.dumps({"start": i}), flush=True)
        if i == 1:
            os._exit(3)           # a crash
        if i == 3:
            time.sleep(60)        # a hang
        print("noise from the framework", flush=True)
        print(json.dumps({"i": i, "h1": "a", "h2": "a", "raised": None}), flush=True)
''')


def test_harness_restarts_after_crash_and_hang(tmp_path, monkeypatch):
    (tmp_path / "fakeworker.py").write_text(FAKE)
    monkeypatch.syspath_prepend(str(tmp_path))
    env = {"PYTHONPATH": str(tmp_path)}
    got = harness.drive("fakeworker", [], 5, timeout=2.0, env=env)
    assert sorted(got) == [0, 1, 2, 3, 4]
    assert "exited with code 3" in got[1]["error"]
    assert "timeout" in got[3]["error"]
    assert got[4]["h1"] == "a"


def test_classify():
    assert harness.classify({"a": harness.summarize([{"h1": "x", "h2": "x", "raised": None},
                                                     {"h1": "y", "h2": "y", "raised": None}])})[0] == "differs-across-processes"
    assert harness.classify({"a": harness.summarize([{"h1": "x", "h2": "z", "raised": None},
                                                     {"h1": "x", "h2": "z", "raised": None}])})[0] == "differs-within-process-only"
    assert harness.classify({"a": harness.summarize([{"error": "timeout"}, {"error": "timeout"}])})[0] == "error"
    mixed = harness.summarize([{"raised": "boom"}, {"h1": "x", "h2": "x", "raised": None}])
    assert "some processes only" in mixed["error"]
