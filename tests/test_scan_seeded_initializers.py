"""Keras layers whose random initializers carry their own seeds (kb/scan/seededinit.py, rule seeded-initializers):
TensorSpeech/TensorFlowTTS's MelGAN layers (forty-fifth corpus, 20 false alarms) take
`kernel_initializer=get_initializer(initializer_seed)`, a module function returning `GlorotNormal(seed=...)`. The same
helper shape returning an unseeded `TruncatedNormal(stddev=...)` (its FastSpeech layers, labelled risky) keeps the
finding, and so does a seeded layer that draws a dropout rate."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_layers_built_with_seeded_initializers(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"melgan.py": """\
        import tensorflow as tf
        def get_initializer(initializer_seed=42):
            return tf.keras.initializers.GlorotNormal(seed=initializer_seed)
        def get_unseeded(initializer_range=0.02):
            return tf.keras.initializers.TruncatedNormal(stddev=initializer_range)
        class Upsample(tf.keras.layers.Layer):
            def __init__(self, filters, initializer_seed, **kwargs):
                super().__init__(**kwargs)
                self.up = tf.keras.layers.Conv2DTranspose(filters, (3, 1), kernel_initializer=get_initializer(initializer_seed))
                self.head = tf.keras.layers.Dense(filters, kernel_initializer=get_unseeded(0.02))
                self.mixed = tf.keras.layers.Dense(filters, kernel_initializer=tf.keras.initializers.HeNormal(seed=7),
                                                   bias_initializer="glorot_uniform")
                self.plain = tf.keras.layers.Dense(filters, kernel_initializer=get_initializer())
        """}, "tensorflow=2.20")
    lines = sorted(f.line for f in found if f.record == "keras.unseeded-random")
    assert lines == [5, 10, 11], found
