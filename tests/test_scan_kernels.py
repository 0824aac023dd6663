"""Empty buffers a GPU kernel launch fills (kb/scan/kernels.py): state-spaces/mamba's scan and norm kernels (fortieth
corpus, 178 false alarms of `torch.uninitialized-memory`) and Lightning-AI/lit-llama's 4-bit matmul (thirty-ninth, 1),
RULES R3: the kernel writes the output it is handed before the caller reads it."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup
from scan_files import scan_files


def _empty(found: list[lookup.Finding]) -> list[tuple[str, int]]:
    return sorted((Path(f.path).name, f.line) for f in found
                  if f.record == "torch.uninitialized-memory" and f.level != "note")


def test_buffers_handed_to_a_triton_launch_before_any_read(tmp_path):
    """`y = torch.empty_like(x)` (or `... if c else None`, or a view of it) handed to `_kernel[grid](...)` or to
    `torch.library.wrap_triton(k)[grid](...)`, with only its strides, shape or `empty_like` read before: quiet. A
    buffer read before the launch (`out.sum()`), one handed to an ordinary function (which may read it), and one in a
    module that imports no kernel library keep their findings."""
    found = scan_files(tmp_path, {"norm.py": """\
        import torch
        import triton
        import triton.language as tl
        @triton.jit
        def _kernel(X, Y, N: tl.constexpr):
            pass
        def summary(t):
            return t.sum()
        def forward(x, residual=None):
            y = torch.empty_like(x)
            assert y.stride(-1) == 1
            r = torch.empty_like(y) if residual is not None else None
            dxz = torch.empty_like(x)
            dx, dz = dxz.chunk(2, dim=1)
            _kernel[(x.shape[0],)](x, y, x.shape[1])
            torch.library.wrap_triton(_kernel)[(1,)](x, r, 4)
            _kernel[(1,)](x, dx, 4)
            read = torch.empty_like(x)
            total = read.sum()
            _kernel[(1,)](x, read, 4)
            handed = torch.empty_like(x)
            summary(handed)
            return y, r, dz, total
        """, "plain.py": """\
        import torch
        def launch(kernel, x):
            out = torch.empty_like(x)
            kernel[(1,)](x, out)
            return out
        """}, "torch=2.11")
    assert _empty(found) == [("norm.py", 18), ("norm.py", 21), ("plain.py", 3)], found


def test_a_buffer_handed_to_a_kernel_tilelang_compiled(tmp_path):
    """mamba's TileLang backward: `kernel = mamba_mimo_bwd(B, S, H)` compiles, then `kernel(q, dq)` fills `dq`."""
    found = scan_files(tmp_path, {"bwd.py": """\
        import torch
        import tilelang
        def mamba_mimo_bwd(b, s, h):
            return tilelang.compile(None)
        def backward(q):
            dq = torch.empty_like(q)
            kernel = mamba_mimo_bwd(1, 2, 3)
            kernel(q, dq)
            return dq
        """}, "torch=2.11")
    assert _empty(found) == [], found


def test_a_buffer_handed_to_a_compiled_cuda_extension_before_any_read(tmp_path):
    """BlinkDL/RWKV-LM (forty-ninth corpus, 125 false alarms): `y = torch.empty(...)` handed to a function of a module
    `torch.utils.cpp_extension.load(...)` builds (`wkv_cuda.forward(..., y)`), of a `torch.ops` namespace the
    extension registers (`torch.ops.wkv7.forward(..., y)`), or of a name bound to one (`OP = torch.ops.clampw`):
    the extension writes its output buffer. One read before, one handed to an ordinary function, and one in a
    module with no extension keep their findings."""
    found = scan_files(tmp_path, {"wkv.py": """\
        import torch
        from torch.utils.cpp_extension import load
        wkv_cuda = load(name="wkv", sources=["cuda/wkv_op.cpp", "cuda/wkv_cuda.cu"])
        OP = torch.ops.clampw
        def helper(t):
            return t.sum()
        def forward(B, T, C, w, k):
            y = torch.empty((B, T, C), device="cuda", memory_format=torch.contiguous_format)
            wkv_cuda.forward(B, T, C, w, k, y)
            s = torch.empty(B, T, device="cuda")
            torch.ops.wkv7.forward(w, k, s)
            sa = torch.empty_like(k)
            OP.forward(w, k, sa)
            dw, dk = [torch.empty_like(t) for t in (w, k)]
            torch.ops.wkv7.backward(w, k, dw, dk)
            read = torch.empty(B, device="cuda")
            total = read.sum()
            wkv_cuda.forward(read)
            handed = torch.empty(B, device="cuda")
            helper(handed)
            return y, s, sa, total
        """, "plain.py": """\
        import torch
        def forward(ext, x):
            out = torch.empty_like(x)
            ext.forward(x, out)
            return out
        """}, "torch=2.11")
    assert _empty(found) == [("plain.py", 3), ("wkv.py", 16), ("wkv.py", 19)], found


def test_a_scatter_at_the_positions_top_k_hands_back_of_a_flattened_tensor(tmp_path):
    """google-research/rigl's mask update (fifty-first corpus, RULES AA4-1): `_, order = tf.math.top_k(tf.reshape(s,
    [-1]), k=n)`, then `tf.scatter_nd(tf.expand_dims(order, 1), values, shape)`: n distinct positions, each written
    once. The top_k of a tensor of several rows repeats positions across the rows and stays a finding."""
    found = scan_files(tmp_path, {"masks.py": """\
        import tensorflow as tf
        def drop(score, n_total, values):
            _, order = tf.math.top_k(tf.reshape(score, [-1]), k=n_total)
            rows = tf.expand_dims(order, 1)
            return tf.scatter_nd(rows, values, values.shape)
        def per_row(score, k):
            _, order = tf.math.top_k(score, k=k)
            rows = tf.expand_dims(order, 1)
            return tf.scatter_nd(rows, score[:k], [k])
        """}, "tensorflow=2.20")
    assert sorted(f.line for f in found if f.record == "tf.scatter-nd") == [9], found
