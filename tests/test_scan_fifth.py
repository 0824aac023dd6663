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
