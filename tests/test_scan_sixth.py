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


def test_a_scan_of_dot_resolves_imports_through_the_working_directorys_own_name(tmp_path, monkeypatch):
    """google-deepmind/dm-haiku's examples/ (the measure scans it as `kb scan .` from that folder): train.py
    imports `from examples.imagenet import dataset`, a name that starts above the scanned folder. A scan of
    its full path resolved it; a scan of `.` did not, and called dataset.py a file no entry point runs (3
    risky sites were notes). Both now read the same files."""
    import json
    import os
    import subprocess
    import sys

    root = tmp_path / "repo" / "examples"
    (root / "imagenet").mkdir(parents=True)
    (root / "imagenet" / "dataset.py").write_text(
        "import tensorflow as tf\n\n\ndef load(ds):\n    return ds.shuffle(100)\n", encoding="utf-8")
    (root / "imagenet" / "train.py").write_text(
        "from examples.imagenet import dataset\nimport tensorflow as tf\n\n"
        "if __name__ == '__main__':\n    dataset.load(tf.data.Dataset.range(10))\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}

    def findings(target: str) -> list[tuple[str, int, str]]:
        done = subprocess.run([sys.executable, "-m", "kb", "scan", target, "--versions", "tensorflow=2.20",
                               "--format", "json"], cwd=root, env=env, capture_output=True, text=True)
        doc = json.loads(done.stdout)
        return sorted((os.path.relpath(f["path"], root) if os.path.isabs(f["path"]) else f["path"], f["line"],
                       f["record"]) for f in doc["findings"])

    dot, full = findings("."), findings(str(root))
    assert ("imagenet/dataset.py", 5, "tf.random-seeds") in full
    assert dot == full
