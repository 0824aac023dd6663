"""An interpolation's `size` fixes its input's rank: F.interpolate raises unless the size lists as many
sizes as the input has spatial dimensions, so a size named in the function (`target_shape = (t, h, w)`,
then `F.interpolate(video, target_shape, mode=mode)`) shows a 5-D input as well as the literal tuple does.
Cause of the twelfth corpus's false alarms (lucidrains/imagen-pytorch's resize_video_to: the bilinear,
bicubic and linear backward records on a 5-D video, RULES R2)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan


def _records(tmp_path: Path, source: str) -> set[tuple[int, str]]:
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions("torch=2.11"))
    return {(f.line, f.record) for f in report.findings if not f.note}


_MODES = {"torch.interpolate-bilinear-backward", "torch.interpolate-bicubic-backward",
          "torch.interpolate-linear-backward", "torch.interpolate-trilinear-backward"}


def _modes(found: set[tuple[int, str]], line: int) -> set[str]:
    return {r for n, r in found if n == line and r in _MODES}


def test_a_size_named_in_the_function_fixes_the_rank(tmp_path):
    found = _records(tmp_path, """\
        import torch.nn.functional as F

        def resize_video_to(video, size, frames=None, mode="nearest"):
            frames = frames or video.shape[2]
            target_shape = (frames, size, size)
            return F.interpolate(video, target_shape, mode=mode)

        def resize_image_to(image, size, mode="nearest"):
            target = (size, size) if size else (1, 1)
            return F.interpolate(image, size=target, mode=mode)
        """)
    assert _modes(found, 6) == {"torch.interpolate-trilinear-backward"}, found
    assert _modes(found, 10) == {"torch.interpolate-bilinear-backward", "torch.interpolate-bicubic-backward"}, found


def test_a_size_of_unknown_length_keeps_every_mode(tmp_path):
    """A name that is the function's parameter, rebound elsewhere, or given tuples of two lengths shows no rank."""
    found = _records(tmp_path, """\
        import torch.nn.functional as F

        def by_parameter(x, shape, mode="nearest"):
            return F.interpolate(x, shape, mode=mode)

        def grown(x, n, mode="nearest"):
            shape = (n, n)
            shape += (n,)
            return F.interpolate(x, shape, mode=mode)

        def either(x, n, deep, mode="nearest"):
            shape = (n, n)
            if deep:
                shape = (n, n, n)
            return F.interpolate(x, shape, mode=mode)

        def looped(x, shapes, mode="nearest"):
            shape = (1, 1)
            for shape in shapes:
                pass
            return F.interpolate(x, shape, mode=mode)
        """)
    for line in (4, 9, 15, 21):
        assert _modes(found, line) == _MODES, (line, found)


def test_a_parameter_unpacked_from_its_shape_has_that_rank(tmp_path):
    """`b, c, h, w = image.shape` in the helper's body, before the call, raises unless the parameter is 4-D:
    a 5-D video helper unpacking five sizes runs trilinear only. An unpacking in a branch, with a starred
    target, or of a name rebound in the function shows no rank."""
    found = _records(tmp_path, """\
        import torch.nn.functional as F

        def resize_image(image, size, mode="nearest"):
            b, c, h, w = image.shape
            return F.interpolate(image, size, mode=mode)

        def resize_video(video, size, mode="nearest"):
            _, _, t, h, w = video.size()
            return F.interpolate(video, size, mode=mode)

        def branch(x, size, flat, mode="nearest"):
            if flat:
                b, c, h, w = x.shape
            return F.interpolate(x, size, mode=mode)

        def starred(x, size, mode="nearest"):
            b, *rest = x.shape
            return F.interpolate(x, size, mode=mode)

        def rebound(x, size, transform, mode="nearest"):
            b, c, h, w = x.shape
            x = transform(x)
            return F.interpolate(x, size, mode=mode)

        def after(x, size, mode="nearest"):
            out = F.interpolate(x, size, mode=mode)
            b, c, h, w = x.shape
            return out
        """)
    assert _modes(found, 5) == {"torch.interpolate-bilinear-backward", "torch.interpolate-bicubic-backward"}, found
    assert _modes(found, 9) == {"torch.interpolate-trilinear-backward"}, found
    for line in (14, 18, 23, 26):
        assert _modes(found, line) == _MODES, (line, found)
