"""More PyTorch branch units (verifiers/sweep/torch_branches.py's table holds them): the branches the
inventory lists that no earlier unit or op_db sample takes (docs/sweep.md, "Branches without evidence").

- sparse layouts: every public op with a SparseCUDA or SparseCsrCUDA dispatch key in
  native_functions.yaml that op_db never calls with a sparse input (elementwise functions, reductions,
  shape functions, arithmetic with a scalar), on an uncoalesced COO tensor whose 256K entries sit on
  64 positions (a kernel that coalesces first sums about 4,000 duplicates per position) and on CSR;
- FFT normalisations: each torch.fft function with norm="backward", "forward" and "ortho" on a
  transform of 2^20 points (op_db's samples leave norm out);
- argument values op_db's samples leave out: cdist's compute_mode, torch.norm(p="fro"), the losses'
  reduction="sum"/"mean" where the samples pass none.

Each unit is a function (torch, device, dtype, scale) -> [Spec] like the others; the call facts name
every tensor argument's layout, so a case is evidence for exactly the layout branch it took.
"""

from __future__ import annotations

from verifiers.sweep.branch_inputs import B, Spec, facts

UNARY = ("abs", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "erf", "erfinv", "expm1", "floor", "frac", "isinf",
         "isnan", "isneginf", "isposinf", "log1p", "neg", "rad2deg", "round", "sgn", "sign", "signbit", "sin", "sinh",
         "sqrt", "tan", "tanh", "trunc", "angle", "conj_physical", "nan_to_num", "clone", "any", "sum")
"""torch functions of one tensor whose native function has a SparseCUDA or SparseCsrCUDA kernel."""


def _sparse_inputs(torch, b: B, dev, dt, grad: bool):
    """(COO with duplicates, its facts' words, addends), and a CSR matrix of the same values coalesced."""
    R = C = 256
    nnz = b.n(1 << 18, 4096)
    g = b.gen
    pos = torch.randint(0, 64, (nnz,), generator=g)
    rows, cols = pos % 8 * 32, pos // 8 * 32
    vals = (torch.rand(nnz, generator=g) * 0.5 + 0.25) * torch.randint(-6, 7, (nnz,), generator=g).float().exp2()
    vals = vals.clamp(max=0.9)  # inside every function's domain (asin, atanh, erfinv)
    coo = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (R, C)).to(dev, dt)
    csr = coo.coalesce().to_sparse_csr()
    if grad:
        coo = coo.detach().requires_grad_(True)
        csr = csr.detach().requires_grad_(True)
    return coo, csr, nnz


