"""Causes of the sixth frozen corpus's misses (benchmarks/scan_frozen6/), fixed after its measure: tuned on
it, so not a measure of it."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files

MODEL = '''
class StandardizedConv2D(tf.keras.layers.Conv2D):
    def call(self, x):
        return super().call(x)


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.conv = StandardizedConv2D(8, 3)
        self.pool = tf.keras.layers.MaxPool2D(3, 2, padding="same")
        self.head = tf.keras.layers.Dense(10)

    def call(self, x):
        return self.head(tf.reduce_mean(self.pool(self.conv(x)), axis=[1, 2]))


model = Net()
model.compile(optimizer="sgd", loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
model.fit(tf.random.normal([8, 32, 32, 3]), tf.one_hot(tf.zeros([8], tf.int32), 10), epochs=1)
'''


def _found(tmp_path: Path, header: str) -> set[tuple[int, str]]:
    return {(f.line, f.record) for f in scan_files(tmp_path, {"train.py": header + MODEL}, "tensorflow=2.20")
            if not f.note}


def test_tensorflow_compat_v2_is_tensorflows_own_api(tmp_path):
    """google-research/big_transfer's bit_tf2 (`import tensorflow.compat.v2 as tf`): every `tf.X` there is TF 2's
    own `tf.X`; the scan named them `tensorflow.compat.v2.X`, which no record lists, and reported nothing of
    its model (17 risky entries: convolutions of a Conv2D subclass, the max-pool, the fused loss)."""
    plain = _found(tmp_path / "plain", "import tensorflow as tf\n")
    compat = _found(tmp_path / "compat", "import tensorflow.compat.v2 as tf\n")
    assert plain, "the model's convolution, pool and loss are findings"
    assert compat == plain
