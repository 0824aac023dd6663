"""The binding of a name that reaches its use (kb/scan/reaching.py): a later rebinding that may carry a
gradient does not spoil an earlier use of an integer `arange` (google-deepmind/recurrentgemma's sampler)."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_an_earlier_use_of_an_integer_arange_sees_only_the_arange(tmp_path: Path) -> None:
    """`positions = torch.arange(n)`, then `torch.repeat_interleave(positions[None], b)`, then
    `positions = positions + lengths[:, None]`: the repeat reads the arange, which no gradient reaches. A
    use after the rebinding, or a use in a loop that rebinds the name, keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        class Sampler:
            def __init__(self, model):
                self.model = model
            def early(self, tokens, lengths):
                b, n = tokens.shape
                positions = torch.arange(n)
                positions = torch.repeat_interleave(positions[None], b, dim=0)
                positions = positions - n + lengths[:, None]
                return self.model(tokens, positions)
            def late(self, tokens, lengths):
                b, n = tokens.shape
                positions = torch.arange(n)
                positions = positions - n + lengths[:, None]
                return torch.repeat_interleave(positions, b, dim=0)
            def loop(self, tokens, lengths):
                b, n = tokens.shape
                positions = torch.arange(n)
                for _ in range(3):
                    out = torch.repeat_interleave(positions, b, dim=0)
                    positions = lengths * out
                return positions
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.repeat-interleave-backward") == [15, 20], found


def test_a_tensor_of_a_loaded_checkpoint_requires_no_gradient(tmp_path: Path) -> None:
    """`ckpt = torch.load(path, map_location="cpu")`, then `F.interpolate` of `ckpt["model"]["pos_embed"]`
    resized before loading it into a model: a saved state dict holds detached tensors, so no backward pass runs
    through the resize. The same resize of a module's parameter keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        import torch.nn.functional as F
        def adapt(path):
            size = 16
            ckpt = torch.load(path, map_location="cpu")
            pos = ckpt["model"]["pos_embed"]
            return F.interpolate(pos, size=(size, size), mode="bicubic")
        def grown(model, size):
            return F.interpolate(model.pos_embed, size=size, mode="bicubic")
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.interpolate-bicubic-backward") == [9], found


def test_a_write_into_another_buffer_does_not_spoil_the_reaching_binding(tmp_path: Path) -> None:
    """`buf[:, 0] = out[:, 0]` (a value that may carry a gradient written into another tensor) leaves the
    integer `positions = torch.arange(n)` as it was; the same write into a view of `positions` keeps the
    finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        class Sampler:
            def __init__(self, model):
                self.model = model
            def elsewhere(self, tokens, lengths, buf):
                b, n = tokens.shape
                positions = torch.arange(n)
                buf[:, 0] = lengths[:, 0]
                positions = torch.repeat_interleave(positions[None], b, dim=0)
                return self.model(tokens, positions), buf
            def aliased(self, tokens, lengths):
                b, n = tokens.shape
                positions = torch.arange(n)
                row = positions.view(1, n)
                row[:, 0] = lengths[:, 0]
                positions = torch.repeat_interleave(positions[None], b, dim=0)
                return self.model(tokens, positions)
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.repeat-interleave-backward") == [16], found