def sparse_layouts(torch, dev, dt, scale, tags=("coo", "csr")):
    b = B(torch, dev, dt, scale)
    coo, csr, nnz = _sparse_inputs(torch, b, dev, dt, grad=False)
    gcoo, gcsr, _ = _sparse_inputs(torch, B(torch, dev, dt, scale), dev, dt, grad=True)
    dup = f"uncoalesced COO, {nnz} entries on 64 positions (about {nnz // 64} duplicates each)"
    words = {"coo": (dup, nnz // 64, {"input.coalesced": False}), "csr": ("CSR (compressed rows, no duplicates)", 1, {})}
    out = []

    def add(op: str, tag: str, fn, a, leaves=(), **extra):
        collide, addends, more = words[tag]
        out.append(Spec(op, f"{op}|{tag}" + (f"|{extra.pop('variant')}" if "variant" in extra else ""), fn, list(leaves),
                        facts(torch, {"input": a}, collide, addends, **more, **extra), nnz))

    for tag, a, ga in (("coo", coo, gcoo), ("csr", csr, gcsr)):
        if tag not in tags:
            continue
        for name in UNARY:
            fn = getattr(torch, name)
            add(f"torch.{name}", tag, lambda fn=fn, a=a: fn(a), a)
        add("torch.nn.functional.relu", tag, lambda ga=ga: torch.nn.functional.relu(ga), ga, [ga])
        add("torch.nn.functional.threshold", tag, lambda ga=ga: torch.nn.functional.threshold(ga, 0.5, 0.0), ga, [ga],
            threshold=0.5, value=0.0)
        add("torch.nn.ReLU", tag, lambda ga=ga: torch.nn.ReLU()(ga), ga, [ga])
        add("torch.nn.Tanh", tag, lambda a=a: torch.nn.Tanh()(a), a)
        add("torch.Tensor.zero_", tag, lambda a=a: a.clone().zero_(), a)
        add("torch.norm", tag, lambda a=a: torch.norm(a), a)
        add("torch.norm", tag, lambda a=a: torch.norm(a, p="fro"), a, p="fro", variant="p=fro")
        add("torch.linalg.norm", tag, lambda a=a: torch.linalg.norm(a), a)
        add("torch.masked.sum", tag, lambda a=a: torch.masked.sum(a, 1), a, dim=1)
        add("torch.pow", tag, lambda a=a: torch.pow(a, 2), a, exponent=2)
        add("torch.div", tag, lambda a=a: torch.div(a, 3.0), a, other=3.0)
        add("torch.floor_divide", tag, lambda a=a: torch.floor_divide(a, 3.0), a, other=3.0)
        add("torch.mul", tag, lambda a=a: torch.mul(a, 3.0), a, other=3.0, variant="scalar")
        add("torch.mul", tag, lambda a=a: torch.mul(a, a), a, variant="sparse*sparse")
        add("torch.add", tag, lambda a=a: torch.add(a, a), a, variant="sparse+sparse")
        add("torch.sub", tag, lambda a=a: torch.sub(a, a), a, variant="sparse-sparse")
        add("torch.unsqueeze", tag, lambda a=a: torch.unsqueeze(a, 0), a, dim=0)
        add("torch.permute", tag, lambda a=a: torch.permute(a, (1, 0)), a)
        add("torch.narrow_copy", tag, lambda a=a: torch.narrow_copy(a, 0, 0, 128), a, dim=0)
        add("torch.select", tag, lambda a=a: torch.select(a, 0, 32), a, dim=0, index=32)
        add("torch.cat", tag, lambda a=a: torch.cat([a, a]), a, dim=0)
        add("torch.Tensor.resize_", tag, lambda a=a: a.detach().clone().resize_(256, 256), a)
        add("torch.empty_like", tag, lambda a=a: torch.empty_like(a).zero_(), a, variant="then zero_")
        if tag == "coo":  # an empty COO tensor has nnz=0: no uninitialised values (CSR's crow_indices are: no case)
            add("torch.empty", tag, lambda a=a: torch.empty(a.shape, layout=torch.sparse_coo, device=a.device, dtype=a.dtype), a)
        add("torch.zeros", tag, lambda a=a: torch.zeros(a.shape, out=a.detach().clone()), a, variant="out=")
        if tag == "csr":  # CSR reductions take keepdim=True only ("keepdim=False is unsupported" on 2026-11-28)
            add("torch.masked.sum", tag, lambda a=a: torch.masked.sum(a, 1, keepdim=True), a, dim=1, keepdim=True,
                variant="keepdim=True")
        _sparse_composites(torch, tag, a, ga, add)
    if "csr" in tags:  # a batch of CSR matrices (the same pattern in each, as batched CSR requires)
        csr3 = torch.stack([csr.to_dense()] * 2).to_sparse_csr()
        d3 = b.mixed(2, 256, 64, grad=False)
        add("torch.bmm", "csr", lambda: torch.bmm(csr3, d3), csr3, variant="csr batch x dense")
    if "coo" in tags:  # complex views of a COO tensor
        cc = coo.to(torch.complex64) if dt == torch.float32 else coo.to(torch.complex128)
        add("torch.view_as_real", "coo", lambda: torch.view_as_real(cc), cc)
        hyb = torch.sparse_coo_tensor(coo._indices(), torch.stack([coo._values(), coo._values()], 1), (256, 256, 2))
        add("torch.view_as_complex", "coo", lambda: torch.view_as_real(torch.view_as_complex(hyb)), hyb, variant="hybrid (..., 2)")
    return out


def _sparse_composites(torch, tag, a, ga, add) -> None:
    """Functions and modules whose Python or composite code calls a sparse kernel of another op (a loss's
    abs/pow/sum, normalize's div, gaussian_nll_loss's unsqueeze), called with the sparse tensor itself."""
    F, nn = torch.nn.functional, torch.nn
    for name in ("l1_loss", "mse_loss", "huber_loss"):
        fn = getattr(F, name)
        add(f"torch.nn.functional.{name}", tag, lambda fn=fn, ga=ga: fn(ga, ga.detach()), ga, [ga])
    add("torch.nn.functional.gaussian_nll_loss", tag, lambda ga=ga: F.gaussian_nll_loss(ga, ga.detach(), ga.detach()), ga, [ga])
    add("torch.nn.functional.triplet_margin_with_distance_loss", tag,
        lambda ga=ga: F.triplet_margin_with_distance_loss(ga, ga.detach(), ga.detach()), ga, [ga])
    add("torch.nn.functional.normalize", tag, lambda ga=ga: F.normalize(ga), ga, [ga])
    for name in ("L1Loss", "MSELoss", "HuberLoss"):
        mod = getattr(nn, name)
        add(f"torch.nn.{name}", tag, lambda mod=mod, ga=ga: mod(reduction="sum")(ga, ga.detach()), ga, [ga], reduction="sum")
    add("torch.nn.GaussianNLLLoss", tag, lambda ga=ga: nn.GaussianNLLLoss()(ga, ga.detach(), ga.detach()), ga, [ga])
    add("torch.nn.MultiheadAttention", tag, lambda a=a: nn.MultiheadAttention(256, 1).to(a.device, a.dtype)(a, a, a)[0], a)
    if tag == "coo":
        # the calls of F.l1_loss and F.mse_loss that do reach the sparse abs/pow and sum: reduction='sum' (op_db's 'mean'
        # raised `Could not run 'aten::mean.dim' ... 'SparseCUDA'` on 2026-11-28) and mse_loss's weighted Python path
        # (torch.pow, torch.sum: torch/nn/functional.py:3933-3946 of the 2.11.0 wheel; the unweighted one calls
        # torch._C._nn.mse_loss, which has no SparseCUDA kernel)
        add("torch.nn.functional.l1_loss", tag, lambda ga=ga: F.l1_loss(ga, ga.detach(), reduction="sum"), ga, [ga],
            reduction="sum", variant="reduction=sum")
        add("torch.nn.functional.mse_loss", tag, lambda ga=ga: F.mse_loss(ga, ga.detach(), reduction="sum", weight=ga.detach()),
            ga, [ga], reduction="sum", variant="weighted")


FFT = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
       "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")


def _real(torch, t):
    """A complex result as (re, im) pairs: the backward's cotangent and the comparison take real tensors."""
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def fft_norms(torch, dev, dt, scale):
    """Every torch.fft function with each norm, on 2^20 points (1-D) or 1024x1024 (2-D, N-D)."""
    b = B(torch, dev, dt, scale)
    n1 = b.n(1 << 20, 256)
    side = b.n(1024, 16)
    real1, real2 = b.mixed(n1), b.mixed(side, side)
    cplx = "complex64" if dt == torch.float32 else "complex128" if dt == torch.float64 else None
    if cplx is None:
        return []
    c1 = b.mixed(n1, 2, grad=False).contiguous()
    c2 = b.mixed(side, side, 2, grad=False).contiguous()
    comp1 = torch.view_as_complex(c1).detach().requires_grad_(True)
    comp2 = torch.view_as_complex(c2).detach().requires_grad_(True)
    out = []
    for name in FFT:
        fn = getattr(torch.fft, name)
        two = name.endswith(("2", "n"))
        x = (comp2 if two else comp1) if name.startswith(("i", "hfft")) and not name.startswith("ihfft") else (real2 if two else real1)
        for norm in ("backward", "forward", "ortho"):
            out.append(Spec(f"torch.fft.{name}", f"torch.fft.{name}|norm={norm}", lambda fn=fn, x=x, norm=norm: _real(torch, fn(x, norm=norm)), [x],
                            facts(torch, {"input": x}, f"{x.numel()} points: every output sums all inputs", x.numel(), norm=norm),
                            x.numel()))
    return out


def values(torch, dev, dt, scale):
    """Argument values op_db's samples leave out."""
    b = B(torch, dev, dt, scale)
    F = torch.nn.functional
    out = []
    x1, x2 = b.mixed(b.n(2048, 16), 64), b.mixed(b.n(2048, 16), 64)
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        out.append(Spec("torch.cdist", f"torch.cdist|compute_mode={mode}", lambda mode=mode: torch.cdist(x1, x2, compute_mode=mode),
                        [x1, x2], facts(torch, {"input": x1, "x2": x2}, "every output reduces 64 products", 64, compute_mode=mode,
                                        p=2.0), x1.numel()))
    m = b.mixed(512, 512)
    out.append(Spec("torch.norm", "torch.norm|p=fro", lambda: torch.norm(m, p="fro"), [m],
                    facts(torch, {"input": m}, "one sum of 262,144 squares", m.numel(), p="fro"), m.numel()))
    n = b.n(1 << 20, 256)
    inp, tgt = b.mixed(n), b.mixed(n, grad=False)
    pos, var = b.plain(n, low=0.5, high=2.0), b.plain(n, grad=False, low=0.5, high=2.0)
    logp, prob = F.log_softmax(b.mixed(n // 64, 64, grad=False), 1).detach().requires_grad_(True), F.softmax(b.mixed(n // 64, 64, grad=False), 1)
    for reduction in ("mean", "sum"):
        calls = {
            "torch.nn.functional.l1_loss": (lambda r=reduction: F.l1_loss(inp, tgt, reduction=r), [inp], inp, tgt),
            "torch.nn.functional.mse_loss": (lambda r=reduction: F.mse_loss(inp, tgt, reduction=r), [inp], inp, tgt),
            "torch.nn.functional.huber_loss": (lambda r=reduction: F.huber_loss(inp, tgt, reduction=r), [inp], inp, tgt),
            "torch.nn.functional.gaussian_nll_loss": (lambda r=reduction: F.gaussian_nll_loss(inp, tgt, var, reduction=r), [inp], inp, tgt),
            "torch.nn.functional.poisson_nll_loss": (lambda r=reduction: F.poisson_nll_loss(pos, tgt.abs(), reduction=r), [pos], pos, tgt),
            "torch.nn.functional.kl_div": (lambda r=reduction: F.kl_div(logp, prob, reduction=r), [logp], logp, prob),
            "torch.nn.functional.binary_cross_entropy_with_logits": (
                lambda r=reduction: F.binary_cross_entropy_with_logits(inp, tgt.sigmoid(), reduction=r), [inp], inp, tgt),
            "torch.nn.functional.triplet_margin_with_distance_loss": (
                lambda r=reduction: F.triplet_margin_with_distance_loss(logp, prob, prob.flip(0), reduction=r), [logp], logp, prob),
        }
        for op, (fn, leaves, a, t) in calls.items():
            second = "positive" if "triplet" in op else "target"  # the second tensor's parameter (KB024)
            out.append(Spec(op, f"{op}|reduction={reduction}", fn, leaves,
                            facts(torch, {"input": a, second: t}, f"one reduction of {a.numel()} terms", a.numel(), reduction=reduction),
                            a.numel()))
    return out


def module_values(torch, dev, dt, scale):
    """The loss modules with each `reduction` module_db's samples leave out, and dense calls of torch.addmv and
    torch.sparse.mm (op_db's addmv samples ran out of memory at the sweep's scale; sparse.mm's are sparse)."""
    b = B(torch, dev, dt, scale)
    nn = torch.nn
    out = []
    n = b.n(1 << 20, 256)
    inp, tgt = b.mixed(n), b.mixed(n, grad=False)
    pos, var = b.plain(n, low=0.5, high=2.0), b.plain(n, grad=False, low=0.5, high=2.0)
    logp = torch.nn.functional.log_softmax(b.mixed(n // 64, 64, grad=False), 1).detach().requires_grad_(True)
    prob = torch.nn.functional.softmax(b.mixed(n // 64, 64, grad=False), 1)
    calls = {
        "torch.nn.KLDivLoss": (("batchmean", "sum"), lambda r: nn.KLDivLoss(reduction=r)(logp, prob), logp),
        "torch.nn.GaussianNLLLoss": (("none", "sum"), lambda r: nn.GaussianNLLLoss(reduction=r)(inp, tgt, var), inp),
        "torch.nn.PoissonNLLLoss": (("none", "sum"), lambda r: nn.PoissonNLLLoss(reduction=r)(pos, tgt.abs()), pos),
        "torch.nn.HuberLoss": (("sum",), lambda r: nn.HuberLoss(reduction=r)(inp, tgt), inp),
        "torch.nn.L1Loss": (("sum",), lambda r: nn.L1Loss(reduction=r)(inp, tgt), inp),
        "torch.nn.MSELoss": (("sum",), lambda r: nn.MSELoss(reduction=r)(inp, tgt), inp),
    }
    for op, (reductions, fn, a) in calls.items():
        for r in reductions:
            out.append(Spec(op, f"{op}|reduction={r}", lambda fn=fn, r=r: fn(r), [a],
                            facts(torch, {"input": a}, f"one reduction of {a.numel()} terms" if r != "none" else "elementwise",
                                  a.numel() if r != "none" else 1, reduction=r), a.numel()))
    rows = b.n(4096, 64)
    m, v, bias = b.mixed(rows, 4096), b.mixed(4096), b.mixed(rows)
    out.append(Spec("torch.addmv", "torch.addmv|strided", lambda: torch.addmv(bias, m, v), [m, v, bias],
                    facts(torch, {"input": bias, "mat": m, "vec": v}, "4096-long dot products", 4096), m.numel()))
    d1, d2 = b.mixed(rows, 1024), b.mixed(1024, 256)
    out.append(Spec("torch.sparse.mm", "torch.sparse.mm|strided", lambda: torch.sparse.mm(d1, d2), [d1, d2],
                    facts(torch, {"input": d1, "mat2": d2}, "1024-long dot products", 1024), d1.numel()))
    return out


REST_SPARSE = ("torch.nn.functional.l1_loss|coo|reduction=sum", "torch.nn.functional.mse_loss|coo|weighted", "torch.empty|coo",
               "torch.zeros|coo|out=", "torch.zeros|csr|out=", "torch.masked.sum|csr|keepdim=True")
"""The sparse_coo and sparse_csr cases added after their run of 2026-11-28T03:29 (the `rest` unit runs only these)."""


def rest(torch, dev, dt, scale):
    """The calls that reach the branches still without evidence after 2026-11-28T03:29 (scripts/gpu/run_rest.sh):
    the convolution modules built with padding_mode='replicate' (module_db builds none), the sparse calls in
    REST_SPARSE, the convolution and RNN modules given an int64 or bool input, baddbmm and triangular_solve with a
    CSR batch1 and A, torch.ops.aten._safe_softmax in the dtypes op_db's samples never give it (each sample adds a float32
    mask, so its input is float32: common_methods_invocations.py:4462-4470 of the 2.11.0 wheel), and nn.RNN in
    complex64 with the tanh cell (module_db's complex inputs all raised, the last `clamp is not supported for complex
    types`, which is the relu cell's)."""
    b = B(torch, dev, dt, scale)
    nn = torch.nn
    out = [s for tag in ("coo", "csr") for s in sparse_layouts(torch, dev, dt, scale, (tag,)) if s.branch in REST_SPARSE]
    # a convolution module built with padding_mode='replicate' calls F.pad(..., mode='replicate') first
    # (torch/nn/modules/conv.py:357-360, 535-538, 705-708 of the 2.11.0 wheel); module_db builds none
    side = {1: b.n(65536, 256), 2: b.n(256, 16), 3: b.n(40, 6)}
    for d in (1, 2, 3):
        x = b.mixed(4, 8, *([side[d]] * d))
        for lazy in ("", "Lazy"):
            cls = getattr(nn, f"{lazy}Conv{d}d")
            args = (8, 3) if lazy else (8, 8, 3)

            def conv(cls=cls, args=args, x=x):
                torch.manual_seed(0)
                return cls(*args, padding=1, padding_mode="replicate").to(x.device, x.dtype)(x)

            out.append(Spec(f"torch.nn.{lazy}Conv{d}d", f"torch.nn.{lazy}Conv{d}d|padding_mode=replicate", conv, [x],
                            facts(torch, {"input": x}, f"each output sums 8 x 3^{d} products", 8 * 3 ** d,
                                  padding_mode="replicate", padding=1), x.numel()))
    # the convolution and RNN modules with an int64 or a bool input (their weights stay float: nn.Module.to and
    # Parameter refuse other dtypes). Their int and bool branches are F.pad's (a convolution module with a
    # padding_mode other than 'zeros' pads its input first: conv.py:357-360) and torch.zeros's (an RNN module
    # without hx builds it with dtype=input.dtype: rnn.py:1397-1403, 1434-1440, 1637-1640), kernels that run
    # before the convolution or the RNN itself; the message says whether the release takes the call
    for kind, x in (("int64", (b.mixed(4, 8, 64, grad=False) * 4).long()), ("bool", b.mixed(4, 8, 64, grad=False) > 0)):
        for d in (1, 2, 3):
            xd = x.reshape(4, 8, *([64] if d == 1 else [8, 8] if d == 2 else [4, 4, 4]))
            for lazy in ("", "Lazy"):
                cls = getattr(nn, f"{lazy}Conv{d}d")
                args = (8, 3) if lazy else (8, 8, 3)
                out.append(Spec(f"torch.nn.{lazy}Conv{d}d", f"torch.nn.{lazy}Conv{d}d|{kind} input|padding_mode=replicate",
                                lambda cls=cls, args=args, xd=xd: cls(*args, padding=1, padding_mode="replicate").to(xd.device)(xd),
                                [], facts(torch, {"input": xd}, f"a float module given {kind} input", None, padding_mode="replicate",
                                          padding=1), xd.numel()))
        seq = x.reshape(4, 8, 64)
        for name in ("RNN", "GRU", "LSTM"):
            out.append(Spec(f"torch.nn.{name}", f"torch.nn.{name}|{kind} input",
                            lambda name=name, seq=seq: getattr(nn, name)(64, 16).to(seq.device)(seq)[0], [],
                            facts(torch, {"input": seq}, f"a float module given {kind} input", None), seq.numel()))
            cell = seq[0]
            out.append(Spec(f"torch.nn.{name}Cell", f"torch.nn.{name}Cell|{kind} input",
                            lambda name=name, cell=cell: getattr(nn, f"{name}Cell")(64, 16).to(cell.device)(cell), [],
                            facts(torch, {"input": cell}, f"a float module given {kind} input", None), cell.numel()))
    # baddbmm's and triangular_solve's SparseCsrCUDA branches: the dispatch key comes from every tensor argument, and
    # the kernels take their CSR operand as batch1 (baddbmm_out_sparse_csr_cuda's mat1) and A (triangular_solve's
    # matrix; self, B, stays dense), as test/test_sparse_csr.py of v2.11.0 calls them. At 2026-11-28T03:59 a CSR
    # `input` (baddbmm's self, triangular_solve's B) raised "copy_sparse_compressed_ expected sparse compressed tensor
    # layout but got Strided" and "Could not run 'aten::empty_strided' with arguments from the 'SparseCsrCUDA'
    # backend": a call the kernels never take (data/sweeps/h200-x1-14c028f6/2026-11-28T035900Z-pytorch-branches.json)
    _, csr, _ = _sparse_inputs(torch, B(torch, dev, dt, scale), dev, dt, grad=False)
    csr3 = torch.stack([csr.to_dense()] * 2).to_sparse_csr()
    d3in, d3b = b.mixed(2, 256, 64, grad=False), b.mixed(2, 256, 64, grad=False)
    rows = int((csr.crow_indices()[1:] - csr.crow_indices()[:-1]).max())
    out.append(Spec("torch.baddbmm", "torch.baddbmm|csr batch1", lambda: torch.baddbmm(d3in, csr3, d3b), [],
                    facts(torch, {"input": d3in, "batch1": csr3, "batch2": d3b}, f"each output sums its CSR row's {rows} "
                          "products", rows), csr3._nnz()))
    tri = (torch.triu(b.mixed(256, 256, grad=False)) + 256 * torch.eye(256, device=dev, dtype=dt)).to_sparse_csr()
    rhs = b.mixed(256, 64, grad=False)
    out.append(Spec("torch.triangular_solve", "torch.triangular_solve|csr A", lambda: torch.triangular_solve(rhs, tri)[0], [],
                    facts(torch, {"input": rhs, "A": tri}, "256-long substitutions", 256), tri._nnz()))
    n = b.n(1 << 20, 4096)
    base = b.mixed(n // 256, 256, grad=False)
    for name, x in (("float16", base.half()), ("bfloat16", base.bfloat16()), ("int64", (base * 4).long()),
                    ("bool", base > 0)):
        out.append(Spec("torch.ops.aten._safe_softmax.default", f"torch.ops.aten._safe_softmax.default|{name}",
                        lambda x=x: torch.ops.aten._safe_softmax.default(x, 1), [],
                        facts(torch, {"input": x}, "each output divides by a sum of 256 exponentials", 256, dim=1),
                        x.numel()))
    seq = b.mixed(b.n(512, 8), 4, 64, grad=False).to(torch.complex64)

    def rnn(seq=seq):
        torch.manual_seed(0)
        return torch.view_as_real(nn.RNN(64, 64, nonlinearity="tanh").to(seq.device, seq.dtype)(seq)[0])

    out.append(Spec("torch.nn.RNN", "torch.nn.RNN|complex64|tanh", rnn, [],
                    facts(torch, {"input": seq}, "each step sums 64 + 64 products", 128, nonlinearity="tanh"), seq.numel()))
    return out


UNITS = {"sparse_layouts": sparse_layouts, "fft_norms": fft_norms, "values": values,
         "sparse_coo": lambda torch, dev, dt, scale: sparse_layouts(torch, dev, dt, scale, ("coo",)),
         "sparse_csr": lambda torch, dev, dt, scale: sparse_layouts(torch, dev, dt, scale, ("csr",)),
         "module_values": module_values, "rest": rest}
"""sparse_layouts is both halves (run on 2026-11-28, cut by its 150 s unit limit in the CSR half); sparse_coo and
sparse_csr are one half each."""
DTYPES = {"sparse_layouts": ("float32",), "fft_norms": ("float32", "float64"), "values": ("float32",),
          "sparse_coo": ("float32",), "sparse_csr": ("float32",), "module_values": ("float32",),
          "rest": ("float32",)}
