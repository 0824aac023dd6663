"""Branch units for pooling, interpolation, sampling and padding: outputs larger than inputs,
grids that converge, windows that overlap on isolated peaks (verifiers/sweep/torch_branches.py)."""

from __future__ import annotations

import math
from typing import Any

from verifiers.sweep.branch_inputs import B, Spec, facts, fmt

KERNEL = {1: 9, 2: 5, 3: 3}
"""Window per dimension of the overlapping-window units: with stride 1 each cell is in k**d windows."""
SIDE = {1: 4096, 2: 128, 3: 32}
"""Input side per dimension of those units."""


def formats(torch, d: int) -> tuple:
    """The memory formats a d-dimensional pooling input is swept in: contiguous, and channels_last(_3d)."""
    return (None,) + ((torch.channels_last,) if d == 2 else (torch.channels_last_3d,) if d == 3 else ())


def tag(mf) -> str:
    """The branch id's suffix for a memory format ('' for contiguous)."""
    return "|" + str(mf).split(".")[-1] if mf else ""


def adaptive_pool(kind: str, d: int):
    def unit(torch, dev, dt, scale):
        F = torch.nn.functional
        b = B(torch, dev, dt, scale)
        fn = getattr(F, f"adaptive_{kind}_pool{d}d")
        op = f"torch.nn.functional.adaptive_{kind}_pool{d}d"
        small, big = {1: (16, 128), 2: (8, 64), 3: (4, 32)}[d]
        nb = b.n(8)
        out = []
        # upsampling: output 8x the input along each dim, so each input cell feeds 8^d outputs
        for mf in formats(torch, d):
            x = fmt(b.ties(nb, 16, *([small] * d)) if kind == "max" else b.mixed(nb, 16, *([small] * d)), mf, torch)
            size = [big] * d
            out.append(Spec(op, f"{op}|{'upsample'}{tag(mf)}",
                            lambda x=x, size=size: fn(x, size), [x],
                            facts(torch, {"input": x}, f"output {big // small}x the input per dim: "
                                  f"{(big // small) ** d} outputs read each input cell", (big // small) ** d,
                                  output_size=size), x.numel()))
        # overlapping windows, not divisible (the atomic kernels): 13 -> 5 per dim, with ties
        x = b.ties(nb, 16, *([b.n(39, 13)] * d)) if kind == "max" else b.mixed(nb, 16, *([b.n(39, 13)] * d))
        size = [5] * d
        out.append(Spec(op, f"{op}|overlap", lambda x=x, size=size: fn(x, size), [x],
                        facts(torch, {"input": x}, "sizes not divisible: neighbouring windows share cells; values are ties",
                              2 ** d, output_size=size), x.numel()))
        return out
    return unit


def max_pool(d: int):
    def unit(torch, dev, dt, scale):
        F = torch.nn.functional
        b = B(torch, dev, dt, scale)
        op = f"torch.nn.functional.max_pool{d}d"
        fn = getattr(F, op.rsplit(".", 1)[1])
        k = KERNEL[d]
        side = SIDE[d]
        out = []
        mfs = formats(torch, d)
        for mf in mfs:
            x = fmt(b.peaks(b.n(8), 16, *([b.n(side, 8)] * d), every=k), mf, torch)
            out.append(Spec(op, f"{op}|overlap-peaks{tag(mf)}",
                            lambda x=x: fn(x, k, stride=1), [x],
                            facts(torch, {"input": x}, f"kernel {k}, stride 1: each peak is the maximum of the {k ** d} windows that hold it",
                                  k ** d, kernel_size=k, stride=1), x.numel()))
        x = b.ties(b.n(8), 16, *([b.n(side, 8)] * d), levels=2)
        out.append(Spec(op, f"{op}|overlap-ties", lambda x=x: fn(x, k, stride=1, ceil_mode=True), [x],
                        facts(torch, {"input": x}, "two levels only: most windows hold several equal maxima", k ** d,
                              kernel_size=k, stride=1, ceil_mode=True), x.numel()))
        return out
    return unit


def avg_pool(d: int):
    def unit(torch, dev, dt, scale):
        F = torch.nn.functional
        b = B(torch, dev, dt, scale)
        op = f"torch.nn.functional.avg_pool{d}d"
        fn = getattr(F, op.rsplit(".", 1)[1])
        k = KERNEL[d]
        side = SIDE[d]
        out = []
        mfs = formats(torch, d)
        for mf in mfs:
            for cip in (True, False):
                x = fmt(b.mixed(b.n(8), 16, *([b.n(side, 8)] * d)), mf, torch)
                kw = {"stride": 1, "padding": k // 2, "count_include_pad": cip}
                out.append(Spec(op, f"{op}|overlap|count_include_pad={cip}{tag(mf)}",
                                lambda x=x, kw=kw: fn(x, k, **kw), [x],
                                facts(torch, {"input": x}, f"kernel {k}, stride 1: each input cell is in {k ** d} windows", k ** d,
                                      kernel_size=k, **kw), x.numel()))
        return out
    return unit


def lp_pool(d: int):
    def unit(torch, dev, dt, scale):
        F = torch.nn.functional
        b = B(torch, dev, dt, scale)
        op = f"torch.nn.functional.lp_pool{d}d"
        fn = getattr(F, op.rsplit(".", 1)[1])
        k = KERNEL[d]
        side = SIDE[d]
        x = b.plain(b.n(8), 16, *([b.n(side, 8)] * d), low=0.5, high=2.0)
        return [Spec(op, f"{op}|overlap", lambda: fn(x, 2.0, k, stride=1), [x],
                     facts(torch, {"input": x}, f"kernel {k}, stride 1", k ** d, norm_type=2.0, kernel_size=k, stride=1), x.numel())]
    return unit


def fractional_max_pool(d: int):
    def unit(torch, dev, dt, scale):
        F = torch.nn.functional
        b = B(torch, dev, dt, scale)
        op = f"torch.nn.functional.fractional_max_pool{d}d"
        fn = getattr(F, op.rsplit(".", 1)[1])
        side = {2: 128, 3: 32}[d]
        x = b.peaks(b.n(8), 16, *([b.n(side, 8)] * d), every=3)
        samples = torch.rand(x.shape[0], x.shape[1], d, generator=b.gen).to(dev, x.dtype)
        ratio = [0.5] * d
        return [Spec(op, f"{op}|overlap-peaks", lambda: fn(x, 3, output_ratio=ratio, _random_samples=samples), [x],
                     facts(torch, {"input": x}, "kernel 3, output half the input: neighbouring windows share a row of cells, "
                           "where the peaks are", 2 ** d, kernel_size=3, output_ratio=ratio), x.numel())]
    return unit


def max_unpool(d: int):
    def unit(torch, dev, dt, scale):
        F = torch.nn.functional
        b = B(torch, dev, dt, scale)
        op = f"torch.nn.functional.max_unpool{d}d"
        fn = getattr(F, op.rsplit(".", 1)[1])
        side = {1: 4096, 2: 64, 3: 16}[d]
        x = b.mixed(b.n(8), 16, *([b.n(side, 4)] * d))
        idx = torch.zeros(x.shape, dtype=torch.int64, device=dev)  # every value to position 0 of its plane
        idx.view(-1)[::2] = 1
        return [Spec(op, f"{op}|duplicate-indices", lambda: fn(x, idx, 2), [x],
                     facts(torch, {"input": x, "indices": idx}, "all indices are 0 or 1: every value of a plane writes one of two cells",
                           x[0, 0].numel() // 2, kernel_size=2), x.numel())]
    return unit


INTERP = (  # (mode, rank, align_corners, antialias, memory format)
    ("nearest", 3, None, False, None), ("nearest", 4, None, False, None), ("nearest", 5, None, False, None),
    ("nearest", 4, None, False, "channels_last"), ("nearest", 5, None, False, "channels_last_3d"),
    ("nearest-exact", 3, None, False, None), ("nearest-exact", 4, None, False, None), ("nearest-exact", 5, None, False, None),
    ("linear", 3, False, False, None), ("linear", 3, True, False, None),
    ("bilinear", 4, False, False, None), ("bilinear", 4, True, False, None),
    ("bilinear", 4, False, False, "channels_last"), ("bilinear", 4, True, False, "channels_last"),
    ("bilinear", 4, False, True, None),
    ("bicubic", 4, False, False, None), ("bicubic", 4, True, False, None), ("bicubic", 4, False, False, "channels_last"),
    ("bicubic", 4, False, True, None),
    ("trilinear", 5, False, False, None), ("trilinear", 5, True, False, None), ("trilinear", 5, False, False, "channels_last_3d"),
    ("area", 3, None, False, None), ("area", 4, None, False, None), ("area", 5, None, False, None),
)


def interpolate(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    op = "torch.nn.functional.interpolate"
    out = []
    for mode, rank, ac, aa, mf in INTERP:
        d = rank - 2
        small = {1: 64, 2: 16, 3: 8}[d]
        factor = 8 if d < 3 else 4
        x = b.mixed(b.n(8), 16, *([small] * d))
        if mf:
            x = fmt(x, getattr(torch, mf), torch)
        size = [small * factor] * d
        kw: dict[str, Any] = {"size": size, "mode": mode}
        if ac is not None:
            kw["align_corners"] = ac
        if aa:
            kw["antialias"] = True
        branch = f"{op}|{mode}|{rank}d|align_corners={ac}|antialias={aa}" + (f"|{mf}" if mf else "") + "|upsample"
        out.append(Spec(op, branch, lambda x=x, kw=kw: F.interpolate(x, **kw), [x],
                        facts(torch, {"input": x}, f"output {factor}x the input per dim: each input cell feeds "
                              f"{factor ** d} or more outputs", factor ** d, **kw), x.numel()))
    for mode in ("bilinear", "bicubic"):  # antialiased downsampling: wide overlapping kernels
        x = b.mixed(b.n(8), 16, b.n(256, 32), b.n(256, 32))
        kw = {"scale_factor": 0.25, "mode": mode, "antialias": True, "align_corners": False}
        out.append(Spec(op, f"{op}|{mode}|4d|align_corners=False|antialias=True|downsample", lambda x=x, kw=kw: F.interpolate(x, **kw), [x],
                        facts(torch, {"input": x}, "antialiased 4x downsampling: each input cell is in ~3x3 overlapping windows", 9, **kw),
                        x.numel()))
    return out


def grid_sample(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    op = "torch.nn.functional.grid_sample"
    out = []
    for rank in (4, 5):
        modes = ("bilinear", "nearest", "bicubic") if rank == 4 else ("bilinear", "nearest")
        for mode in modes:
            for pad in ("zeros", "border", "reflection"):
                for ac in (False, True):
                    n = b.n(8)
                    side = 16 if rank == 4 else 8
                    x = b.mixed(n, 16, *([side] * (rank - 2)))
                    oside = 128 if rank == 4 else 32
                    # a grid that converges: every point within 0.15 of the centre, so the ~8x8 output
                    # points per input cell (and more near the centre) read and write the same few cells
                    g = (torch.rand(n, *([oside] * (rank - 2)), rank - 2, generator=b.gen) * 0.3 - 0.15).to(dev, dt)
                    g.requires_grad_(True)
                    kw = {"mode": mode, "padding_mode": pad, "align_corners": ac}
                    addends = (oside ** (rank - 2)) // max(1, int((side * 0.15) ** (rank - 2)))
                    out.append(Spec(op, f"{op}|{mode}|{pad}|align_corners={ac}|{rank}d|converge",
                                    lambda x=x, g=g, kw=kw: F.grid_sample(x, g, **kw), [x, g],
                                    facts(torch, {"input": x, "grid": g}, "grid points all within 0.15 of the centre: "
                                          "many output points sample the same input cells", addends, **kw), x.numel()))
    return out


def affine_grid(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    op = "torch.nn.functional.affine_grid"
    out = []
    for rank in (4, 5):
        for ac in (False, True):
            n = b.n(64)
            theta = b.mixed(n, rank - 2, rank - 1)
            size = [n, 3] + ([256, 256] if rank == 4 else [32, 32, 32])
            out.append(Spec(op, f"{op}|{rank}d|align_corners={ac}", lambda theta=theta, size=size, ac=ac: F.affine_grid(theta, size, align_corners=ac),
                            [theta], facts(torch, {"input": theta}, "every output point's gradient adds into one theta",
                                           math.prod(size[2:]), size=size, align_corners=ac), theta.numel()))
    return out


def pad(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    op = "torch.nn.functional.pad"
    out = []
    for mode in ("reflect", "replicate", "circular"):
        for rank in (2, 3, 4, 5):
            d = max(1, rank - 2) if rank > 2 else 1
            side = {1: 64, 2: 32, 3: 16}[d]
            shape = ([b.n(64)] if rank == 2 else [b.n(8), 16]) + [side] * d
            if rank == 2:
                shape = [b.n(64), side]
            x = b.mixed(*shape)
            p = side - 1 if mode != "replicate" else side
            padding = [p, p] * d
            kw = {"pad": padding, "mode": mode, "pad.len": len(padding)}
            add = ((2 * p + side) // side + 1) ** d if mode != "replicate" else (p + 1) ** d
            out.append(Spec(op, f"{op}|{mode}|{rank}d|pad.len={len(padding)}", lambda x=x, padding=padding, mode=mode: F.pad(x, padding, mode=mode), [x],
                            facts(torch, {"input": x}, f"padding {p} on each side of {side}: edge cells are copied to many outputs",
                                  add, **kw), x.numel()))
    return out


def unfold_fold(torch, dev, dt, scale):
    F = torch.nn.functional
    b = B(torch, dev, dt, scale)
    x = b.mixed(b.n(8), 16, 64, 64)
    cols = b.mixed(b.n(8), 16 * 25, 60 * 60)
    return [
        Spec("torch.nn.functional.unfold", "torch.nn.functional.unfold|overlap", lambda: F.unfold(x, 5), [x],
             facts(torch, {"input": x}, "kernel 5, stride 1: each cell in 25 patches", 25, kernel_size=5), x.numel()),
        Spec("torch.nn.functional.fold", "torch.nn.functional.fold|overlap", lambda: F.fold(cols, (64, 64), 5), [cols],
             facts(torch, {"input": cols}, "kernel 5, stride 1: 25 patch entries add into each cell", 25, output_size=[64, 64],
                   kernel_size=5), cols.numel()),
    ]


# --- scatters, gathers and indexing: indices from a few slots -------------------------------
