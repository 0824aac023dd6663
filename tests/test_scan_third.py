"""Causes found on the third frozen scan corpus (benchmarks/scan_frozen3/, docs/scan.md), each fixed
at its cause: one fixture per cause, written from the shape of the code the corpus showed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


_UNET = textwrap.dedent("""\
    {head}from keras.models import *
    from keras.layers import *
    def unet(inputs):
        conv = Conv2D(64, 3, activation="relu", padding="same", kernel_initializer="he_normal")(inputs)
        pool = MaxPooling2D(pool_size=(3, 3), strides=(1, 1))(conv)
        return Model(inputs, MaxPooling2D(pool_size=(2, 2))(pool))
    """)


def test_standalone_keras_layers_run_on_tensorflow_kernels(tmp_path):
    """zhixuhao/unet (76 misses): `from keras.layers import *` with TensorFlow 2.20 and no other Keras
    backend chosen is tf.keras's own package on the TensorFlow backend, so tf.keras.layers.X's
    TensorFlow records (cuDNN convolution, max-pool) are the layer's too, beside Keras's own, with their code
    rules: the 2x2 pool, whose windows tile, is ruled out as `tf.keras.layers.MaxPooling2D(pool_size=(2, 2))` is."""
    every = _scan(tmp_path, {"model.py": _UNET.format(head="")})
    found = {(f.line, f.record, f.level) for f in every}
    assert {(4, "tf.cudnn-autotuning", "nondeterministic"), (4, "tf.cudnn-conv-backprop-data", "nondeterministic"),
            (4, "tf.cudnn-conv-backprop-filter", "nondeterministic"), (4, "keras.unseeded-random", "nondeterministic"),
            (5, "tf.cudnn-maxpool-backprop", "nondeterministic")} <= found, found
    assert not {(6, "tf.cudnn-maxpool-backprop", level) for level in ("nondeterministic", "possible")} & found, found
    assert {f.op for f in every} == {"keras.layers.Conv2D", "keras.layers.MaxPooling2D"}  # named as written


def test_standalone_keras_on_another_backend_has_no_tensorflow_records(tmp_path):
    """KERAS_BACKEND set in code to another backend: no TensorFlow record; set to a value the code does
    not show: the TensorFlow records are possible, naming the backend."""
    jax = _UNET.format(head='import os\nos.environ["KERAS_BACKEND"] = "jax"\n')
    found = _scan(tmp_path, {"model.py": jax})
    assert not [f for f in found if f.record.startswith("tf.")], found
    assert [f.record for f in found if f.record.startswith("keras.")] == ["keras.unseeded-random"]
    chosen = _UNET.format(head='import os, sys\nos.environ["KERAS_BACKEND"] = sys.argv[1]\n')
    found = [f for f in _scan(tmp_path, {"model.py": chosen}) if f.record.startswith("tf.")]
    assert found and {f.level for f in found} == {"possible"}, found
    assert all("Keras runs on TensorFlow" in " ".join(f.depends_on) for f in found), found
    switched = _UNET.format(head='import keras\nkeras.config.set_backend("torch")\n')
    assert not [f for f in _scan(tmp_path, {"model.py": switched}) if f.record.startswith("tf.")]


def test_a_tensorflow_seed_the_program_sets_covers_the_ops_of_its_other_files(tmp_path):
    """tkipf/gcn (the seed set at import in train.py, the dropouts in layers.py) and
    ChenglongChen/tensorflow-DeepFM (the seed set in the method that builds the graph, from an
    attribute): tf.set_random_seed / tf.compat.v1.set_random_seed / tf.random.set_seed with a seed
    that is not None, where the program runs it, seeds the ops it makes without a seed of their own."""
    layers = """\
        import tensorflow as tf
        def layer(x, rate):
            return tf.nn.dropout(x, rate)
        """
    train = """\
        import tensorflow as tf
        from layers import layer
        seed = 123
        tf.set_random_seed(seed)
        out = layer(tf.ones((2, 2)), 0.5)
        """
    assert not [f for f in _scan(tmp_path / "a", {"layers.py": layers, "train.py": train})
                if f.record == "tf.random-seeds"]
    unset = train.replace("tf.set_random_seed(seed)", "tf.set_random_seed(None)")
    assert [(f.path.rsplit("/", 1)[1], f.line) for f in _scan(tmp_path / "b", {"layers.py": layers, "train.py": unset})
            if f.record == "tf.random-seeds"] == [("layers.py", 3), ("train.py", 4)]  # None unsets it
    model = """\
        import tensorflow as tf
        class Model:
            def __init__(self, random_seed=2016):
                self.random_seed = random_seed
                self._init_graph()
            def _init_graph(self):
                self.graph = tf.Graph()
                with self.graph.as_default():
                    tf.compat.v1.set_random_seed(self.random_seed)
                    self.out = tf.nn.dropout(tf.ones((2, 2)), 0.5)
        if __name__ == "__main__":
            Model()
        """
    assert not [f for f in _scan(tmp_path / "c", {"model.py": model}) if f.record == "tf.random-seeds"]


def test_tf1_names_of_sparse_dense_matmul(tmp_path):
    """tkipf/gcn: `tf.sparse_tensor_dense_matmul` (TF 1's name, tf.compat.v1 in TF 2) is
    tf.sparse.sparse_dense_matmul, whose GPU kernel accumulates with atomics."""
    found = _scan(tmp_path, {"layers.py": """\
        import tensorflow as tf
        def dot(x, y, sparse=False):
            if sparse:
                return tf.sparse_tensor_dense_matmul(x, y)
            return tf.compat.v1.sparse_tensor_dense_matmul(x, y)
        """})
    assert [(f.line, f.record) for f in found] == [(4, "tf.sparse-dense-matmul"), (5, "tf.sparse-dense-matmul")], found
