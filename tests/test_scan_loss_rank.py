"""False alarms of the NLL / cross-entropy record (`torch.nll-loss`: only a 3-D or higher input runs the
spatial kernel) where the loss's input is 2-D but the scan did not see it (benchmarks/scan_frozen9/ and the
earlier corpora): one fixture per cause, written from the shape of the corpus's code."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str = "torch=2.11") -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def _nll(found: list[lookup.Finding]) -> set[tuple[str, int]]:
    """The NLL findings, notes aside (a note is no finding)."""
    return {(Path(f.path).name, f.line) for f in found if f.record == "torch.nll-loss" and f.level != "note"}


def test_a_loss_module_called_where_it_is_made_takes_the_rank_of_its_input(tmp_path):
    """facebookresearch/dino eval_linear.py (2 false alarms): `loss = nn.CrossEntropyLoss()(output, target)`, the
    module made and called at once, on `output = linear_classifier(output)`, a DistributedDataParallel of a
    class whose forward returns `self.linear(x.view(x.size(0), -1))`: (N, classes), 2-D. The input is read
    as that of an assigned loss's calls is; a 4-D input so called keeps its finding, and a module called
    where it is made is no module "never called" (`loss = nn.CrossEntropyLoss()(x, y)` names the loss's value)."""
    found = _scan(tmp_path, {"eval_linear.py": """\
        import torch
        import torch.nn as nn
        class LinearClassifier(nn.Module):
            def __init__(self, dim, n):
                super().__init__()
                self.linear = nn.Linear(dim, n)
            def forward(self, x):
                x = x.view(x.size(0), -1)
                return self.linear(x)
        def train(classifier, inp, target):
            output = classifier(inp)
            loss = nn.CrossEntropyLoss()(output, target)
            loss.backward()
        def main(inp, target):
            classifier = LinearClassifier(8, 10).cuda()
            classifier = nn.parallel.DistributedDataParallel(classifier)
            train(classifier, inp, target)
        def seg(x, y):
            loss = nn.CrossEntropyLoss()(x.view(2, 3, 4, 4), y)
            loss.backward()
        """})
    assert _nll(found) == {("eval_linear.py", 19)}, found
