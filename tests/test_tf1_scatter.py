"""TF 1's scatter functions on a variable (`tf.scatter_sub`, `tf.compat.v1.scatter_sub`, ...) run the kernels of
the tf.Variable scatter methods (tensorflow/python/ops/state_ops.py at 2.20): the record tf.variable-scatter lists
them as aliases, so kb.status answers them and kb scan reports them (facenet's center loss was a miss)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import kb
from kb.scan import pins
from kb.scan.run import scan


def test_status_answers_tf1_scatter_functions_as_the_variable_methods() -> None:
    for op in ("tf.compat.v1.scatter_sub", "tf.scatter_add", "tf.compat.v1.scatter_update"):
        answer = kb.status(op, "2.20")
        assert answer.deterministic is False, op
        assert [s.id for s in answer.sources] == ["tf.variable-scatter"], op


def test_scan_reports_a_tf1_scatter_on_a_variable(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import tensorflow as tf
        centers = tf.compat.v1.get_variable("centers", [10, 4], trainable=False)

        def center_loss(features, label):
            diff = tf.gather(centers, label) - features
            update = tf.scatter_sub(centers, label, diff)
            again = tf.compat.v1.scatter_add(centers, label, diff)
            return update, again

        loss = center_loss(tf.zeros([2, 4]), tf.constant([1, 1]))
        """))
    report = scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20"))
    assert sorted(f.line for f in report.findings if f.record == "tf.variable-scatter") == [6, 7], report.findings
