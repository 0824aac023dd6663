"""TensorFlow 1 graph seeds the eighth corpus's tuning found read wrong: which graph a `tf.set_random_seed`
seeds, and which ops are built on it. Each fixture is a folder of tests/fixtures/scanseeds/, scanned as a copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

FIXTURES = Path(__file__).parent / "fixtures" / "scanseeds"


def _scan(tmp_path: Path, name: str, versions: str = "tensorflow=2.20") -> list:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return [f for f in scan([str(root)], given=pins.parse_versions(versions)).findings if not f.note]


def _sites(found: list, record: str) -> list[tuple[str, int]]:
    return sorted((f"{Path(f.path).name}" + (f"#cell{f.cell}" if getattr(f, "cell", None) else ""), f.line)
                  for f in found if f.record == record)


def test_a_graph_reset_after_the_seed_drops_it(tmp_path):
    """deepmind/graph_nets notebooks (6 misses of the second corpus): `tf.set_random_seed(SEED)` in an early
    cell, then `tf.reset_default_graph()` in a later one before the model is built: the reset makes a new
    default graph with no graph seed, so the ops built after it (in the cell, or in a function the cell
    calls) are unseeded. The scan counted the seed as applied to the whole notebook."""
    found = _sites(_scan(tmp_path, "reset_nb"), "tf.random-seeds")
    assert len(found) == 2, found


def test_a_graph_reset_before_the_seed_keeps_it(tmp_path):
    """mozilla/DeepSpeech's order: `tf.reset_default_graph()` then `tf.set_random_seed(...)`, then the build:
    the seed is set on the fresh graph, and the dropout built after it follows it."""
    assert _sites(_scan(tmp_path, "reset_before"), "tf.random-seeds") == []


def test_a_graph_reset_in_a_function_drops_the_module_seed(tmp_path):
    """A seed set at module level and a `main()` that resets the default graph before it builds: the ops
    main builds are on the new graph, without the seed (the module-seeded rule counted the seed too)."""
    assert _sites(_scan(tmp_path, "reset_in_main"), "tf.random-seeds") == [("train.py", 7)]


def test_absl_app_run_calls_the_main_it_is_given(tmp_path):
    """mozilla/DeepSpeech's `absl.app.run(main)` (and `tf.compat.v1.app.run()`, which runs the `__main__`
    module's `main`): the program calls main, so the seed main sets holds in its run. The scan said "main()
    is called (this program does not call it)" and counted the seeding as conditional."""
    assert _sites(_scan(tmp_path, "app_run"), "tf.random-seeds") == []
    assert _sites(_scan(tmp_path, "app_run_tf"), "tf.random-seeds") == []


_NUMPY_SEEDED = '''import numpy as np
import tensorflow as tf


def init_tf(np_seed):
    {seeding}
    tf_seed = np.random.randint(1 << 31)
    tf.compat.v1.set_random_seed(tf_seed)


def main():
    init_tf(1000)
    return tf.nn.dropout(tf.zeros([8]), rate=0.5)


main()
'''


def test_a_seed_drawn_from_numpy_after_the_function_seeds_numpy_is_fixed(tmp_path):
    """NVlabs/stylegan's `tflib.init_tf` seeds NumPy, then draws the TensorFlow graph seed from it
    (`np.random.randint(1 << 31)`): after `np.random.seed(<fixed>)` in the same body, that draw is the same
    number every run, so `tf.set_random_seed` of it is the seeding fix. The scan read the draw as unseeded
    (RULES X2-2) and kept the dropout. A NumPy seed set only under an `if`, or from a value that may be None,
    or none at all, still leaves the TensorFlow seed drawn unseeded."""
    def found(seeding: str) -> list:
        root = tmp_path / str(abs(hash(seeding)))
        root.mkdir()
        (root / "train.py").write_text(_NUMPY_SEEDED.format(seeding=seeding))
        return _sites([f for f in scan([str(root)], given=pins.parse_versions("tensorflow=2.20")).findings
                       if not f.note], "tf.random-seeds")
    assert found("np.random.seed(1000)") == []
    assert found("np.random.seed(seed=1000)") == []
    assert found("pass") == [("train.py", 13)]
    assert found("if np_seed is not None: np.random.seed(np_seed)") == [("train.py", 13)]
    assert found("np.random.seed(None)") == [("train.py", 13)]


_ORDER_FILES = {
    "oracle.py": '''import tensorflow as tf


class Oracle(object):
    def __init__(self, n):
        tf.set_random_seed(66)
        self.w = tf.Variable(tf.random_normal([n, n]))
''',
    "gen.py": '''import tensorflow as tf


class Gen(object):
    def __init__(self, n):
        self.w = self.init_matrix([n, n])

    def init_matrix(self, shape):
        return tf.Variable(tf.random_normal(shape))
''',
    "disc.py": '''import tensorflow as tf


class Disc(object):
    def __init__(self, n):
        self.w = tf.Variable(tf.random_uniform([n, n]))
''',
    "train.py": '''import tensorflow as tf
from gen import Gen
from oracle import Oracle
from disc import Disc


def main():
    gen = Gen(4)
    oracle = Oracle(4)
    disc = Disc(4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())


if __name__ == "__main__":
    main()
''',
}


def test_a_seed_set_in_a_constructor_seeds_only_what_is_built_after_it(tmp_path):
    """LantaoYu/SeqGAN: `TARGET_LSTM.__init__` calls `tf.set_random_seed(66)`; main builds the Generator
    first, then the TARGET_LSTM, then the Discriminator. The graph seed holds for the ops made after the
    call (the oracle's own draw after the seeding, the Discriminator's), not for the Generator's, made
    before it on a graph with no seed yet. The scan credited the seed to every file of the run."""
    for name, text in _ORDER_FILES.items():
        (tmp_path / name).write_text(text)
    found = [f for f in scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20")).findings if not f.note]
    assert _sites(found, "tf.random-seeds") == [("gen.py", 9)]


_GUARDED_FILES = {
    "tfutil.py": '''import numpy as np
import tensorflow as tf


def init_tf():
    if tf.get_default_session() is None:
        tf.set_random_seed(1234)
        tf.InteractiveSession()
''',
    "train.py": '''import tensorflow as tf
import tfutil


def train():
    noise = tf.random_normal([8, 4])
    return noise


if __name__ == "__main__":
    tfutil.init_tf()
    train()
''',
}


def test_a_seed_under_a_first_use_guard_holds(tmp_path):
    """tkarras/progressive_growing_of_gans's `init_tf`: `if tf.get_default_session() is None:` seeds the graph
    and opens the default session, once per process. A process starts with no default session, so the
    first call (train.py's, before the graph is built) seeds the graph. The scan read the guard as a
    condition the seed may not hold under."""
    for name, text in _GUARDED_FILES.items():
        (tmp_path / name).write_text(text)
    found = [f for f in scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20")).findings if not f.note]
    assert _sites(found, "tf.random-seeds") == []
