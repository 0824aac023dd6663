"""Causes of the fifth frozen scan corpus's misses and false alarms where a value, a name or a spelling decides
(benchmarks/scan_frozen5/): one fixture per cause, written from the shape of the corpus's code."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_tf_compat_v1_names_are_the_tf2_ops_tensorflow_makes_them(tmp_path):
    """hojonathanho/diffusion (4 misses): under `import tensorflow.compat.v1 as tf`, `tf.nn.dropout` is
    `tf.compat.v1.nn.dropout`, TF 1's endpoint of `tf.nn.dropout`, and `tf.image.random_flip_left_right` the
    very object `tf.image.random_flip_left_right`: both are the TF 2 ops (TensorFlow's own API says so,
    kb/scan/tfcompat_names.py). TF 1's positional arguments are read by TF 1's signature (`keep_prob`, not
    `rate`), and TF 1's `ResizeMethod` as TF 2's; a TF 1-only name keeps its own (a record's alias), and a TF 1
    endpoint that runs another kernel (`tf.compat.v1.nn.ctc_loss`, mozilla/DeepSpeech) is not the TF 2 op."""
    found = _scan(tmp_path, {"m.py": """\
        import tensorflow.compat.v1 as tf
        def f(x, w, ids):
            y = tf.nn.dropout(x, 0.5)
            z = tf.image.random_flip_left_right(x)
            g = tf.gather(w, ids)
            s = tf.math.unsorted_segment_sum(w, ids, 3)
            r = tf.random_uniform([3])
            c = tf.nn.ctc_loss(ids, x, w)
            u = tf.image.resize(x, size=[8, 8], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR, align_corners=True)
            return y, z, g, s, r, c, u
        """}, "tensorflow=2.20")
    got = {(f.line, f.op, f.record) for f in found}
    assert not [f for f in found if f.line == 8], found  # TF 1's ctc_loss runs the CPU CTCLoss op, not TF 2's
    assert {f.record for f in found if f.line == 9} == {"tf.resize-nearest-backprop"}, found  # TF 1's enum
    assert {(3, "tf.nn.dropout", "tf.random-seeds"), (4, "tf.image.random_flip_left_right", "tf.random-seeds"),
            (5, "tf.gather", "tf.gather-backprop"), (6, "tf.math.unsorted_segment_sum", "tf.unsorted-segment-sum"),
            (7, "tf.compat.v1.random_uniform", "tf.random-seeds")} <= got, found
    dropout = next(f for f in found if f.line == 3)
    assert dict(dropout.facts).get("rate") == 0.5, dropout


def test_tf_compat_v1_table_covers_every_recorded_tf_op():
    """The generated table (scripts/tf_compat_names.py) names every function or class op a record lists as
    `tf.X` that TensorFlow also exports as `tf.compat.v1.X`: a record added later is not silently missed."""
    import gzip

    from kb.scan import tfcompat_names
    from kb.scan.run import index, targets

    wanted = targets(index())[0]
    root = Path(__file__).resolve().parent.parent
    with gzip.open(root / "data" / "api" / "tensorflow.txt.gz", "rt", encoding="utf-8") as handle:
        api = {line.strip() for line in handle}
    missing = [n for n in sorted(wanted) if n in api and not n.startswith(("tf.compat.", "tf.raw_ops."))
               and "tf.compat.v1." + n[3:] in api and not n.rpartition(".")[0].rpartition(".")[2][:1].isupper()
               and n[3:] not in tfcompat_names.SAME and n[3:] not in tfcompat_names.V1
               and n[3:] not in tfcompat_names.OTHER_KERNEL]
    assert not missing, missing


def test_a_name_imported_twice_takes_its_later_import(tmp_path):
    """hexiangnan/neural_collaborative_filtering (5 misses): `from keras.layers.core import Dense` then
    `from keras.layers import ..., Dense` binds Dense to the second import, as Python does; the scan kept the
    first (a Keras 1 module no record names) and lost every Dense. A `try` import still wins over its `except`
    fallback, the module the code is written for."""
    found = _scan(tmp_path, {"m.py": """\
        import keras
        from keras.layers.core import Dense, Lambda
        from keras.layers import Embedding, Input, Dense
        from keras.models import Model
        try:
            from keras.layers import Conv2D
        except ImportError:
            from mylib import Conv2D
        def get_model():
            x = Input(shape=(1,))
            e = Embedding(input_dim=10, output_dim=4, init='uniform')(x)
            y = Dense(1, activation='sigmoid', init='lecun_uniform', name='prediction')(Conv2D(4, 3)(e))
            m = Model(x, y)
            m.fit([1], [1])
            return m
        """}, "tensorflow=2.20")
    got = {(f.line, f.op, f.record) for f in found}
    assert (12, "keras.layers.Dense", "keras.unseeded-random") in got, found
    assert (12, "keras.layers.Conv2D", "keras.unseeded-random") in got, found


def test_a_star_import_of_a_scanned_module_brings_its_framework_imports(tmp_path):
    """shenweichen/DeepCTR-Torch (2 misses): models/onn.py has no import of torch: `from .basemodel import *`
    binds basemodel.py's `nn` (its `import torch.nn as nn`), as Python's star import binds every public name
    of the module, imported modules included; its `nn.Embedding(..., sparse=sparse)` went unseen. The file's
    own binding of a name still wins, and a private name (`_F`) stays behind."""
    found = _scan(tmp_path, {"pkg/__init__.py": "from .onn import ONN\n", "pkg/basemodel.py": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as _F
        from .inputs import *
        class BaseModel(nn.Module):
            pass
        """, "pkg/inputs.py": """\
        import torch.nn.functional as F
        """, "pkg/onn.py": """\
        from .basemodel import *
        class Interac(nn.Module):
            def __init__(self, n, size, sparse=False):
                super(Interac, self).__init__()
                self.emb1 = nn.Embedding(n, size, sparse=sparse)
            def forward(self, x):
                return self.emb1(x) + F.embedding(x, self.emb1.weight) + _F.embedding(x, self.emb1.weight)
        class ONN(BaseModel):
            def __init__(self, n):
                super(ONN, self).__init__()
                self.d = Interac(n, 4, sparse=False)
            def forward(self, x):
                return self.d(x)
        """}, "torch=2.11")
    got = {(Path(f.path).name, f.line, f.record) for f in found}
    assert ("onn.py", 5, "torch.embedding-backward") in got, found
    assert ("onn.py", 7, "torch.embedding-backward") in got, found  # F from inputs.py, through basemodel's star
    assert sorted(f.text for f in found if Path(f.path).name == "onn.py" and f.line == 7) == [
        "F.embedding(...)"], found


