"""Code that only an older framework release runs (rosinality/stylegan2-pytorch's conv2d_gradfix, found on
the seventh frozen corpus): a branch under a `torch.__version__` test that fails at the pinned release never
runs, nor does a function whose every call is in such a branch (kb/scan/versiongate.py)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files

_TRAIN = """\
    import torch
    from ops import gradfix
    def main(x, w):
        y = gradfix.conv2d(x, w) + gradfix.old(x, w)
        y.sum().backward()
    if __name__ == "__main__":
        main(torch.randn(1, 3, 8, 8, device="cuda"), torch.randn(4, 3, 3, 3, device="cuda", requires_grad=True))
    """

_GRADFIX = """\
    import torch
    from torch.nn import functional as F
    def could_use_op(input):
        if input.device.type != "cuda":
            return False
        if any(torch.__version__.startswith(x) for x in ["1.7.", "1.8."]):
            return True
        return False
    def conv2d(input, weight):
        if could_use_op(input):
            return gradfix(weight.shape).apply(input, weight)
        return F.conv2d(input, weight)
    def gradfix(shape):
        class Conv2d(torch.autograd.Function):
            @staticmethod
            def forward(ctx, input, weight):
                return F.conv2d(input, weight)
        return Conv2d
    def old(x, w):
        if torch.__version__.startswith("1."):
            return F.conv2d(x, w)
        if torch.__version__.startswith("2.1"):
            return F.conv2d(x, w)
        return F.conv2d(x, w)
    """


def _lines(found: list[lookup.Finding]) -> list[int]:
    return sorted({f.line for f in found if f.path.endswith("gradfix.py")})


def test_a_branch_only_an_older_torch_takes_never_runs(tmp_path: Path):
    """At torch 2.11, `could_use_op` never returns True (its only `return True` needs 1.7 or 1.8), so
    `gradfix` is called only where nothing runs and its convolution is no finding (a note); nor is the one
    under `startswith("1.")`. `startswith("2.1")` holds at 2.11 and the fallbacks run: those stay findings."""
    found = scan_files(tmp_path, {"train.py": _TRAIN, "ops/__init__.py": "", "ops/gradfix.py": _GRADFIX},
                       "torch=2.11")
    assert _lines(found) == [12, 23, 24], found


def test_at_the_older_release_the_branch_runs(tmp_path: Path):
    """At torch 1.8 the same code takes the custom op and the `startswith("1.")` branch, not the 2.1 one."""
    found = scan_files(tmp_path, {"train.py": _TRAIN, "ops/__init__.py": "", "ops/gradfix.py": _GRADFIX},
                       "torch=1.8")
    assert _lines(found) == [12, 17, 21, 24], found  # startswith("2.1") fails at 1.8
