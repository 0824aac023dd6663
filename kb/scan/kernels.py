"""Empty buffers a GPU kernel launch fills: the output and scratch tensors of Triton and TileLang code (RULES R3
of the thirty-ninth and fortieth corpora: lit-llama's 4-bit matmul, mamba's scan kernels).

Kernel code allocates its outputs with `torch.empty` and hands them to the launch, `_kernel[grid](x, out, ...)`
(Triton) or `kernel(x, out)` where `kernel = build(...)` compiled it (TileLang); the kernel writes them, and the
caller reads them only after. The scan cannot read the kernel, so it takes the code's own order as the fact: the
buffer (by its name, a name it is copied to, or its views: `dx, dz = dxz.chunk(2)`) is handed to a launch before
anything else touches it; only its shape, strides, dtype and device are read before (metadata, no element).
Only in a module that imports Triton or TileLang, and only a launch of those two shapes: an empty buffer handed to
an ordinary function of the code base (which may read it: StyleGAN2's model summary of `torch.empty` latents)
keeps its finding.

A compiled C++/CUDA extension's function is a launch of the same kind (RULES R3 of the forty-ninth corpus: RWKV's
`y = torch.empty(...)` then `wkv_cuda.forward(B, T, C, w, u, k, v, y)`): a function of a module the code builds with
`torch.utils.cpp_extension.load(...)` / `load_inline(...)`, or of a `torch.ops` namespace the extension registers
(`torch.ops.wkv7.forward(..., y)`, or through a name bound to it, `OP = torch.ops.rwkv7_clampw`). Such a function
takes its output buffers as arguments because it writes them; the scan cannot read its CUDA source.
"""

from __future__ import annotations

import ast

from kb.scan.context import Context
from kb.scan.nodes import iwalk

_KERNEL_LIBRARIES = frozenset({"triton", "tilelang"})
_VIEWS = frozenset({"view", "chunk", "split", "unbind", "reshape", "narrow", "transpose", "permute", "flatten",
                    "unflatten", "contiguous", "view_as", "squeeze", "unsqueeze", "select", "as_strided"})
_LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"})
_METADATA = frozenset({"shape", "stride", "size", "dtype", "device", "numel", "dim", "ndim", "data_ptr",
                       "is_contiguous", "element_size", "storage_offset"})


def written_by_launch(ctx: Context, node: ast.Call, fn: ast.AST) -> bool:
    """Whether the empty tensor `node` makes is handed to a Triton or TileLang launch in `fn` before any other use."""
    libraries = {value.split(".", 1)[0] for value in ctx.aliases.values()} & _KERNEL_LIBRARIES
    extensions = _extensions(ctx)
    names = _held_in(node, fn) if libraries or extensions is not None else set()
    if not names:
        return False
    compiled = _compiled(fn) if "tilelang" in libraries else set()
    uses = sorted((n for n in iwalk(fn) if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)),
                  key=lambda n: (n.lineno, n.col_offset))
    launches = [c for c in iwalk(fn) if isinstance(c, ast.Call)
                and ((libraries and _launch(c, compiled)) or (extensions is not None and _extension_call(ctx, c, extensions)))]
    handed = {id(n) for c in launches for n in iwalk(c) if isinstance(n, ast.Name) and n.id in names}
    if not handed:
        return False
    parents = {id(child): parent for parent in iwalk(fn) for child in ast.iter_child_nodes(parent)}
    for use in uses:
        if id(use) in handed:
            return True
        if not _metadata(use, parents):
            return False
    return False


_MEMO: list[tuple[ast.Module, set[str]]] = []  # the last module's extension names (a one-entry cache)
_LOADERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})


