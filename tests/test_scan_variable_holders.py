"""Tensor holders of PyTorch before 0.4 (kb/scan/quantized.py): jwyang/faster-rcnn.pytorch (forty-seventh corpus, 8
false alarms of `torch.quantized-resize`) makes `im_data = torch.FloatTensor(1)` at the top of its script, moves it
with `.cuda()`, wraps it in `Variable(im_data)` and resizes `im_data.data` per batch: a float tensor, never a quantized
one. A holder of unknown make keeps its finding."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_a_float_holder_wrapped_in_a_variable(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"trainval_net.py": """\
        import sys
        import torch
        from torch.autograd import Variable
        if __name__ == "__main__":
            im_data = torch.FloatTensor(1)
            other = torch.load(sys.argv[1])
            if torch.cuda.is_available():
                im_data = im_data.cuda()
            im_data = Variable(im_data)
            for batch in range(3):
                im_data.data.resize_(torch.Size([1, 3, 8, 8])).copy_(torch.zeros(1, 3, 8, 8))
                other.data.resize_(torch.Size([4]))
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.quantized-resize") == [12], found
