"""A repository whose root is a package imported by its own name, its folders without `__init__.py`
(kb/scan/scope.py): google-research/seed_rl (forty-seventh corpus, 60 risky entries read as code nothing runs) says
`from seed_rl.atari import networks` and `from seed_rl.common import utils`, where only the root and one other folder
hold an `__init__.py`; cloned under another name, those imports still name the repository's own modules."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_namespace_folders_under_a_root_package_named_by_its_clone(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"__init__.py": "", "common/utils.py": "def make(x):\n    return x\n",
                                  "atari/networks.py": """\
        import tensorflow as tf
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.conv = tf.keras.layers.Conv2D(8, 3)
            def call(self, x):
                return self.conv(x)
        """, "atari/r2d2_main.py": """\
        import tensorflow as tf
        from seed_rl.atari import networks
        from seed_rl.common import utils
        def main():
            net = utils.make(networks.Net())
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(net(tf.ones((1, 8, 8, 3))))
            return tape.gradient(loss, net.trainable_variables)
        if __name__ == "__main__":
            main()
        """}, "tensorflow=2.20")
    assert ("networks.py", 5) in {(Path(f.path).name, f.line) for f in found if f.record == "tf.cudnn-autotuning"}, found