def _extensions(ctx: Context) -> set[str] | None:
    """The names the module binds to a compiled extension (`wkv_cuda = load(name="wkv", sources=[...])`) or to a
    `torch.ops` namespace (`OP = torch.ops.rwkv7_clampw`); None where the module imports torch not at all."""
    if ctx.tree is None or not any(value.split(".", 1)[0] == "torch" for value in ctx.aliases.values()):
        return None
    if _MEMO and _MEMO[0][0] is ctx.tree:
        return _MEMO[0][1]
    out: set[str] = set()
    for a in iwalk(ctx.tree):
        if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)):
            continue
        value = a.value
        if isinstance(value, ast.Call) and ctx.written(value.func) in _LOADERS \
                or isinstance(value, ast.Attribute) and (ctx.written(value) or "").startswith("torch.ops."):
            out.add(a.targets[0].id)
    _MEMO[:] = [(ctx.tree, out)]  # one module's: the scan reads a file's empties together
    return out


def _extension_call(ctx: Context, call: ast.Call, extensions: set[str]) -> bool:
    """`wkv_cuda.forward(...)` of a name bound to an extension, or `torch.ops.<namespace>.<function>(...)`."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if isinstance(func.value, ast.Name) and func.value.id in extensions:
        return True
    written = ctx.written(func) or ""
    return written.startswith("torch.ops.") and written.count(".") >= 3


def _held_in(node: ast.Call, fn: ast.AST) -> set[str]:
    """The names that hold the buffer: `out = torch.empty(...)` (or `... if c else None`, or each name a list of them
    is unpacked to), the names it is copied to (`arg = out`), and its views (`dx, dz = dxz.chunk(2, dim=1)`)."""
    names: set[str] = set()
    assigns = [a for a in iwalk(fn) if isinstance(a, ast.Assign) and len(a.targets) == 1]
    for a in assigns:
        value = a.value
        made = value is node or (isinstance(value, ast.IfExp) and (value.body is node or value.orelse is node))
        if made and isinstance(a.targets[0], ast.Name):
            names.add(a.targets[0].id)
        elif isinstance(value, ast.ListComp) and value.elt is node and isinstance(a.targets[0], ast.Tuple):
            names.update(t.id for t in a.targets[0].elts if isinstance(t, ast.Name))  # `dw, dq = [torch.empty_like(x) for x in (w, q)]`
    for _ in range(3):  # copies and views of copies, a few steps deep
        for a in assigns:
            source = a.value
            while isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr in _VIEWS:
                source = source.func.value
            if not (isinstance(source, ast.Name) and source.id in names):
                continue
            targets = a.targets[0].elts if isinstance(a.targets[0], ast.Tuple) else [a.targets[0]]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _compiled(fn: ast.AST) -> set[str]:
    """Names the function binds to what a call returns, which a call of them launches: a kernel a TileLang builder
    compiled (`kernel = mamba_mimo_fwd(B, S, ...)`, then `kernel(q, k, out)`)."""
    return {a.targets[0].id for a in iwalk(fn) if isinstance(a, ast.Assign) and len(a.targets) == 1
            and isinstance(a.targets[0], ast.Name) and isinstance(a.value, ast.Call)}


def _launch(call: ast.Call, compiled: set[str]) -> bool:
    """`_kernel[grid](...)`, or a call of a kernel object the function compiled."""
    if isinstance(call.func, ast.Subscript) and isinstance(call.func.value, (ast.Name, ast.Attribute, ast.Call)):
        return True  # (`torch.library.wrap_triton(kernel)[grid](...)` too)
    return isinstance(call.func, ast.Name) and call.func.id in compiled


def _metadata(use: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """`out.stride(0)`, `out.shape`, `out is None`: a read of the buffer's metadata, or of whether it exists."""
    parent = parents.get(id(use))
    if isinstance(parent, ast.Attribute) and parent.attr in _METADATA:
        return True
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is use and isinstance(parent.func, ast.Attribute) \
            and parent.func.attr in _LIKE:
        return True  # `torch.empty_like(out)`: its shape, dtype and device
    if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
        return True
    if isinstance(parent, ast.Assign) or isinstance(parent, ast.IfExp) and parent.body is use:
        return True  # a copy of the name (followed in _held_in), or `x if c else None`
    return isinstance(parent, ast.Attribute) and parent.attr in _VIEWS
