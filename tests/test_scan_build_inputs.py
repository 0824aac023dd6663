"""Random draws made only to build a Keras model (kb/scan/dummyinputs.py, rule draw-builds-only): TensorSpeech/
TensorFlowTTS (forty-fifth corpus, 10 false alarms) calls each model once on `tf.random.uniform` fake input, or feeds
the generator's output on to the discriminator, and keeps neither result. A draw whose value a result keeps, or that a
framework function reads, stays a finding."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_fake_inputs_that_only_build_models(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"train.py": """\
        import tensorflow as tf
        class Generator(tf.keras.Model):
            def _build(self):
                fake_mels = tf.random.uniform(shape=[1, 100, 80], dtype=tf.float32)
                self(fake_mels)
        def main(generator, discriminator):
            fake_mels = tf.random.uniform(shape=[1, 100, 80], dtype=tf.float32)
            y_hat = generator(fake_mels)
            discriminator(y_hat)
            noise = tf.random.normal(shape=[1, 100, 80])
            kept = generator(noise)
            total = tf.reduce_sum(tf.random.uniform(shape=[4]))
            return kept, total
        if __name__ == "__main__":
            main(Generator(), Generator())
        """}, "tensorflow=2.20")
    assert sorted(f.line for f in found if f.record == "tf.random-seeds") == [10, 12], found
