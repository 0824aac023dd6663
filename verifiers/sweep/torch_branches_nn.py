"""Branch units for losses (targets' dtype and device), normalization and convolution (cuDNN or
native, memory formats), attention backends, and every public sparse operation on COO (with
duplicate indices) and CSR (verifiers/sweep/torch_branches.py)."""

from __future__ import annotations

import math

from verifiers.sweep.branch_inputs import B, Spec, facts, fmt


def losses(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    out = []
    n, c = b.n(1 << 14, 64), 32
    for rank in (2, 4):
        shape = (n, c) if rank == 2 else (b.n(64, 2), c, 64, 64)
        x = F.log_softmax(b.mixed(*shape, grad=False).float(), 1).to(dt).requires_grad_(True)
        tshape = (shape[0],) + tuple(shape[2:])
        tgt = torch.randint(0, 4, tshape, generator=b.gen).to(dev)  # 4 of the classes only: the weighted sum meets often
        w = b.plain(c, grad=False, low=0.5, high=2.0)
        for red in ("mean", "sum", "none"):
            for weight in (None, w):
                kw = {"reduction": red}
                ops = [("torch.nn.functional.nll_loss", lambda x=x, tgt=tgt, weight=weight, kw=kw: F.nll_loss(x, tgt, weight=weight, **kw))]
                for op, fn in ops:
                    out.append(Spec(op, f"{op}|{rank}d|reduction={red}|weight={'given' if weight is not None else None}", fn, [x],
                                    facts(torch, {"input": x, "target": tgt, "weight": weight}, "targets from 4 classes",
                                          math.prod(tshape) // 4, **kw), x.numel()))
        for red in ("mean", "sum"):
            logits = b.mixed(*shape)
            out.append(Spec("torch.nn.functional.cross_entropy", f"torch.nn.functional.cross_entropy|{rank}d|class-indices|reduction={red}",
                            lambda logits=logits, tgt=tgt, red=red: F.cross_entropy(logits, tgt, reduction=red), [logits],
                            facts(torch, {"input": logits, "target": tgt}, "targets from 4 classes", math.prod(tshape) // 4, reduction=red),
                            logits.numel()))
            probs = F.softmax(b.mixed(*shape, grad=False).float(), 1).to(dt)
            out.append(Spec("torch.nn.functional.cross_entropy", f"torch.nn.functional.cross_entropy|{rank}d|probabilities|reduction={red}",
                            lambda logits=logits, probs=probs, red=red: F.cross_entropy(logits, probs, reduction=red, label_smoothing=0.1), [logits],
                            facts(torch, {"input": logits, "target": probs}, "probability targets", None, reduction=red, label_smoothing=0.1),
                            logits.numel()))
        # int32 targets: another template instantiation, or refused
        tgt32 = tgt.to(torch.int32)
        out.append(Spec("torch.nn.functional.nll_loss", f"torch.nn.functional.nll_loss|{rank}d|target.dtype=int32",
                        lambda x=x, tgt32=tgt32: F.nll_loss(x, tgt32), [x],
                        facts(torch, {"input": x, "target": tgt32}, "targets from 4 classes", math.prod(tshape) // 4, reduction="mean"), x.numel()))
    # CTC: cuDNN takes int32 targets on the CPU, concatenated (1-D), blank 0, equal input lengths,
    # float32 log-probs (aten/src/ATen/native/cudnn/LossCTC.cpp); everything else is the native kernel
    T, N, C, S = 128, b.n(64, 2), 32, 24
    lp = F.log_softmax(b.mixed(T, N, C, grad=False).float(), 2).to(dev, dt).requires_grad_(True)
    tl = torch.full((N,), S, dtype=torch.int64)
    il = torch.full((N,), T, dtype=torch.int64)
    flat = torch.randint(1, 3, (N * S,), generator=b.gen)  # labels 1 and 2 only: repeated labels
    padded = flat.view(N, S)
    variants = (
        ("targets-1d-int32-cpu", flat.to(torch.int32), il.to(torch.int32), tl.to(torch.int32)),
        ("targets-1d-int32-cuda", flat.to(torch.int32).to(dev), il.to(torch.int32), tl.to(torch.int32)),
        ("targets-2d-int64-cuda", padded.to(dev), il, tl),
        ("targets-2d-int32-cuda", padded.to(torch.int32).to(dev), il, tl),
        ("targets-1d-int64-cpu", flat, il, tl),
    )
    for tag, tg, ilx, tlx in variants:
        for red in ("mean", "sum"):
            out.append(Spec("torch.nn.functional.ctc_loss", f"torch.nn.functional.ctc_loss|{tag}|reduction={red}",
                            lambda tg=tg, ilx=ilx, tlx=tlx, red=red: F.ctc_loss(lp, tg, ilx, tlx, blank=0, reduction=red), [lp],
                            facts(torch, {"input": lp, "targets": tg, "input_lengths": ilx, "target_lengths": tlx},
                                  "labels 1 and 2 only, every input as long as the longest", T, blank=0, reduction=red), lp.numel()))
    # losses whose backward divides or selects: exact zeros and ties
    y = b.ties(n, c, levels=2)
    zeros = torch.zeros(n, c, device=dev, dtype=dt)
    mtarget = torch.randint(0, c, (n,), generator=b.gen).to(dev)
    for op, loss_fn, kw in (("torch.nn.functional.multi_margin_loss", lambda: F.multi_margin_loss(y, mtarget), {}),
                       ("torch.nn.functional.l1_loss", lambda: F.l1_loss(y, zeros + 1.0, reduction="sum"), {"reduction": "sum"}),
                       ("torch.nn.functional.smooth_l1_loss", lambda: F.smooth_l1_loss(y, zeros + 1.0, reduction="sum"), {"reduction": "sum"}),
                       ("torch.nn.functional.mse_loss", lambda: F.mse_loss(y, zeros, reduction="sum"), {"reduction": "sum"}),
                       ("torch.nn.functional.kl_div", lambda: F.kl_div(y, zeros + 0.5, reduction="batchmean"), {"reduction": "batchmean"}),
                       ("torch.nn.functional.binary_cross_entropy", lambda: F.binary_cross_entropy(torch.sigmoid(y), (zeros + 1) * 0.5,
                                                                                            weight=zeros + 2.0), {"weight": "float"})):
        out.append(Spec(op, f"{op}|ties-zeros", loss_fn, [y], facts(torch, {"input": y}, "two levels: ties and exact zeros of the difference", n * c, **kw),
                        y.numel()))
    return out


# --- normalization, convolution, attention: cuDNN or native ---------------------------------


def norms(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    out = []
    C = 32
    for rank, mf, eps, cudnn in ((4, None, 1e-5, True), (4, None, 1e-6, True), (4, "channels_last", 1e-5, True),
                                 (4, None, 1e-5, False), (2, None, 1e-5, True), (5, None, 1e-5, True),
                                 (5, "channels_last_3d", 1e-5, True)):
        shape = (b.n(1 << 15, 64), C) if rank == 2 else (b.n(64, 2), C, 64, 64) if rank == 4 else (b.n(16, 2), C, 16, 32, 32)
        x = b.mixed(*shape)
        if mf:
            x = fmt(x, getattr(torch, mf), torch)
        w, bias = b.plain(C, dtype=torch.float32 if dt == torch.float16 else None), b.plain(C, dtype=torch.float32 if dt == torch.float16 else None)
        rm, rv = torch.zeros(C, device=dev, dtype=w.dtype), torch.ones(C, device=dev, dtype=w.dtype)

        def fn(x=x, w=w, bias=bias, rm=rm, rv=rv, eps=eps, cudnn=cudnn):
            with torch.backends.cudnn.flags(enabled=cudnn):
                return F.batch_norm(x, rm.clone(), rv.clone(), w, bias, training=True, eps=eps)
        out.append(Spec("torch.nn.functional.batch_norm", f"torch.nn.functional.batch_norm|{rank}d|eps={eps}|cudnn={cudnn}" + (f"|{mf}" if mf else ""),
                        fn, [x, w, bias], facts(torch, {"input": x, "weight": w}, f"{x.numel() // C} values per channel reduce into each weight gradient",
                                                 x.numel() // C, training=True, eps=eps, **{"cudnn.enabled": cudnn}), x.numel()))
    x = b.mixed(b.n(64, 2), C, 64, 64)
    xc = fmt(x, torch.channels_last, torch)
    w, bias = b.plain(C), b.plain(C)
    w64, b64 = b.plain(64), b.plain(64)
    # (op, call, facts, the input it reads): the channels_last input is named, not guessed from
    # the lambda's code (its captured names are closure cells, not co_names)
    for op, norm_fn, kw, leaf in (
            ("torch.nn.functional.group_norm", lambda: F.group_norm(x, 8, w, bias), {"num_groups": 8}, x),
            ("torch.nn.functional.group_norm", lambda: F.group_norm(xc, 8, w, bias), {"num_groups": 8}, xc),
            ("torch.nn.functional.instance_norm", lambda: F.instance_norm(x, weight=w, bias=bias, use_input_stats=True),
             {"use_input_stats": True}, x),
            ("torch.nn.functional.layer_norm", lambda: F.layer_norm(x, (64,), w64, b64), {"normalized_shape": [64]}, x),
            ("torch.nn.functional.rms_norm", lambda: F.rms_norm(x, (64,), w64), {"normalized_shape": [64]}, x),
            ("torch.nn.functional.local_response_norm", lambda: F.local_response_norm(x, 5), {"size": 5}, x)):
        tag = "|channels_last" if leaf is xc else ""
        out.append(Spec(op, f"{op}|4d{tag}", norm_fn, [leaf], facts(torch, {"input": leaf}, "64x64 values per sample reduce into each statistic",
                                                              4096, **kw), leaf.numel()))
    return out


def convs(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    out = []
    for d in (1, 2, 3):
        side = {1: 4096, 2: 64, 3: 16}[d]
        for groups, cin in ((1, 32), (32, 32)):
            for mf in ((None,) if d == 1 else (None, "channels_last" if d == 2 else "channels_last_3d")):
                for cudnn in (True, False):
                    x = b.mixed(b.n(32, 2), cin, *([side] * d))
                    if mf:
                        x = fmt(x, getattr(torch, mf), torch)
                    w = b.mixed(32, cin // groups, *([3] * d))
                    if mf:
                        w = fmt(w, getattr(torch, mf), torch)
                    conv = getattr(F, f"conv{d}d")

                    def fn(x=x, w=w, conv=conv, groups=groups, cudnn=cudnn):
                        with torch.backends.cudnn.flags(enabled=cudnn):
                            return conv(x, w, padding=1, groups=groups)
                    op = f"torch.nn.functional.conv{d}d"
                    out.append(Spec(op, f"{op}|groups={'depthwise' if groups > 1 else 1}|cudnn={cudnn}" + (f"|{mf}" if mf else ""), fn, [x, w],
                                    facts(torch, {"input": x, "weight": w}, f"the weight gradient adds {x.numel() // cin} products per entry",
                                          x.numel() // cin, groups=groups, padding=1, **{"cudnn.enabled": cudnn}), x.numel()))
        x = b.mixed(b.n(32, 2), 32, *([side // 2] * d))
        w = b.mixed(32, 16, *([4] * d))
        op = f"torch.nn.functional.conv_transpose{d}d"
        tconv = getattr(F, f"conv_transpose{d}d")
        out.append(Spec(op, f"{op}|stride=2", lambda x=x, w=w, tconv=tconv: tconv(x, w, stride=2), [x, w],
                        facts(torch, {"input": x, "weight": w}, "kernel 4, stride 2: outputs overlap", 2 ** d, stride=2), x.numel()))
    return out


def attention(torch, dev, dt, scale):
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b = B(torch, dev, dt, scale)
    out = []
    L = b.n(2048, 64)
    for backend, name in ((SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.EFFICIENT_ATTENTION, "efficient"),
                          (SDPBackend.CUDNN_ATTENTION, "cudnn"), (SDPBackend.MATH, "math")):
        for causal in (False, True):
            q, k, v = (b.plain(b.n(4, 1), 8, L, 64) for _ in range(3))

            def fn(q=q, k=k, v=v, backend=backend, causal=causal):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            op = "torch.nn.functional.scaled_dot_product_attention"
            out.append(Spec(op, f"{op}|backend={name}|is_causal={causal}", fn, [q, k, v],
                            facts(torch, {"input": q, "key": k, "value": v}, f"{L} keys per query: the query gradient sums over them", L,
                                  is_causal=causal, backend=name), q.numel()))
    return out


# --- sparse: every public sparse operation on COO and CSR, with duplicate indices -------------


def sparse(torch, dev, dt, scale):
    b = B(torch, dev, dt, scale)
    out = []
    R, C, K = 256, 256, 64
    nnz = b.n(1 << 18, 4096)

    def coo(dup: bool):
        """nnz entries on a 256x256 matrix; with `dup`, all in 64 positions (about nnz/64 duplicates each), uncoalesced."""
        g = b.gen
        if dup:
            pos = torch.randint(0, 64, (nnz,), generator=g)
            rows, cols = pos % 8 * 32, pos // 8 * 32
        else:
            flat = torch.randperm(R * C, generator=g)[: min(nnz, R * C // 4)]
            rows, cols = flat // C, flat % C
        vals = torch.randn(rows.shape[0], generator=g) * torch.randint(-6, 7, rows.shape, generator=g).float().exp2()
        t = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (R, C)).to(dev, dt)
        if not dup:
            t = t.coalesce()
        return t.detach().requires_grad_(True)

    dense = b.mixed(C, K)
    vec = b.mixed(C)
    addend = b.mixed(R, K, grad=False)
    column = b.mixed(R, 1, grad=False).expand(R, C).contiguous()

    def other(first, name, a, dup):
        """Facts of a call whose sparse operand is not the first argument (addmm's mat1, add's other)."""
        return facts(torch, {"input": first, name: a}, f"uncoalesced, about {nnz // 64} duplicates per position" if dup
                     else "coalesced, no duplicates", nnz // 64 if dup else 1, **{f"{name}.coalesced": not dup})
    square = b.mixed(C, R, grad=False)
    for dup in (True, False):
        tag = "duplicates" if dup else "coalesced"
        a = coo(dup)
        addends = nnz // 64 if dup else 1

        def fa(a=a, extra=None, dup=dup, addends=addends):
            collide = f"uncoalesced, about {nnz // 64} duplicates per position" if dup else "coalesced, no duplicates"
            return facts(torch, {"input": a, **(extra or {})}, collide, addends, **{"input.coalesced": not dup})
        sidx = b.index(4096, 8)  # drawn here, before the list, as its place in the generator's sequence was
        out += [
            Spec("torch.sparse.mm", f"torch.sparse.mm|coo@dense|{tag}", lambda a=a: torch.sparse.mm(a, dense), [a, dense], fa(a, {"mat2": dense}), nnz),
            Spec("torch.mm", f"torch.mm|coo@dense|{tag}", lambda a=a: torch.mm(a, dense), [a, dense], fa(a, {"mat2": dense}), nnz),
            Spec("torch.sparse.addmm", f"torch.sparse.addmm|coo|{tag}", lambda a=a: torch.sparse.addmm(addend, a, dense), [a, dense],
                 other(addend, "mat1", a, dup), nnz),
            Spec("torch.addmm", f"torch.addmm|dense+coo@dense|{tag}", lambda a=a: torch.addmm(dense[:R], a, dense), [a, dense],
                 other(dense[:R], "mat1", a, dup), nnz),
            Spec("torch.mv", f"torch.mv|coo|{tag}", lambda a=a: torch.mv(a, vec), [a, vec], fa(a, {"vec": vec}), nnz),
            Spec("torch.Tensor.to_dense", f"torch.Tensor.to_dense|coo|{tag}", lambda a=a: a.to_dense(), [a], fa(a), nnz),
            Spec("torch.Tensor.coalesce", f"torch.Tensor.coalesce|{tag}", lambda a=a: a.coalesce(), [], fa(a), nnz),
            Spec("torch.sparse.sum", f"torch.sparse.sum|coo|dim=1|{tag}", lambda a=a: torch.sparse.sum(a, 1), [a], fa(a), nnz),
            Spec("torch.sparse.sum", f"torch.sparse.sum|coo|all|{tag}", lambda a=a: torch.sparse.sum(a), [a], fa(a), nnz),
            Spec("torch.sparse.softmax", f"torch.sparse.softmax|coo|dim=1|{tag}", lambda a=a: torch.sparse.softmax(a, 1), [a], fa(a), nnz),
            Spec("torch.sparse.log_softmax", f"torch.sparse.log_softmax|coo|dim=1|{tag}", lambda a=a: torch.sparse.log_softmax(a, 1), [a], fa(a), nnz),
            Spec("torch.add", f"torch.add|dense+coo|{tag}", lambda a=a: torch.add(column, a), [a], other(column, "other", a, dup), nnz),
            Spec("torch.mul", f"torch.mul|coo*coo|{tag}", lambda a=a: torch.mul(a, a), [a], fa(a), nnz),
            Spec("torch.Tensor.to_sparse_csr", f"torch.Tensor.to_sparse_csr|from-coo|{tag}", lambda a=a: a.detach().to_sparse_csr(), [], fa(a), nnz),
            Spec("torch.smm", f"torch.smm|coo|{tag}", lambda a=a: torch.smm(a, dense), [], fa(a), nnz),
            Spec("torch.hspmm", f"torch.hspmm|coo|{tag}", lambda a=a: torch.hspmm(a.detach(), dense.detach()), [], fa(a), nnz),
            Spec("torch.sspaddmm", f"torch.sspaddmm|coo|{tag}", lambda a=a: torch.sspaddmm(a.detach(), a.detach(), square), [], fa(a), nnz),
            Spec("torch.index_select", f"torch.index_select|coo|dim=0|{tag}", lambda a=a, sidx=sidx: torch.index_select(a.detach(), 0, sidx), [], fa(a), nnz),
            Spec("torch.Tensor.sparse_mask", f"torch.Tensor.sparse_mask|coo-mask|{tag}", lambda a=a: column.sparse_mask(a.detach()), [],
                 other(column, "mask", a, dup), nnz),
        ]
        batched = torch.stack([a.detach()] * 8).coalesce() if not dup else torch.sparse_coo_tensor(
            torch.cat([torch.cat([torch.full((1, a._nnz()), i, device=a.device), a.detach()._indices()]) for i in range(8)], 1),
            torch.cat([a.detach()._values()] * 8), (8, R, C))
        out.append(Spec("torch.bmm", f"torch.bmm|coo|{tag}", lambda batched=batched: torch.bmm(batched, dense.detach().expand(8, C, K).contiguous()), [],
                        facts(torch, {"input": batched}, "8 batches of the same sparse matrix", addends, **{"input.coalesced": not dup}), nnz * 8))
    csr = coo(False).detach().to_sparse_csr().requires_grad_(True)
    fc = facts(torch, {"input": csr}, "CSR (compressed rows, no duplicates)", 1)
    out += [
        Spec("torch.sparse.mm", "torch.sparse.mm|csr@dense", lambda: torch.sparse.mm(csr, dense), [dense], fc, csr._nnz()),
        Spec("torch.mm", "torch.mm|csr@dense", lambda: torch.mm(csr, dense), [dense], fc, csr._nnz()),
        Spec("torch.matmul", "torch.matmul|csr@dense", lambda: torch.matmul(csr, dense), [dense], fc, csr._nnz()),
        Spec("torch.addmm", "torch.addmm|dense+csr@dense", lambda: torch.addmm(dense[:R].detach(), csr, dense), [dense],
             facts(torch, {"input": dense[:R].detach(), "mat1": csr, "mat2": dense}, "CSR (compressed rows, no duplicates)", 1), csr._nnz()),
        Spec("torch.mv", "torch.mv|csr", lambda: torch.mv(csr, vec), [vec], fc, csr._nnz()),
        Spec("torch.addmv", "torch.addmv|csr", lambda: torch.addmv(vec.detach()[:R], csr, vec), [vec],
             facts(torch, {"input": vec.detach()[:R], "mat": csr, "vec": vec}, "CSR (compressed rows, no duplicates)", 1), csr._nnz()),
        Spec("torch.Tensor.to_dense", "torch.Tensor.to_dense|csr", lambda: csr.to_dense(), [csr], fc, csr._nnz()),
        Spec("torch.sparse.sampled_addmm", "torch.sparse.sampled_addmm|csr", lambda: torch.sparse.sampled_addmm(csr.detach(), dense.detach(), dense.detach().t().contiguous()[:, :C]), [],
             fc, csr._nnz()),
        Spec("torch.sparse.mm", "torch.sparse.mm|csr@csr", lambda: torch.sparse.mm(csr.detach(), csr.detach()), [], fc, csr._nnz()),
        Spec("torch.add", "torch.add|csr+csr", lambda: torch.add(csr.detach(), csr.detach()), [], fc, csr._nnz()),
        Spec("torch.sparse.sum", "torch.sparse.sum|csr|all", lambda: torch.sum(csr.detach()), [], fc, csr._nnz()),
        Spec("torch.Tensor.to_sparse_coo", "torch.Tensor.to_sparse_coo|from-csr", lambda: csr.detach().to_sparse_coo(), [], fc, csr._nnz()),
    ]
    return out


# --- planted: a fake accumulating kernel whose order is a worker-side permutation ------------
