"""False alarms of the tenth corpus where the code does fix the draw (a seed never None) or the call is a
look-alike (an lmdb transaction's `put`): one fixture per cause, with the calls that must stay reported."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_seed_never_none_fixes_the_op(tmp_path):
    """`seed=seed` where every assignment of the name in the function is arithmetic or an int, and
    `seed=SEEDS[0]` of a module-level tuple of ints: the op has its own seed (a nested function binding the
    same name to a tuple, which is no None either, does not hide it). An omitted seed, `seed=None`,
    a parameter defaulting to None and a name once assigned None stay reported."""
    found = _scan(tmp_path, {"data.py": """\
        import jax
        import tensorflow as tf
        SEEDS = (42, 17)
        MAYBE = (42, None)
        def load(split, given=None):
            seed = (jax.process_index() * 3) + split
            ds = tf.data.Dataset.random(seed=seed)
            a = tf.random.uniform([2], seed=SEEDS[0])
            b = tf.random.uniform([2], seed=SEEDS[1])
            c = tf.random.uniform([2])
            d = tf.random.uniform([2], seed=None)
            e = tf.random.uniform([2], seed=given)
            other = 3
            if split:
                other = None
            f = tf.random.uniform([2], seed=other)
            g = tf.random.uniform([2], seed=MAYBE[1])
            def pair(s1, s2):
                seed = (s1, s2)
                return tf.random.stateless_uniform([2], seed=seed)
            return ds, a, b, c, d, e, f, g, pair
        """})
    assert sorted((f.line, f.record) for f in found if f.record == "tf.random-seeds") == [
        (10, "tf.random-seeds"), (11, "tf.random-seeds"), (12, "tf.random-seeds"), (16, "tf.random-seeds"),
        (17, "tf.random-seeds")], found


def test_lmdb_transaction_put_is_no_tensor_put(tmp_path):
    """`txn.put(key, value)` of an lmdb transaction (`with env.begin(write=True) as txn`, `env` from
    `lmdb.open`) is a key-value store's write, not Tensor.put; a tensor's `.put` stays reported."""
    found = _scan(tmp_path, {"cache.py": """\
        import lmdb
        import torch
        def build(path, items):
            with lmdb.open(path, map_size=1 << 30) as env:
                with env.begin(write=True) as txn:
                    for k, v in items:
                        txn.put(k, v)
            env2 = lmdb.open(path)
            txn2 = env2.begin(write=True)
            txn2.put(b"k", b"v")
            t = torch.zeros(8)
            t.put(torch.tensor([1, 1]), torch.tensor([1.0, 2.0]))
            return t
        """})
    assert sorted((f.line, f.record) for f in found if f.record == "torch.put-no-accumulate") == [
        (12, "torch.put-no-accumulate")], found
