"""Module classes whose every instance is called only where no gradient is recorded, followed across files
(kb/scan/heldmodules.py, settled by kb/scan/hostcode.py): causes of false alarms in the tuning corpora
(benchmarks/scan_frozen7/ .. scan_frozen9/), fixed after their measure."""

from __future__ import annotations

from scan_files import scan_files

_METRIC = """
import torch
import torch.nn.functional as F


class Inception(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)

    def forward(self, img):
        x = img.float()
        theta = torch.eye(2, 3, device=x.device)
        x = F.grid_sample(x, self.grid(img) + theta[0, 0], mode="bilinear", align_corners=False)
        return self.head(x)

    def head(self, x):
        return F.interpolate(x, scale_factor=2, mode="bilinear")

    def grid(self, img):
        return torch.zeros(img.shape[0], 4, 4, 2, device=img.device)

    def softmax_model(self):
        return torch.nn.Linear(8, 8)


class Trained(torch.nn.Module):
    def forward(self, img):
        return F.grid_sample(img, img[..., :2], mode="bilinear", align_corners=False)


class Norm(torch.nn.GroupNorm):
    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)
"""

_EVALUATOR = """
import torch
from metric import Inception, Trained


class Evaluator:
    def __init__(self):
        self.inception = Inception()
        self.inception.load_state_dict(torch.load("w.pt"))
        self.inception.eval()
        self.inception.to("cuda")
        self.softmax = self.inception.softmax_model()
        self.other = Trained().cuda()

    def features(self, batch):
        with torch.no_grad():
            return self.inception(batch)

    def loss(self, batch):
        return self.other(batch).sum()


def evaluate(batch):
    net = Inception().cuda()
    with torch.no_grad():
        return net(batch)
"""

_TRAIN = """
import torch
from evaluator import Evaluator, evaluate


def main():
    ev = Evaluator()
    batch = torch.randn(4, 3, 8, 8, device="cuda", requires_grad=True)
    print(ev.features(batch), evaluate(batch))
    loss = ev.loss(batch)
    loss.backward()


if __name__ == "__main__":
    main()
"""


def test_a_metric_network_held_and_called_only_under_no_grad_in_another_file(tmp_path):
    """openai/consistency_models' InceptionV3 (evaluations/inception_v3.py): FIDAndIS holds it as
    `self.inception = InceptionV3()`, moves and loads it (`.eval()`, `.to()`, `.load_state_dict()`, a method
    of its own), and calls it only as `self.inception(batch)` under `torch.no_grad()` in th_evaluator.py; a
    function keeps another instance in a local name called only under no_grad. Its forward, and the methods
    forward calls, never record a gradient, so their backward records (grid_sample, interpolate) are not
    findings, though forward makes a tensor on its input's device (`device=x.device`: GPU code, not host code,
    yet under no_grad it records no gradient all the same), and another class's `super().forward(x)` (a base's
forward, not Inception's) is no use of it. A class whose instance is called where a gradient is recorded (`Trained`) keeps its record."""
    found = scan_files(tmp_path, {"metric.py": _METRIC, "evaluator.py": _EVALUATOR, "train.py": _TRAIN}, "torch=2.11")
    backward = sorted((f.path.rsplit("/", 1)[-1], f.line) for f in found if f.record.endswith("-backward"))
    assert backward == [("metric.py", 29)], found


def test_a_module_class_also_held_where_a_gradient_is_recorded_keeps_its_records(tmp_path):
    """The same Inception, also called by a training step outside torch.no_grad() (or handed on as a value):
    its forward may be differentiated, so the backward records stay."""
    train = _TRAIN.replace("    loss.backward()", "    net = Inception()\n    net(batch).sum().backward()").replace(
        "from evaluator import Evaluator, evaluate", "from evaluator import Evaluator, evaluate\nfrom metric import Inception")
    found = scan_files(tmp_path, {"metric.py": _METRIC, "evaluator.py": _EVALUATOR, "train.py": train}, "torch=2.11")
    backward = sorted({(f.path.rsplit("/", 1)[-1], f.line) for f in found if f.record.endswith("-backward")})
    assert backward == [("metric.py", 14), ("metric.py", 18), ("metric.py", 29)], found


def test_a_holder_called_from_another_file_keeps_the_records(tmp_path):
    """The evaluator's holder also called from the training file (`ev.inception(batch)`, where a gradient is
    recorded): a call of another object's attribute by the holder's name may be that holder, so the class's
    forward keeps its backward records."""
    train = _TRAIN.replace("    loss.backward()", "    ev.inception(batch).sum().backward()")
    found = scan_files(tmp_path, {"metric.py": _METRIC, "evaluator.py": _EVALUATOR, "train.py": train}, "torch=2.11")
    backward = sorted({(f.path.rsplit("/", 1)[-1], f.line) for f in found if f.record.endswith("-backward")})
    assert backward == [("metric.py", 14), ("metric.py", 18), ("metric.py", 29)], found
