"""Causes found on the seventh frozen scan corpus (benchmarks/scan_frozen7/, docs/scan.md), each fixed
at its cause: one fixture per cause, written from the shape of the code the corpus showed."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_tf1_multinomial_is_the_categorical_sampler(tmp_path):
    """openai/gpt-2's `tf.multinomial(logits, num_samples=1)`: TF 1's name (`tf.compat.v1.multinomial`,
    `tf.compat.v1.random.multinomial` in TF 2) of the sampler TensorFlow tells to replace with
    `tf.random.categorical`; unseeded unless `seed` is given (its third parameter, not categorical's fourth)."""
    found = _scan(tmp_path, {"sample.py": """\
        import tensorflow as tf
        def sample(logits):
            a = tf.multinomial(logits, num_samples=1, output_dtype=tf.int32)
            b = tf.multinomial(logits, 1, 7)
            c = tf.compat.v1.random.multinomial(logits, 1)
            d = tf.compat.v1.multinomial(logits, 1, seed=3)
            return a, b, c, d
        """})
    assert [(f.line, f.record, f.level) for f in found] == [
        (3, "tf.random-seeds", "nondeterministic"), (5, "tf.random-seeds", "nondeterministic")], found


def test_an_op_taken_from_tensorflows_private_module_is_the_public_op(tmp_path):
    """openai/glow's memory_saving_gradients.py: `from tensorflow.python.ops import gradients as
    tf_gradients_lib; tf_gradients = tf_gradients_lib.gradients` names the function TensorFlow exports as
    `tf.compat.v1.gradients` (RULES Y4-1), a site of `tf.gradients` named as a value; so is a call through
    the module that defines it. TensorFlow's own table says which private name is which op."""
    found = _scan(tmp_path, {"grads.py": """\
        import tensorflow as tf
        from tensorflow.python.ops import gradients as tf_gradients_lib
        from tensorflow.python.ops import gradients_impl
        tf_gradients = tf_gradients_lib.gradients
        def grads(loss, params):
            a = gradients_impl.gradients(loss, params)
            b = gradients_impl.gradients(loss, params, gate_gradients=True)
            return a, b
        """})
    assert [(f.line, f.record) for f in found] == [(4, "tf.gradient-gating"), (6, "tf.gradient-gating")], found


def test_a_single_literal_index_row_never_repeats(tmp_path):
    """google-research/simclr's cross-replica concat: `tf.scatter_nd(indices=[[replica_id]], updates=[tensor],
    ...)` writes one slice at one index row, so no index repeats and the order of writes changes nothing
    (RULES R3). Two rows may repeat, and `[idx]` may hold many rows (idx a matrix): those stay reported."""
    found = _scan(tmp_path, {"concat.py": """\
        import tensorflow as tf
        def concat(tensor, n, replica, idx):
            a = tf.scatter_nd(indices=[[replica]], updates=[tensor], shape=[n] + tensor.shape.as_list())
            b = tf.scatter_nd([[tf.distribute.get_replica_context().replica_id_in_sync_group]], [tensor], [n, 4])
            c = tf.scatter_nd(indices=[[replica], [idx]], updates=[tensor, tensor], shape=[n, 4])
            d = tf.scatter_nd(indices=idx, updates=tensor, shape=[n, 4])
            e = tf.scatter_nd(indices=[idx], updates=[tensor], shape=[n, 4])
            f = tf.scatter_nd(indices=[[[replica], [idx]]], updates=[tensor], shape=[n, 4])
            return a, b, c, d, e, f
        """})
    assert [(f.line, f.record) for f in found] == [
        (5, "tf.scatter-nd"), (6, "tf.scatter-nd"), (7, "tf.scatter-nd"), (8, "tf.scatter-nd")], found