def test_a_module_level_loss_takes_the_rank_of_its_calls_in_the_file_functions(tmp_path):
    """salesforce/awd-lstm-lm finetune.py (and pytorch/examples word_language_model): `criterion =
    nn.CrossEntropyLoss()` at module level, called in `evaluate()` and `train()` on `output.view(-1, ntokens)`,
    2-D logits: the 2-D path of the loss runs no atomics (not reported). A function that binds its own
    `criterion` does not speak for the module's; a module's loss called on a 4-D map keeps its finding."""
    found = _scan(tmp_path, {"finetune.py": """\
        import torch
        import torch.nn as nn
        ntokens = 10
        criterion = nn.CrossEntropyLoss()
        def evaluate(model, data, targets):
            output, hidden = model(data)
            output_flat = output.view(-1, ntokens)
            return criterion(output_flat, targets)
        def train(model, data, targets):
            output, hidden = model(data)
            loss = criterion(output.view(-1, ntokens), targets)
            loss.backward()
        def other(criterion, x, y):
            return criterion(x, y)
        """, "seg.py": """\
        import torch
        import torch.nn as nn
        criterion = nn.NLLLoss()
        def train(x, y):
            loss = criterion(x.view(2, 3, 4, 4), y)
            loss.backward()
        def evaluate(x, y):
            return criterion(x.view(-1, 3), y)
        """}, "torch=2.11")
    got = {(Path(f.path).name, f.line, f.record) for f in found}
    assert not any(name == "finetune.py" for name, _, _ in got), found
    assert ("seg.py", 3, "torch.nll-loss") in got, found


