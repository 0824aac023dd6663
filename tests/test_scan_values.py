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
    `rate`); a TF 1-only name keeps its own (a record's alias)."""
    found = _scan(tmp_path, {"m.py": """\
        import tensorflow.compat.v1 as tf
        def f(x, w, ids):
            y = tf.nn.dropout(x, 0.5)
            z = tf.image.random_flip_left_right(x)
            g = tf.gather(w, ids)
            s = tf.math.unsorted_segment_sum(w, ids, 3)
            r = tf.random_uniform([3])
            return y, z, g, s, r
        """}, "tensorflow=2.20")
    got = {(f.line, f.op, f.record) for f in found}
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
               and n[3:] not in tfcompat_names.SAME and n[3:] not in tfcompat_names.V1]
    assert not missing, missing
