"""TF 1 code of the thirteenth measured corpus (issue 45): a `tf.layers` call that reuses the variables
another call created draws no initial value, and a gather from a visibly constant tensor sends no gradient
into it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"


def _scan(tmp_path: Path, text: str):
    (tmp_path / "model.py").write_text(textwrap.dedent(text))
    return scan([str(tmp_path)], given=pins.parse_versions(VERSIONS))


def _lines(report, record: str) -> list[int]:
    return sorted(f.line for f in report.findings if f.record == record)


def test_a_tf1_layer_call_that_reuses_variables_draws_no_initial_value(tmp_path):
    report = _scan(tmp_path, """\
        import tensorflow as tf

        def build(x, y, z):
            a = tf.layers.dense(x, 10, name='f1')                        # creates f1's kernel: reported
            b = tf.layers.dense(y, 10, name='f1', reuse=True)            # reuses it: draws nothing
            c = tf.compat.v1.layers.dense(z, 10, name='f1', reuse=True)  # the same, by TF 1's compat name
            d = tf.layers.dense(z, 10, name='f2', reuse=tf.AUTO_REUSE)   # may create: reported
            e = tf.layers.dense(z, 10, name='f3', reuse=False)           # creates: reported
            with tf.variable_scope('tower', reuse=True):
                g = tf.layers.dense(z, 10, name='f4')                    # in a reusing scope: draws nothing
            with tf.variable_scope('tower2', reuse=tf.AUTO_REUSE):
                h = tf.layers.dense(z, 10, name='f5')                    # may create: reported
            return a, b, c, d, e, g, h
        """)
    assert _lines(report, "keras.unseeded-random") == [4, 7, 8, 12]


def test_a_gather_from_a_visibly_constant_tensor_sends_no_gradient_into_it(tmp_path):
    report = _scan(tmp_path, """\
        import numpy as np
        import tensorflow as tf

        def build(cate_list, ids, n):
            table = tf.convert_to_tensor(cate_list, dtype=tf.int64)
            fixed = tf.constant([1, 2, 3])
            frozen = tf.Variable(np.zeros((n, 4)), trainable=False)
            emb = tf.get_variable('emb', [n, 8])
            trained = tf.Variable(tf.zeros((n, 4)))
            a = tf.gather(table, ids)          # a constant table: no gradient reaches it
            b = tf.gather(fixed, ids)          # a constant
            c = tf.gather(frozen, ids)         # a non-trainable variable
            d = tf.gather(emb, ids)            # a trained table: reported
            e = tf.gather(trained, ids)        # a trainable variable: reported
            f = tf.gather(tf.constant(np.arange(4)), ids)  # a constant made in place
            return a, b, c, d, e, f
        """)
    assert _lines(report, "tf.gather-backprop") == [13, 14]


def test_a_gather_of_one_literal_column_adds_into_each_element_once(tmp_path):
    report = _scan(tmp_path, """\
        import tensorflow as tf

        def build(u_emb, i_emb, cols, k):
            hidden_units = 128
            a = tf.gather(u_emb, [0], axis=-1)                  # one column: never repeats
            b = tf.gather(u_emb, [-1], axis=-1)                 # one column
            c = tf.gather(i_emb, [hidden_units // 2], axis=-1)  # one Python int: one column
            d = tf.gather(u_emb, cols, axis=-1)                 # not visible: reported
            e = tf.gather(u_emb, [k], axis=-1)                  # k may hold many indices: reported
            f = tf.gather(u_emb, [0, 0], axis=-1)               # a repeat: reported
            return a, b, c, d, e, f
        """)
    assert _lines(report, "tf.gather-backprop") == [8, 9, 10]
