"""Causes found on the fourth frozen scan corpus (benchmarks/scan_frozen4/, docs/scan.md), each fixed
at its cause: one fixture per cause, written from the shape of the code the corpus showed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import lookup, pins
from kb.scan.run import scan


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(source), encoding="utf-8")
    return list(scan([str(tmp_path)], given=pins.parse_versions(versions)).findings)


def test_tf1_names_of_random_ops_and_softmax_xent(tmp_path):
    """graykode/nlp-tutorial's TF 1 scripts: `tf.random_normal`, `tf.truncated_normal`, `tf.random_uniform`
    (TF 1's names of tf.random.*, tf.compat.v1 in TF 2) draw from the unseeded generator unless a seed is
    given, by keyword or position; `tf.nn.softmax_cross_entropy_with_logits_v2` is the fused kernel."""
    found = _scan(tmp_path, {"nnlm.py": """\
        import tensorflow as tf
        W = tf.Variable(tf.random_normal([3, 4]))
        V = tf.Variable(tf.random_normal([3, 4], seed=1))
        U = tf.truncated_normal([2, 2])
        T = tf.random_uniform([2], 0, 1, tf.float32, 3)
        cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=W, labels=V))
        """})
    assert [(f.line, f.record, f.level) for f in found] == [
        (2, "tf.random-seeds", "nondeterministic"), (4, "tf.random-seeds", "nondeterministic"),
        (6, "tf.fused-softmax-xent", "nondeterministic")], found
