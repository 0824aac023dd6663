"""Code that no program calls in a script repository whose programs import modules by a computed name
(kb/scan/unreached.py): charlesq34/pointnet (forty-first corpus, 13 false alarms, RULES L1-1, R4)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files


def test_an_unnamed_helper_of_a_module_a_computed_import_may_load(tmp_path: Path) -> None:
    """train.py loads its model by `importlib.import_module(FLAGS.model)`; the model modules take `tf_util` through a
    `sys.path` entry. Any module may then run, but a helper of tf_util that no file names (`conv3d`) is never called:
    a note. The helper the models call (`conv2d`) keeps its findings."""
    found = scan_files(tmp_path, {"train.py": """\
        import importlib
        import os
        import sys
        import tensorflow as tf
        BASE_DIR = os.path.dirname(os.path.abspath(__file__))
        sys.path.append(os.path.join(BASE_DIR, "models"))
        MODEL = importlib.import_module(sys.argv[1])
        def train():
            pred = MODEL.get_model(tf.zeros([8, 32, 32, 3]))
            loss = tf.reduce_mean(pred)
            return tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss)
        if __name__ == "__main__":
            train()
        """, "models/cls.py": """\
        import os
        import sys
        BASE_DIR = os.path.dirname(os.path.abspath(__file__))
        sys.path.append(os.path.join(BASE_DIR, "../utils"))
        import tf_util
        def get_model(x):
            return tf_util.conv2d(x, 8)
        """, "utils/tf_util.py": """\
        import tensorflow as tf
        def conv2d(x, n):
            kernel = tf.Variable(tf.zeros([3, 3, int(x.shape[-1]), n]))
            return tf.nn.conv2d(x, kernel, [1, 1, 1, 1], "SAME")
        def conv3d(x, n):
            kernel = tf.Variable(tf.zeros([3, 3, 3, int(x.shape[-1]), n]))
            return tf.nn.conv3d(x, kernel, [1, 1, 1, 1, 1], "SAME")
        """}, "tensorflow=2.20")
    live = {(Path(f.path).name, f.line) for f in found if f.record.startswith("tf.cudnn")}
    notes = {(Path(f.path).name, f.line) for f in scan([str(tmp_path)], given=pins.parse_versions("tensorflow=2.20")).notes
             if f.record.startswith("tf.cudnn")}
    assert ("tf_util.py", 4) in live, found
    assert ("tf_util.py", 7) in notes and not notes & live, (notes, live)


def test_a_module_whose_names_the_code_base_lists_after_a_computed_import(tmp_path: Path) -> None:
    """junyanz/BicycleGAN (twenty-fourth corpus, 19 risky entries the previous rule lost): `importlib.import_module(
    "models." + name + "_model")`, then `for name, cls in modellib.__dict__.items()` takes the model class no file
    names; the networks it builds (`networks.define_D(...)`) run, so their findings stay."""
    found = scan_files(tmp_path, {"train.py": """\
        import sys
        import models
        if __name__ == "__main__":
            model = models.find_model_using_name(sys.argv[1])()
            model.train()
        """, "models/__init__.py": """\
        import importlib
        def find_model_using_name(model_name):
            modellib = importlib.import_module("models." + model_name + "_model")
            for name, cls in modellib.__dict__.items():
                if name.lower() == model_name + "model":
                    return cls
        """, "models/gan_model.py": """\
        import torch
        from . import networks
        class GanModel:
            def __init__(self):
                self.net = networks.define_D(3)
            def train(self):
                out = self.net(torch.zeros(1, 3, 8, 8, device="cuda"))
                out.sum().backward()
        """, "models/networks.py": """\
        import torch.nn as nn
        def define_D(n):
            return nn.Conv2d(n, 8, 3)
        """}, "torch=2.11")
    assert [(Path(f.path).name, f.line) for f in found if f.record == "torch.cudnn-convolution"] == [("networks.py", 3)]


def test_a_class_only_imported_by_a_module_that_uses_it_in_dead_code(tmp_path: Path) -> None:
    """ermongroup/ncsn (forty-second corpus, 14 false alarms, RULES L1-1, R4): scorenet.py takes `ResnetBlock` by
    `from .pix2pix import ..., \\` and uses it only in a class nothing builds. The import binds the name; it is no use,
    so ResnetBlock's convolution never runs (a note). The block the trained model builds keeps its finding, and so does a
    class imported under another name (`from models.score import Score as Model`: Model's uses are Score's;
    gymnax-blines' `from utils.ppo import train_ppo as train_fn`, which the first version of this rule lost)."""
    files = {"train.py": """\
        import torch
        from models.score import Score as Model
        if __name__ == "__main__":
            model = Model().cuda()
            model(torch.zeros(1, 3, 8, 8, device="cuda")).sum().backward()
        """, "models/__init__.py": "", "models/score.py": """\
        import torch.nn as nn
        from .blocks import Used, \\
            Unused
        class Score(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = Used()
            def forward(self, x):
                return self.net(x)
        class Dead(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = Unused()
        """, "models/blocks.py": """\
        import torch.nn as nn
        class Used(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
            def forward(self, x):
                return self.conv(x)
        class Unused(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
        """}
    found = scan_files(tmp_path, files, "torch=2.11")
    live = {(Path(f.path).name, f.line) for f in found if f.record == "torch.cudnn-convolution"}
    assert live == {("blocks.py", 5)}, found
