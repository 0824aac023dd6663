"""Which programs reach the code (issue 45, the ninth corpus): imports that name the code base's own root
package by its clone folder's name, and backward records on code only programs that never differentiate run."""

from __future__ import annotations

import json
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


def test_backward_records_of_files_only_inference_scripts_run_are_notes(tmp_path):
    """BlinkDL/RWKV-LM (forty-ninth corpus, 13 false alarms): `app/run.py` (a script) runs `model_run.py`'s RWKV
    under no gradient, and its compiled kernel's autograd backward (`torch.ops.wkv.backward(...)`,
    `wkv_cuda.backward(...)` of a `cpp_extension.load`) starts no backward pass; `app/train.py` trains `model.py`.
    The inference model's embedding is a note that names why; the trained one stays a finding."""
    report = _scan(tmp_path, {
        "app/run.py": """\
            import torch
            from model_run import RWKV_RNN
            model = RWKV_RNN().cuda()
            with torch.no_grad():
                print(model(torch.zeros(4, dtype=torch.long).cuda()))
            """,
        "app/model_run.py": """\
            import torch
            from torch import nn
            from torch.utils.cpp_extension import load
            wkv_cuda = load(name="wkv", sources=["wkv.cu"])
            class WKV(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x
                @staticmethod
                def backward(ctx, gy):
                    torch.ops.wkv.backward(gy)
                    wkv_cuda.backward(gy)
                    return gy
            class RWKV_RNN(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(10, 4)
                def forward(self, idx):
                    return WKV.apply(self.emb(idx))
            """,
        "app/train.py": """\
            import torch
            from model import GPT
            model = GPT().cuda()
            model(torch.zeros(4, dtype=torch.long).cuda()).sum().backward()
            """,
        "app/model.py": """\
            from torch import nn
            class GPT(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(10, 4)
                def forward(self, idx):
                    return self.emb(idx)
            """})
    emb = {(Path(f.path).name, bool(f.note)) for f in [*report.findings, *report.notes]
           if f.record == "torch.embedding-backward"}
    assert emb == {("model.py", False), ("model_run.py", True)}, emb
    note = next(f.note for f in report.notes if f.record == "torch.embedding-backward")
    assert "no program that runs this file differentiates" in note, note


def test_a_module_whose_only_import_time_calls_are_a_defs_defaults_is_no_script(tmp_path):
    """brightmart/text_classification (forty-ninth corpus, 10 false alarms): HAN_model.py, imported by nothing, defines
    a class whose `__init__` default is `initializer=tf.random_normal_initializer(stddev=0.1)` (a call Python makes at
    import) and a `test()` whose call is commented out: no statement of its own runs anything, so it is no script and
    nothing runs its code. A module with one module-level call of its own (`test()`) is a script."""
    model = """\
        import tensorflow as tf
        class HierarchicalAttention:
            def __init__(self, n, initializer=tf.random_normal_initializer(stddev=0.1)):
                self.w = tf.compat.v1.get_variable("w", [n, n], initializer=initializer)
                self.drop = tf.nn.dropout(self.w, rate=0.5)
        def test():
            HierarchicalAttention(4)
        """
    report = _scan(tmp_path, {
        "han/HAN_model.py": model + "#test()\n",
        "ran/RAN_model.py": model + "test()\n",
        "cnn/train.py": """\
            import tensorflow as tf
            x = tf.Variable(tf.ones([4, 4]))
            with tf.GradientTape() as tape:
                y = tf.nn.dropout(x, rate=0.5)
            tape.gradient(y, x)
            """})
    dropouts = {(Path(f.path).parent.name, bool(f.note)) for f in [*report.findings, *report.notes]
                if f.line == 5 and Path(f.path).name.endswith("_model.py")}
    assert dropouts and all(note for folder, note in dropouts if folder == "han"), dropouts
    assert any(not note for folder, note in dropouts if folder == "ran"), dropouts


def test_a_model_only_an_inference_notebook_builds_keeps_no_backward_records(tmp_path):
    """pierluigiferrari/ssd_keras (fiftieth corpus, 78 false alarms): `models/keras_ssd512.py` is built only by
    `ssd512_inference.ipynb`, which predicts; `ssd300_training.ipynb` trains `models/keras_ssd300.py`. A notebook is a
    program like a script: SSD512's backward records are notes, SSD300's stay findings."""
    def notebook(*sources: str) -> str:
        cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}
                 for source in sources]
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 2})
    model = """\
        from keras.layers import Input, Conv2D
        from keras.models import Model
        def build():
            x = Input(shape=(8, 8, 3))
            y = Conv2D(4, 3)(x)
            z = Conv2D(4, 3)(y)
            return Model(x, z)
        """
    report = _scan(tmp_path, {
        "models/keras_ssd512.py": model, "models/keras_ssd300.py": model,
        "ssd512_inference.ipynb": notebook("import numpy as np\nfrom models.keras_ssd512 import build",
                                           "model = build()\nmodel.predict(np.zeros((1, 8, 8, 3)))"),
        "ssd300_training.ipynb": notebook("import numpy as np\nfrom models.keras_ssd300 import build",
                                          "model = build()\nmodel.compile(loss='mse')\n"
                                          "model.fit(np.zeros((1, 8, 8, 3)), np.zeros((1, 4, 4, 4)))")})
    filters = {(Path(f.path).name, bool(f.note)) for f in [*report.findings, *report.notes]
               if f.record == "tf.cudnn-conv-backprop-filter"}
    assert filters == {("keras_ssd300.py", False), ("keras_ssd512.py", True)}, filters
