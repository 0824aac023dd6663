"""Which programs reach the code (issue 45, the ninth corpus): imports that name the code base's own root
package by its clone folder's name, and backward records on code only programs that never differentiate run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"


def _scan(root: Path, files: dict[str, str]):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return scan([str(root)], given=pins.parse_versions(VERSIONS))


def test_an_import_naming_the_root_package_by_its_clone_name_reaches_the_file(tmp_path):
    root = tmp_path / "checkout-with-another-name"  # the code imports itself as `proj`, the folder it is cloned to
    report = _scan(root, {
        "__init__.py": "",
        "aug/__init__.py": "",
        "aug/ops.py": """\
            import tensorflow.compat.v1 as tf
            def flip(image):
                if tf.random_uniform([]) > 0.5:
                    return image[::-1]
                return image
            """,
        "trainer/__init__.py": "",
        "trainer/train.py": """\
            from proj.aug import ops
            def main():
                return ops.flip(1)
            if __name__ == "__main__":
                main()
            """})
    seeds = [f.line for f in report.findings if f.record == "tf.random-seeds"]
    assert seeds == [3]
    assert not [n for n in report.notes if n.record == "tf.random-seeds"]


_MODEL = """\
    import tensorflow.compat.v1 as tf
    def head(x, positions, bias):
        return tf.nn.bias_add(tf.gather(x, positions), bias)
    """


def test_an_export_program_of_a_root_package_that_trains_elsewhere_runs_no_backward_pass(tmp_path):
    """albert's export_checkpoints.py: a program (a __main__ block) in a folder with __init__.py that no
    installable package holds, which builds the graph and saves it; the training program of the same code base
    differentiates, but does not run the export program's own code, so its backward records are not reported
    there. The shared model file, which the training program runs, keeps them."""
    export = """\
        import tensorflow.compat.v1 as tf
        import model
        def build(x, positions, bias):
            out = tf.gather(x, positions)
            return tf.nn.bias_add(model.head(out, positions, bias), bias)
        if __name__ == "__main__":
            build(1, 2, 3)
        """
    train = """\
        import tensorflow.compat.v1 as tf
        import model
        def main():
            loss = model.head(1, 2, 3)
            tf.train.AdamOptimizer(0.1).minimize(loss)
        if __name__ == "__main__":
            main()
        """
    report = _scan(tmp_path / "repo", {"__init__.py": "", "model.py": _MODEL, "export.py": export, "train.py": train})
    backward = {(Path(f.path).name, f.line) for f in report.findings if f.record.endswith("backprop")}
    assert backward == {("model.py", 3)}, backward


def test_a_branch_that_raises_in_training_mode_runs_no_backward_pass(tmp_path):
    """Tacotron-2's incremental CausalConv1D.call: after `if self.training: raise`, the branch runs only in
    synthesis, where nothing is differentiated; the layer's normal branch, which training runs, keeps its record."""
    layer = """\
        import tensorflow.compat.v1 as tf
        class Conv:
            def call(self, x, bias, incremental=False):
                if incremental:
                    if self.training:
                        raise RuntimeError('incremental step only supported during synthesis')
                    return tf.nn.bias_add(x, bias)
                assert self.kw
                return tf.nn.bias_add(x * 2, bias)
        """
    train = """\
        import tensorflow.compat.v1 as tf
        from layer import Conv
        def main():
            loss = Conv().call(1, 2)
            tf.train.AdamOptimizer(0.1).minimize(loss)
        if __name__ == "__main__":
            main()
        """
    report = _scan(tmp_path / "repo", {"layer.py": layer, "train.py": train})
    backward = {(Path(f.path).name, f.line) for f in report.findings if f.record.endswith("backprop")}
    assert backward == {("layer.py", 9)}, backward


def test_a_mapped_function_that_draws_through_the_root_package_named_by_its_clone_name(tmp_path):
    """sam's dataset_source.py maps `self._apply_image_augmentations`, which calls the augmentation module it
    imports as `from sam.datasets import augmentation`: the parallel map draws, a finding."""
    source = """\
        import tensorflow as tf
        from proj.datasets import augmentation
        class Source:
            def _augment(self, example):
                return augmentation.flip(example)
            def get_train(self):
                return tf.data.Dataset.range(4).map(self._augment, num_parallel_calls=tf.data.experimental.AUTOTUNE)
        def main():
            Source().get_train()
        if __name__ == "__main__":
            main()
        """
    augmentation = """\
        import tensorflow as tf
        def flip(example):
            return tf.image.random_flip_left_right(example)
        """
    report = _scan(tmp_path / "checkout", {"__init__.py": "", "datasets/__init__.py": "",
                                           "datasets/source.py": source, "datasets/augmentation.py": augmentation})
    mapped = [f.line for f in report.findings if f.record == "tf.data-loader-parallelism"]
    assert mapped == [7], mapped


def test_a_training_program_that_imports_its_optimizer_through_the_root_package_name_trains(tmp_path):
    """albert's run_pretraining.py: `from albert import optimization`, whose create_optimizer differentiates,
    names the root package by its clone's name; the program trains, so its own backward records stay findings."""
    optim = """\
        import tensorflow.compat.v1 as tf
        def train(loss):
            return tf.train.AdamOptimizer(0.1).minimize(loss)
        """
    train = """\
        import tensorflow.compat.v1 as tf
        from proj import model
        from proj import optim as optimization
        def main(x, positions):
            loss = model.head(tf.gather(x, positions), positions, 1)
            optimization.train(loss)
        if __name__ == "__main__":
            main(tf.get_variable("x", [3, 4]), tf.constant([0]))
        """
    report = _scan(tmp_path / "checkout", {"__init__.py": "", "model.py": _MODEL, "optim.py": optim, "train.py": train})
    backward = {(Path(f.path).name, f.line) for f in report.findings if f.record.endswith("backprop")}
    assert ("train.py", 5) in backward, backward