def test_a_loader_that_does_not_shuffle_a_dataset_that_draws_nothing_has_no_randomness(tmp_path):
    """jaywalnut310/vits (3 false alarms, RULES R3) and pytorch/examples vae: an eval loader with `shuffle=False`
    and no sampler, over a dataset class whose `__getitem__` (and the methods and functions it runs) draws no
    random number (its `__init__` may shuffle with a fixed seed: the main process does that once), or over a
    torchvision dataset with `ToTensor()` only: its workers have nothing random to seed. A dataset that calls a
    transform it was given, or draws in `__getitem__`, or a loader that shuffles, keeps its finding."""
    found = _scan(tmp_path, {"data_utils.py": """\
        import random
        import torch
        from utils import load_wav
        class TextAudioLoader(torch.utils.data.Dataset):
            def __init__(self, paths):
                self.paths = load_list(paths)
                random.seed(1234)
                random.shuffle(self.paths)
            def get_audio(self, filename):
                audio = load_wav(filename)
                return torch.load(filename + ".spec.pt") if audio is None else audio / 32768.0
            def __getitem__(self, index):
                return self.get_audio(self.paths[index])
            def __len__(self):
                return len(self.paths)
        class Augmented(torch.utils.data.Dataset):
            def __init__(self, paths, transform):
                self.paths = load_list(paths)
                self.transform = transform
            def __getitem__(self, index):
                return self.transform(self.paths[index])
        class Cropped(torch.utils.data.Dataset):
            def __getitem__(self, index):
                start = torch.randint(0, 10, (1,))
                return start
        def load_list(path):
            return open(path).read().split()
        """, "utils.py": """\
        def load_wav(path):
            return None
        """, "train.py": """\
        import torch
        from torch.utils.data import DataLoader
        from torchvision import datasets, transforms
        from data_utils import TextAudioLoader, Augmented, Cropped
        def run():
            eval_dataset = TextAudioLoader("val.txt")
            eval_loader = DataLoader(eval_dataset, num_workers=8, shuffle=False, batch_size=4)
            kwargs = {'num_workers': 1, 'pin_memory': True}
            test_loader = torch.utils.data.DataLoader(
                datasets.MNIST('../data', train=False, transform=transforms.ToTensor()),
                batch_size=4, shuffle=False, **kwargs)
            a = DataLoader(Augmented("x", lambda p: p), num_workers=8, shuffle=False)
            b = DataLoader(Cropped(), num_workers=8, shuffle=False)
            c = DataLoader(eval_dataset, num_workers=8, shuffle=True)
            d = DataLoader(datasets.MNIST('../data', transform=transforms.RandomCrop(20)), num_workers=2)
            kw = {'num_workers': 2}
            kw.update({'shuffle': True})
            e = DataLoader(eval_dataset, **kw)
            return eval_loader, test_loader, a, b, c, d, e
        """}, "torch=2.11")
    lines = sorted(f.line for f in found if Path(f.path).name == "train.py" and f.record == "torch.data-loader-workers")
    assert lines == [12, 13, 14, 15, 18], found


def test_a_histogram_without_weights_counts_ones(tmp_path):
    """borisdayma/dalle-mini (2 false alarms, RULES R3): `jnp.histogram(x, bins=...)` without `weights` adds
    ones into its bins (jax's histogram: `weights = ones_like(a)`), counts exact in any order; with weights, by
    keyword or position, the scatter-add of floats stays a finding."""
    found = _scan(tmp_path, {"m.py": """\
        import jax
        import jax.numpy as jnp
        def stats(x, w):
            a, _ = jnp.histogram(x, bins=10)
            b, _ = jnp.histogram(x, bins=10, weights=w)
            c, _ = jnp.histogram(x, 10, None, w)
            return a, b, c
        print(jax.jit(stats)(jnp.ones(3), jnp.ones(3)))
        """}, "jax=0.8")
    assert sorted(f.line for f in found if f.record == "jax.scatter-add") == [5, 6], found


def test_convert_to_tensor_of_a_dense_value_has_no_indexed_slices(tmp_path):
    """hojonathanho/diffusion (3 false alarms): `tf.convert_to_tensor` of a NumPy value (drawn from a
    `np.random.RandomState`, also through `a, b = rng.randn(...), rng.rand(...)`) or of a Python number is dense:
    no tf.IndexedSlices to reduce. A value the code does not show (gradients) keeps its finding."""
    found = _scan(tmp_path, {"m.py": """\
        import numpy as np
        import tensorflow as tf
        def f(grads, x):
            rand = np.random.RandomState(1234)
            logits = rand.randn(64, 10)
            a1, a2 = rand.randn(4, 2), rand.rand(4, 2)
            b = tf.convert_to_tensor(logits)
            c = tf.convert_to_tensor(a1) + tf.convert_to_tensor(a2)
            d = tf.convert_to_tensor(np.zeros(3))
            e = tf.convert_to_tensor(3.0)
            g = tf.convert_to_tensor(grads)
            return b, c, d, e, g
        """}, "tensorflow=2.20")
    assert [f.line for f in found if f.record == "tf.convert-to-tensor-indexed-slices"] == [11], found


