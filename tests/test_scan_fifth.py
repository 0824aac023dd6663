"""Causes found on the fifth frozen scan corpus (benchmarks/scan_frozen5/, measured once on 2026-11-28 and
tuned on since), each fixed at its cause: one fixture per cause, written from the shape of the corpus's code."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11,tensorflow=2.20") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_a_python_random_instance_is_no_framework_receiver(tmp_path):
    """google-research/bert (9 false alarms): `rng = random.Random(seed)` is Python's generator, and so is a
    parameter `rng` that every caller of the function passes such an instance for (through a chain of
    functions): rng.shuffle, rng.random are no tf.data.Dataset methods. A tf.data shuffle still is."""
    found = _scan(tmp_path, {"prep.py": """\
        import random
        import tensorflow as tf
        def leaf(docs, rng):
            rng.shuffle(docs)
            return rng.random()
        def make(docs, rng):
            rng.shuffle(docs)
            return leaf(docs, rng)
        def main():
            rng = random.Random(12345)
            docs = [1, 2]
            rng.shuffle(docs)
            make(docs, rng)
            d = tf.data.Dataset.range(3).shuffle(3)
        def other(data):
            data.shuffle(3)
        """})
    assert [(f.line, f.record) for f in found] == [(14, "tf.random-seeds"), (16, "tf.random-seeds")], found


def test_a_program_that_hides_the_gpu_before_importing_the_framework_runs_on_the_cpu(tmp_path):
    """tkipf/gae (3 false alarms): gae/train.py sets CUDA_VISIBLE_DEVICES to "" at module level before it
    imports TensorFlow: its process has no GPU, so a GPU-only record in what only it runs is a note. A
    program that imports the framework first (the setting comes too late) keeps the GPU's answer."""
    from kb.scan import pins
    from kb.scan.run import scan

    scan_files(tmp_path, {"layers.py": """\
        import tensorflow as tf
        def dot(x, y):
            return tf.sparse_tensor_dense_matmul(x, y)
        """, "train.py": """\
        from __future__ import print_function
        import os
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        import tensorflow as tf
        from layers import dot
        print(dot(tf.sparse.eye(3), tf.ones([3, 3])))
        """, "late.py": """\
        import tensorflow as tf
        import os
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        print(tf.sparse_tensor_dense_matmul(tf.sparse.eye(3), tf.ones([3, 3])))
        """}, "tensorflow=2.20")
    report = scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20"))
    assert [(Path(f.path).name, f.record) for f in report.findings] == [("late.py", "tf.sparse-dense-matmul")]
    notes = [f for f in report.notes if Path(f.path).name == "layers.py"]
    assert notes and all("hides the GPU" in f.note for f in notes), report.notes


def test_a_random_default_that_every_call_overrides_never_runs(tmp_path):
    """hojonathanho/diffusion (7 false alarms, RULES C2.7): `noise_fn=tf.random_normal` as a parameter's default
    is not run when every call of the function or method in the code base (by name, in any file) passes the
    parameter, by keyword or position. A function some call of which leaves the default keeps its finding, and
    so does a library's (deepmind/jraph: its users may leave the default)."""
    files = {"utils.py": """\
        import tensorflow as tf
        def noise_like(shape, noise_fn=tf.random_normal, repeat=False):
            return noise_fn(shape=shape)
        def kept(shape, noise_fn=tf.random_normal):
            return noise_fn(shape=shape)
        class Diffusion:
            def p_sample(self, x, *, noise_fn):
                return noise_like(x.shape, noise_fn, False)
            def p_sample_loop(self, shape, noise_fn=tf.random_normal):
                return self.p_sample(noise_fn(shape=shape), noise_fn=noise_fn)
        """, "run.py": """\
        import tensorflow as tf
        from utils import Diffusion, kept
        d = Diffusion()
        print(d.p_sample_loop([2], noise_fn=tf.random.stateless_normal))
        print(kept([2]))
        """}
    found = _scan(tmp_path / "scripts", files)
    assert [(Path(f.path).name, f.line, f.record) for f in found] == [("utils.py", 4, "tf.random-seeds")], found
    found = _scan(tmp_path / "library", {**files, "setup.py": "from setuptools import setup\nsetup(name='u')\n"})
    assert [(Path(f.path).name, f.line) for f in found] == [("utils.py", 2), ("utils.py", 4), ("utils.py", 9)], found
