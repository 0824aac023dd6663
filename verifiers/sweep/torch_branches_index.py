"""Branch units for scatters, gathers, indexing, counting, selection, scans and segment
reductions: indices from a handful of slots, ties (verifiers/sweep/torch_branches.py)."""

from __future__ import annotations


from verifiers.sweep.branch_inputs import B, Spec, dname, facts


def index_family(torch, dev, dt, scale):
    b = B(torch, dev, dt, scale)
    out = []
    n, slots, width = b.n(1 << 16, 64), 8, 64
    for idt in (torch.int64, torch.int32):
        iname = dname(torch, idt)
        base = b.mixed(slots, width)
        src = b.mixed(n, width)
        idx = b.index(n, slots, idt)
        out.append(Spec("torch.Tensor.index_add", f"torch.Tensor.index_add|dim=0|index.dtype={iname}",
                        lambda base=base, idx=idx, src=src: base.index_add(0, idx, src), [base, src],
                        facts(torch, {"input": base, "index": idx, "source": src}, f"{n} rows into {slots} slots", n // slots, dim=0), src.numel()))
        base1 = b.mixed(slots)
        src1 = b.mixed(n * 16)
        idx1 = b.index(n * 16, slots, idt)
        out.append(Spec("torch.Tensor.index_add", f"torch.Tensor.index_add|1d|index.dtype={iname}",
                        lambda base1=base1, idx1=idx1, src1=src1: base1.index_add(0, idx1, src1), [base1, src1],
                        facts(torch, {"input": base1, "index": idx1, "source": src1}, f"{n * 16} values into {slots} slots",
                              n * 16 // slots, dim=0), src1.numel()))
        table = b.mixed(slots, width)
        out.append(Spec("torch.index_select", f"torch.index_select|backward|index.dtype={iname}",
                        lambda table=table, idx=idx: torch.index_select(table, 0, idx), [table],
                        facts(torch, {"input": table, "index": idx}, f"{n} reads of {slots} rows: the gradient adds {n // slots} per row",
                              n // slots, dim=0), table.numel()))
        emb = b.mixed(slots, width)
        out.append(Spec("torch.nn.functional.embedding", f"torch.nn.functional.embedding|input.dtype={iname}",
                        lambda emb=emb, idx=idx: torch.nn.functional.embedding(idx, emb), [emb],
                        facts(torch, {"input": idx, "weight": emb}, f"{n} lookups of {slots} rows", n // slots), idx.numel()))
    idx = b.index(n, slots)
    base = b.mixed(slots, width)
    src = b.mixed(n, width)
    emb = b.mixed(slots, width)
    for kw in ({"padding_idx": 0}, {"scale_grad_by_freq": True}, {"sparse": True}):
        out.append(Spec("torch.nn.functional.embedding", "torch.nn.functional.embedding|" + "|".join(f"{k}={v}" for k, v in kw.items()),
                        lambda kw=kw: torch.nn.functional.embedding(idx, emb, **kw), [emb],
                        facts(torch, {"input": idx, "weight": emb}, f"{n} lookups of {slots} rows", n // slots, **kw), idx.numel()))
    out.append(Spec("torch.Tensor.index_copy", "torch.Tensor.index_copy|duplicate-indices", lambda: base.index_copy(0, idx, src), [base, src],
                    facts(torch, {"input": base, "index": idx, "tensor": src}, f"{n} rows written to {slots} slots", n // slots, dim=0), src.numel()))
    out.append(Spec("torch.Tensor.index_fill", "torch.Tensor.index_fill|duplicate-indices", lambda: base.index_fill(0, idx, 2.5), [base],
                    facts(torch, {"input": base, "index": idx}, f"{n} fills of {slots} slots", n // slots, dim=0, value=2.5), base.numel()))
    for acc in (True, False):
        out.append(Spec("torch.Tensor.index_put", f"torch.Tensor.index_put|accumulate={acc}", lambda acc=acc: base.index_put((idx,), src, accumulate=acc),
                        [base, src], facts(torch, {"input": base, "index": idx, "values": src}, f"{n} rows into {slots} slots", n // slots,
                                           accumulate=acc), src.numel()))
        flat = b.mixed(slots * width)
        vals = b.mixed(n * 16)
        pidx = b.index(n * 16, slots * width)
        out.append(Spec("torch.Tensor.put", f"torch.Tensor.put|accumulate={acc}", lambda flat=flat, pidx=pidx, vals=vals, acc=acc: flat.put(pidx, vals, accumulate=acc),
                        [flat, vals], facts(torch, {"input": flat, "index": pidx, "source": vals}, f"{n * 16} values into {slots * width} cells",
                                            n * 16 // (slots * width), accumulate=acc), vals.numel()))
    mask = torch.zeros(slots, width, dtype=torch.bool, device=dev)
    mask[: slots // 2] = True
    out.append(Spec("torch.Tensor.index_put", "torch.Tensor.index_put|bool-mask", lambda: base.index_put((mask,), torch.ones((), device=dev, dtype=base.dtype), accumulate=True),
                    [base], facts(torch, {"input": base, "indices": mask}, "a boolean mask (no duplicates)", 1, accumulate=True), base.numel()))
    def setitem_add():
        y = base.detach().clone()
        y[idx] += src.detach()
        return y
    out.append(Spec("torch.Tensor.__setitem__", "torch.Tensor.__setitem__|x[idx] += v|duplicate-indices", setitem_add, [],
                    facts(torch, {"input": base, "index": idx}, f"x[idx] += v with {n} indices on {slots} rows: "
                          "duplicates write different sums", n // slots), src.numel()))
    big = b.mixed(n, width)
    tidx = b.index(n * 16, 64)
    out.append(Spec("torch.take", "torch.take|backward", lambda: torch.take(big, tidx), [big],
                    facts(torch, {"input": big}, f"{n * 16} reads of 64 cells", n * 16 // 64), big.numel()))
    gidx = b.index(n * width, 8).view(n, width)
    out.append(Spec("torch.gather", "torch.gather|dim=0|backward", lambda: torch.gather(big, 0, gidx), [big],
                    facts(torch, {"input": big, "index": gidx}, f"{n} reads of 8 rows per column", n // 8, dim=0), big.numel()))
    out.append(Spec("torch.take_along_dim", "torch.take_along_dim|dim=0|backward", lambda: torch.take_along_dim(big, gidx, 0), [big],
                    facts(torch, {"input": big, "indices": gidx}, f"{n} reads of 8 rows per column", n // 8, dim=0), big.numel()))
    rep = torch.full((slots,), n // slots, device=dev, dtype=torch.int64)
    small = b.mixed(slots, width)
    out.append(Spec("torch.repeat_interleave", "torch.repeat_interleave|repeats-tensor|backward", lambda: torch.repeat_interleave(small, rep, dim=0),
                    [small], facts(torch, {"input": small, "repeats": rep}, f"each row repeated {n // slots} times", n // slots, dim=0), small.numel()))
    return out


def scatter_family(torch, dev, dt, scale):
    b = B(torch, dev, dt, scale)
    n, slots, width = b.n(1 << 15, 64), 8, 64
    idx = b.index(n * width, slots).view(n, width)
    src = b.mixed(n, width)
    base = b.mixed(slots, width)
    out = [
        Spec("torch.Tensor.scatter_add", "torch.Tensor.scatter_add|dim=0", lambda: base.scatter_add(0, idx, src), [base, src],
             facts(torch, {"input": base, "index": idx, "src": src}, f"{n} values per column into {slots} slots", n // slots, dim=0), src.numel()),
        Spec("torch.Tensor.scatter", "torch.Tensor.scatter|src-tensor", lambda: base.scatter(0, idx, src), [base, src],
             facts(torch, {"input": base, "index": idx, "src": src}, f"{n} writes per column to {slots} slots", n // slots, dim=0), src.numel()),
        Spec("torch.Tensor.scatter", "torch.Tensor.scatter|value-scalar", lambda: base.scatter(0, idx, 1.5), [base],
             facts(torch, {"input": base, "index": idx}, f"{n} writes of one value per column to {slots} slots", n // slots, dim=0, value=1.5),
             idx.numel()),
    ]
    for red in ("add", "multiply"):
        out.append(Spec("torch.Tensor.scatter_", f"torch.Tensor.scatter_|reduce={red}|src-tensor",
                        lambda red=red: base.detach().clone().scatter_(0, idx, src.detach() if red == "add" else (1 + src.detach() * 1e-3), reduce=red), [],
                        facts(torch, {"input": base, "index": idx, "src": src}, f"{n} values per column into {slots} slots", n // slots,
                              dim=0, reduce=red), src.numel()))
        out.append(Spec("torch.Tensor.scatter_", f"torch.Tensor.scatter_|reduce={red}|value-scalar",
                        lambda red=red: base.detach().clone().scatter_(0, idx, 1.0001, reduce=red), [],
                        facts(torch, {"input": base, "index": idx}, f"{n} updates of one value per column into {slots} slots",
                              n // slots, dim=0, value=1.0001, reduce=red), idx.numel()))
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            s = (1 + src.detach() * 1e-3).requires_grad_(True) if red == "prod" else src
            out.append(Spec("torch.Tensor.scatter_reduce", f"torch.Tensor.scatter_reduce|reduce={red}|include_self={inc}",
                            lambda red=red, inc=inc, s=s: base.scatter_reduce(0, idx, s, red, include_self=inc), [base, s],
                            facts(torch, {"input": base, "index": idx, "src": s}, f"{n} values per column into {slots} slots",
                                  n // slots, dim=0, reduce=red, include_self=inc), src.numel()))
    rows = b.index(n, slots)
    for red in ("prod", "mean", "amax", "amin"):
        s = (1 + src.detach() * 1e-3).requires_grad_(True) if red == "prod" else src
        out.append(Spec("torch.Tensor.index_reduce", f"torch.Tensor.index_reduce|reduce={red}",
                        lambda red=red, s=s: base.index_reduce(0, rows, s, red), [base, s],
                        facts(torch, {"input": base, "index": rows, "source": s}, f"{n} rows into {slots} slots", n // slots,
                              dim=0, reduce=red), src.numel()))
    return out


def embedding_bag(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    n, slots, width, bags = b.n(1 << 16, 64), 8, 64, b.n(1024, 8)
    out = []
    for mode in ("sum", "mean", "max"):
        for odt in (torch.int64, torch.int32):
            w = b.ties(slots, width) if mode == "max" else b.mixed(slots, width)
            inp = b.index(n, slots, odt)
            offsets = (torch.arange(bags, device=dev) * (n // bags)).to(odt)
            out.append(Spec("torch.nn.functional.embedding_bag", f"torch.nn.functional.embedding_bag|mode={mode}|offsets.dtype={dname(torch, odt)}",
                            lambda w=w, inp=inp, offsets=offsets, mode=mode: F.embedding_bag(inp, w, offsets, mode=mode), [w],
                            facts(torch, {"input": inp, "weight": w, "offsets": offsets}, f"{n} lookups of {slots} rows",
                                  n // slots, mode=mode), inp.numel()))
    w = b.mixed(slots, width)
    inp = b.index(n, slots)
    offsets = torch.arange(bags, device=dev) * (n // bags)
    psw = b.mixed(n)
    out.append(Spec("torch.nn.functional.embedding_bag", "torch.nn.functional.embedding_bag|mode=sum|per_sample_weights",
                    lambda: F.embedding_bag(inp, w, offsets, mode="sum", per_sample_weights=psw), [w, psw],
                    facts(torch, {"input": inp, "weight": w, "offsets": offsets, "per_sample_weights": psw}, f"{n} lookups of {slots} rows",
                          n // slots, mode="sum"), inp.numel()))
    for kw in ({"padding_idx": 0}, {"include_last_offset": True}, {"sparse": True}):
        out.append(Spec("torch.nn.functional.embedding_bag", "torch.nn.functional.embedding_bag|mode=mean|" + "|".join(f"{k}={v}" for k, v in kw.items()),
                        lambda kw=kw: F.embedding_bag(inp, w, offsets, mode="mean", **kw), [w],
                        facts(torch, {"input": inp, "weight": w, "offsets": offsets}, f"{n} lookups of {slots} rows", n // slots,
                              mode="mean", **kw), inp.numel()))
    return out


def counting(torch, dev, dt, scale):
    b = B(torch, dev, dt, scale)
    n = b.n(1 << 21, 1024)
    out = []
    for idt in (torch.int64, torch.int32):
        x = b.index(n, 16, idt)
        w = b.mixed(n, grad=False)
        out.append(Spec("torch.bincount", f"torch.bincount|weights|input.dtype={dname(torch, idt)}", lambda x=x, w=w: torch.bincount(x, w, 16), [],
                        facts(torch, {"input": x, "weights": w}, f"{n} weighted counts into 16 bins", n // 16, minlength=16), n))
    x = b.index(n, 16)
    out.append(Spec("torch.bincount", "torch.bincount|no-weights", lambda: torch.bincount(x, minlength=16), [],
                    facts(torch, {"input": x}, f"{n} counts into 16 bins", n // 16, minlength=16), n))
    h = b.mixed(n, grad=False)
    out.append(Spec("torch.histc", "torch.histc|float", lambda: torch.histc(h, 16, -4, 4), [],
                    facts(torch, {"input": h}, f"{n} values into 16 bins", n // 16, bins=16, min=-4, max=4), n))
    return out


def selection(torch, dev, dt, scale):
    """Ops that select among equal values: which of the ties wins decides the indices (and the backward)."""
    b = B(torch, dev, dt, scale)
    x = b.ties(b.n(2048, 16), 1024, levels=4)
    out = []
    for name, fn, kw in (("torch.sort", lambda x: torch.sort(x, dim=1), {"dim": 1}),
                         ("torch.sort", lambda x: torch.sort(x, dim=1, stable=True), {"dim": 1, "stable": True}),
                         ("torch.argsort", lambda x: torch.argsort(x, dim=1), {"dim": 1}),
                         ("torch.topk", lambda x: torch.topk(x, 16, dim=1), {"k": 16, "dim": 1}),
                         ("torch.kthvalue", lambda x: torch.kthvalue(x, 100, dim=1), {"k": 100, "dim": 1}),
                         ("torch.median", lambda x: torch.median(x, dim=1), {"dim": 1}),
                         ("torch.mode", lambda x: torch.mode(x, dim=1), {"dim": 1}),
                         ("torch.max", lambda x: torch.max(x, dim=1), {"dim": 1}),
                         ("torch.unique", lambda x: torch.unique(x, sorted=True, return_inverse=True, return_counts=True), {"sorted": True, "return_inverse": True, "return_counts": True}),
                         ("torch.cummax", lambda x: torch.cummax(x, dim=1), {"dim": 1}),
                         ("torch.Tensor.nonzero", lambda x: x.nonzero(), {})):
        out.append(Spec(name, f"{name}|ties|" + "|".join(f"{k}={v}" for k, v in kw.items()), lambda fn=fn: fn(x),
                        [x] if name not in ("torch.argsort", "torch.unique", "torch.Tensor.nonzero") else [],
                        facts(torch, {"input": x}, "4 levels only: every row holds hundreds of equal values", 256, **kw), x.numel()))
    return out


def scans(torch, dev, dt, scale):
    b = B(torch, dev, dt, scale)
    n = b.n(1 << 22, 4096)
    out = []
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        fn = getattr(torch, name)
        one = b.plain(n, low=0.999, high=1.001) if name == "cumprod" else b.mixed(n)
        nd = b.plain(b.n(2048, 16), 2048, low=0.999, high=1.001) if name == "cumprod" else b.mixed(b.n(2048, 16), 2048)
        out.append(Spec(f"torch.{name}", f"torch.{name}|1d", lambda fn=fn, one=one: fn(one, 0), [one],
                        facts(torch, {"input": one}, f"one scan of {n} values", n, dim=0), n))
        for dim in (0, 1):
            out.append(Spec(f"torch.{name}", f"torch.{name}|2d|dim={dim}", lambda fn=fn, nd=nd, dim=dim: fn(nd, dim), [nd],
                            facts(torch, {"input": nd}, f"scans of {nd.shape[dim]} values", nd.shape[dim], dim=dim), nd.numel()))
    return out


def segment_reduce(torch, dev, dt, scale):
    b = B(torch, dev, dt, scale)
    n = b.n(1 << 21, 1024)
    segs = 16
    out = []
    for red in ("sum", "mean", "prod", "max", "min"):
        for rank in (1, 2):
            data = (b.plain(n, low=0.999, high=1.001) if red == "prod" else b.mixed(n)) if rank == 1 else (
                b.plain(n // 64, 64, low=0.999, high=1.001) if red == "prod" else b.mixed(n // 64, 64))
            rows = data.shape[0]
            lengths = torch.full((segs,), rows // segs, device=dev, dtype=torch.int64)
            lengths[-1] += rows - int(lengths.sum())
            out.append(Spec("torch.segment_reduce", f"torch.segment_reduce|reduce={red}|{rank}d|lengths",
                            lambda data=data, red=red, lengths=lengths: torch.segment_reduce(data, red, lengths=lengths, unsafe=True), [data],
                            facts(torch, {"input": data, "lengths": lengths}, f"{segs} segments of {rows // segs} values",
                                  rows // segs, reduce=red, unsafe=True), data.numel()))
    return out


# --- losses: targets' dtype and device, ranks, reductions -------------------------------------