def test_memory_filled_whole_by_the_next_in_place_write_is_not_read_uninitialised(tmp_path):
    """kuangliu/pytorch-cifar efficientnet and salesforce/awd-lstm-lm (2 false alarms): `mask = torch.empty(...)`
    then `mask.bernoulli_(p)` as the next statement, and `w.new().resize_((n, 1)).bernoulli_(p)`: every element
    is written before it is read. An in-place op that reads its tensor first (`add_`) writes nothing whole, and
    a read before the fill keeps the finding."""
    found = _scan(tmp_path, {"m.py": """\
        import torch
        def drop_connect(x, drop_ratio):
            mask = torch.empty([x.shape[0], 1, 1, 1], dtype=x.dtype, device=x.device)
            mask.bernoulli_(1.0 - drop_ratio)
            return x * mask
        def embedded_dropout(weight, dropout=0.1):
            return weight.new().resize_((weight.size(0), 1)).bernoulli_(1 - dropout) / (1 - dropout)
        def added(n):
            return torch.empty(n).add_(1)
        def read_first(n):
            buf = torch.empty(n)
            print(buf.sum())
            buf.zero_()
            return buf
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory") == [9, 11], found


def test_accumulating_ones_counts_exactly(tmp_path):
    """deepmind/jraph (3 false alarms) and deepmind/graph_nets (1): `jax.ops.segment_sum(jnp.ones_like(data),
    ids, n)` and `tf.scatter_nd(indices=..., updates=tf.ones_like(idx), ...)` add ones: counts, exact in any
    order (RULES R3). Float data, and a name that is not only ones, keep their findings."""
    found = _scan(tmp_path, {"j.py": """\
        import jax
        import jax.numpy as jnp
        def segment_mean(data, segment_ids, num_segments):
            nominator = jax.ops.segment_sum(data, segment_ids, num_segments)
            denominator = jax.ops.segment_sum(jnp.ones_like(data), segment_ids, num_segments)
            count_edges = lambda x: jax.ops.segment_sum(jnp.ones_like(x), x, num_segments)
            ones = jnp.ones((3,))
            also = jax.ops.segment_sum(ones, segment_ids, num_segments)
            return nominator / denominator, count_edges(segment_ids), also
        print(jax.jit(segment_mean)(jnp.ones(3), jnp.zeros(3, int), 2))
        """, "t.py": """\
        import tensorflow as tf
        def split(repeats, x, ids):
            scatter_indices = tf.cumsum(repeats, exclusive=True)
            block = tf.scatter_nd(indices=tf.expand_dims(scatter_indices, axis=1),
                                  updates=tf.ones_like(scatter_indices), shape=[10])
            return block, tf.math.unsorted_segment_sum(x, ids, 3), tf.math.unsorted_segment_sum(tf.ones_like(x), ids, 3)
        """}, "tensorflow=2.20,jax=0.8")
    got = sorted((Path(f.path).name, f.line) for f in found if f.record in (
        "jax.segment-reductions", "tf.scatter-nd", "tf.unsorted-segment-sum"))
    assert got == [("j.py", 4), ("t.py", 6)], found


def test_a_seed_that_is_a_number_by_construction_seeds_the_op(tmp_path):
    """shenweichen/DeepCTR (3 false alarms): `Dropout(rate, seed=self.seed)` where the layer's `__init__` sets
    `self.seed = seed` from `seed=1024`, and `seed=self.seed + i` (arithmetic: None would raise): the op has its
    own seed. An attribute that may be None (`seed=None`) keeps the finding."""
    found = _scan(tmp_path, {"layers.py": """\
        import tensorflow as tf
        from tensorflow.keras.layers import Dropout, Layer
        class DNN(Layer):
            def __init__(self, rate=0.5, seed=1024, **kwargs):
                self.rate = rate
                self.seed = seed
                super(DNN, self).__init__(**kwargs)
            def build(self, input_shape):
                self.dropout_layers = [Dropout(self.rate, seed=self.seed + i) for i in range(3)]
                self.dropout = Dropout(self.rate, seed=self.seed)
        class Open(Layer):
            def __init__(self, rate=0.5, seed=None, **kwargs):
                self.seed = seed
                super(Open, self).__init__(**kwargs)
            def build(self, input_shape):
                self.dropout = Dropout(0.5, seed=self.seed)
        """}, "tensorflow=2.20")
    assert [f.line for f in found if f.record in ("tf.random-seeds", "keras.unseeded-random")] == [16], found


def test_a_tf_dropout_of_rate_zero_draws_nothing(tmp_path):
    """tkipf/gae (RULES F2-3): a TensorFlow dropout whose rate is the Python number 0 (`rate=0.`, or TF 1's
    `keep_prob=1.0` / `1 - 0.` through tf.compat.v1) returns its input without a random op. A rate the code
    does not fix keeps the finding."""
    found = _scan(tmp_path, {"m.py": """\
        import tensorflow as tf
        def f(x, p):
            a = tf.nn.dropout(x, rate=0.0)
            b = tf.nn.dropout(x, 0.)
            c = tf.compat.v1.nn.dropout(x, keep_prob=1.0)
            d = tf.compat.v1.nn.dropout(x, 1 - 0.)
            e = tf.compat.v1.nn.dropout(x, 1 - p)
            return a, b, c, d, e
        """}, "tensorflow=2.20")
    assert [f.line for f in found if f.record == "tf.random-seeds"] == [7], found
