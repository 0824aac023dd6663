"""Code that no program calls in a script repository whose programs import modules by a computed name
(kb/scan/unreached.py): charlesq34/pointnet (forty-first corpus, 13 false alarms, RULES L1-1, R4)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files


def test_an_unnamed_helper_of_a_module_a_computed_import_may_load(tmp_path: Path) -> None:
    """train.py loads its model by `importlib.import_module(FLAGS.model)`; the model modules take `tf_util` through a
    `sys.path` entry. Any module may then run, but a helper of tf_util that no file names (`conv3d`) is never called:
    a note. The helper the models call (`conv2d`) keeps its findings."""
    found = scan_files(tmp_path, {"train.py": """\
        import importlib
        import os
        import sys
        import tensorflow as tf
        BASE_DIR = os.path.dirname(os.path.abspath(__file__))
        sys.path.append(os.path.join(BASE_DIR, "models"))
        MODEL = importlib.import_module(sys.argv[1])
        def train():
            pred = MODEL.get_model(tf.zeros([8, 32, 32, 3]))
            loss = tf.reduce_mean(pred)
            return tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss)
        if __name__ == "__main__":
            train()
        """, "models/cls.py": """\
        import os
        import sys
        BASE_DIR = os.path.dirname(os.path.abspath(__file__))
        sys.path.append(os.path.join(BASE_DIR, "../utils"))
        import tf_util
        def get_model(x):
            return tf_util.conv2d(x, 8)
        """, "utils/tf_util.py": """\
        import tensorflow as tf
        def conv2d(x, n):
            kernel = tf.Variable(tf.zeros([3, 3, int(x.shape[-1]), n]))
            return tf.nn.conv2d(x, kernel, [1, 1, 1, 1], "SAME")
        def conv3d(x, n):
            kernel = tf.Variable(tf.zeros([3, 3, 3, int(x.shape[-1]), n]))
            return tf.nn.conv3d(x, kernel, [1, 1, 1, 1, 1], "SAME")
        """}, "tensorflow=2.20")
    live = {(Path(f.path).name, f.line) for f in found if f.record.startswith("tf.cudnn")}
    notes = {(Path(f.path).name, f.line) for f in scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20")).notes
             if f.record.startswith("tf.cudnn")}
    assert ("tf_util.py", 4) in live, found
    assert ("tf_util.py", 7) in notes and not notes & live, (notes, live)
