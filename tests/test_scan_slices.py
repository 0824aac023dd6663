"""`tf.convert_to_tensor` is reported only where its value may be a tf.IndexedSlices (kb/scan/slices.py): one
that comes from a gradient API or is not visible and named after gradients. Seven tuning corpora's 14 false
alarms (SASRec's `is_training` placeholder, gpt-2's `past_length + tf.range(n)`, tacotron's learning rate,
stylegan's learning-rate placeholder, graph_nets' sizes) converted values that come from no gradient."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str]) -> list[lookup.Finding]:
    return scan_files(tmp_path, files, "tensorflow=2.20")


def test_convert_to_tensor_of_a_value_from_no_gradient_is_a_note(tmp_path):
    """Dense: a placeholder passed in by the file's calls, arithmetic on a parameter the file's calls pass
    `0` or `tf.shape(...)` for, a config's attribute, a parameter no call passes that is not named after
    gradients. Kept: `tape.gradient`'s result, a pair of `compute_gradients`' list, `tf.IndexedSlices(...)`,
    a parameter the file's call passes gradients for, and one named after gradients that no call passes."""
    found = _scan(tmp_path, {"m.py": """\
        import tensorflow as tf
        def expand(value):
            return tf.convert_to_tensor(value)
        def positions(tokens, past_length):
            return expand(past_length + tf.range(3))
        def model(x, past=None):
            past_length = 0 if past is None else tf.shape(past)[-2]
            return positions(x, past_length)
        def ff(inputs, is_training):
            return tf.convert_to_tensor(is_training)
        def build(x, hp):
            training = tf.compat.v1.placeholder(tf.bool, shape=())
            y = ff(x, training)
            return y, tf.convert_to_tensor(hp.learning_rate)
        def optimizer(learning_rate):
            return tf.convert_to_tensor(learning_rate, name="lr")
        def step(model, loss, opt, emb, ids):
            with tf.GradientTape() as tape:
                out = model(ids)
            grads = tape.gradient(out, model.trainable_variables)
            a = tf.convert_to_tensor(grads[0])
            for g, v in opt.compute_gradients(loss):
                b = tf.convert_to_tensor(g)
            c = tf.convert_to_tensor(tf.IndexedSlices(emb, ids))
            return a, b, c, clip(grads[1])
        def clip(t):
            return tf.convert_to_tensor(t)
        def summed(sparse_grad):
            return tf.convert_to_tensor(sparse_grad)
        """})
    lines = sorted(f.line for f in found if f.record == "tf.convert-to-tensor-indexed-slices" and f.level != "note")
    assert lines == [21, 23, 24, 27, 29], found
