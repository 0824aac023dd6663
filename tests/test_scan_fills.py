"""torch.uninitialized-memory where the code writes the whole buffer before any read, later in the same
block (kb/scan/values.py `filled_next`): only where the write is whole and nothing can read or skip past it."""

from __future__ import annotations

from pathlib import Path

from scan_files import scan_files


def test_a_buffer_filled_whole_later_in_its_block_is_not_read_uninitialised(tmp_path: Path) -> None:
    """`buf = torch.empty(n)`, statements that never name buf, then `buf.fill_(0)` or `buf[:] = src`, and
    `x.resize_(n)` followed by `x.copy_(src)`: every element is written before any read. A read between,
    a partial write, a `continue` between, a `try` around, or a closure over the buffer keep the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        def later(n, src):
            buf = torch.empty(n)
            total = n * 2
            buf.fill_(0)
            out = torch.empty(n, 4)
            scale = total + 1
            out[:] = src * scale
            return buf, out
        def resized(x, src):
            x.resize_(src.shape)
            x.copy_(src)
            return x
        def read_between(n):
            buf = torch.empty(n)
            print(buf.sum())
            buf.zero_()
            return buf
        def partial(n, src):
            buf = torch.empty(n)
            k = n // 2
            buf[:k] = src
            return buf
        def skipped(items, n):
            for item in items:
                buf = torch.empty(n)
                if item:
                    continue
                buf.zero_()
            return buf
        def guarded(n, f):
            try:
                buf = torch.empty(n)
                f()
                buf.zero_()
            except ValueError:
                pass
            return buf
        def closure(n):
            buf = torch.empty(n)
            peek = lambda: buf.sum()
            buf.zero_()
            return peek
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory") == [15, 20, 26, 33, 40], found


def test_a_buffer_filled_whole_by_an_nn_init_call_is_not_read_uninitialised(tmp_path: Path) -> None:
    """`w = torch.empty(o, i, h, w)` then `nn.init.kaiming_uniform_(w)` (any `nn.init.*_` in-place
    initialiser: each writes every element) is not uninitialised memory; an init of another tensor, one
    that reads the buffer in its other arguments, or a read before the init keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        from torch import nn
        from torch.nn import init
        def kaiming(o, i):
            w = torch.empty(o, i)
            nn.init.kaiming_uniform_(w)
            return w
        def plain(o, i):
            w = torch.empty(o, i)
            init.normal_(w, std=0.02)
            return w
        def other(o, i, v):
            w = torch.empty(o, i)
            nn.init.zeros_(v)
            return w
        def read_first(o, i):
            w = torch.empty(o, i)
            print(w)
            nn.init.zeros_(w)
            return w
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory") == [13, 17], found


def test_a_buffer_an_nn_init_call_is_given_in_the_same_expression_is_not_read_uninitialised(tmp_path: Path) -> None:
    """`nn.Parameter(nn.init.xavier_uniform_(torch.empty(n, m)))`, or the same through a local name bound only to
    an initialiser (`initializer = nn.init.xavier_uniform_`, as NGCF-PyTorch writes it): the initialiser writes
    every element before any read. A local name also bound to something else, or a function that is no
    initialiser, keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        from torch import nn
        def direct(n, m):
            return nn.Parameter(nn.init.xavier_uniform_(torch.empty(n, m)))
        def through_a_name(n, m):
            initializer = nn.init.xavier_uniform_
            return nn.ParameterDict({'w': nn.Parameter(initializer(torch.empty(n, m)))})
        def rebound(n, m, other):
            initializer = nn.init.xavier_uniform_
            if other:
                initializer = other
            return nn.Parameter(initializer(torch.empty(n, m)))
        def no_initialiser(n, m, wrap):
            return nn.Parameter(wrap(torch.empty(n, m)))
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory") == [12, 14], found


def test_a_buffer_converted_then_filled_whole(tmp_path: Path) -> None:
    """harvardnlp/annotated-transformer (twenty-first corpus, RULES R3): `torch.empty(1, 1).type_as(src).fill_(v)`
    copies the uninitialised values and writes every element of the copy before anything reads it. A conversion
    followed by a partial write keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        def greedy(src, next_word):
            ys = torch.empty(1, 1).type_as(src.data).fill_(next_word)
            zs = torch.empty(1, 4).to(src.device).float()
            zs[:, :2] = 0
            return ys, zs
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory" and not f.note) == [4]


def test_a_buffer_filled_whole_inside_a_no_grad_block(tmp_path: Path) -> None:
    """openai/glide-text2im's CLIP encoders (forty-first corpus, 4 false alarms, RULES R3): `w = torch.empty(...)`, then
    `with torch.no_grad():` whose first statement naming w is `w.normal_(std=0.02)`, before w becomes a Parameter. A
    block of another context manager (which may suppress an exception and skip the fill) and a read before the fill
    inside the block keep the finding."""
    found = scan_files(tmp_path, {"enc.py": """\
        import contextlib
        import torch
        def embeddings(n, d, timesteps):
            w_voc = torch.empty((n, d))
            w_pos = torch.empty((n, d))
            with torch.no_grad():
                if timesteps == 0:
                    state = 1
                w_voc.normal_(std=0.02)
                w_pos.normal_(std=0.01)
            return torch.nn.Parameter(w_voc), torch.nn.Parameter(w_pos)
        def suppressed(n):
            w = torch.empty(n)
            with contextlib.suppress(ValueError):
                w.normal_()
            return w
        def read_first(n):
            w = torch.empty(n)
            with torch.no_grad():
                total = w.sum()
                w.normal_()
            return w, total
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory" and f.level != "note") == [13, 18]


def test_a_buffer_given_to_a_module_level_initialiser_name_is_not_read_uninitialised(tmp_path: Path) -> None:
    """HKUDS/SSLRec (forty-ninth corpus, 38 false alarms): `init = nn.init.xavier_uniform_` at module level, then
    `nn.Parameter(init(t.empty(n, d)))` in a model's `__init__`. A module-level name bound to something else, or
    one a function rebinds locally, keeps the finding."""
    found = scan_files(tmp_path, {"m.py": """\
        import torch as t
        from torch import nn
        init = nn.init.xavier_uniform_
        other = print
        class M(nn.Module):
            def __init__(self, n, d):
                super().__init__()
                self.a = nn.Parameter(init(t.empty(n, d)))
                self.b = nn.Parameter(other(t.empty(n, d)))
            def local(self, n, d, init):
                return init(t.empty(n, d))
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.uninitialized-memory") == [9, 11], found
