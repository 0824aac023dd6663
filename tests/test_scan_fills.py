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
