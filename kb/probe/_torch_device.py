"""PyTorch: fingerprints and statistics computed where the tensor lives, sent to the host in
one asynchronous copy per step.

Why: copying every probed tensor to the host and hashing it there multiplied a CUDA training
step's time by 8.5. Here a probe launches a few reduction kernels (the tensor never moves),
keeps the 0-dim results on the device, and at each step boundary all of the step's results
are stacked and copied to pinned host memory without waiting; the copy is read back one
step later, when it has long finished. The definition of the fingerprint is in
`kb.probe.fingerprint`.
"""

from __future__ import annotations

from typing import Any

import torch

from kb.probe import fingerprint, recorder

SAMPLE = recorder.SAMPLE
STATS_LEN = 3 + SAMPLE  # min, max, mean, then the sampled elements (NaN-padded)
_MAX_IN_FLIGHT = 3  # steps whose copies may still be running before the host waits
_BUFFER_ROWS = 1024  # records per fused-kernel buffer before it is finished as one piece

_cols: dict[torch.device, torch.Tensor] = {}
_rows: dict[torch.device, torch.Tensor] = {}
_picks: dict[tuple, torch.Tensor] = {}


def _col_weights(device: torch.device) -> torch.Tensor:
    w = _cols.get(device)
    if w is None:
        w = _cols[device] = torch.tensor(fingerprint.col_weights(), dtype=torch.int64, device=device)
    return w


def _row_weights(device: torch.device, rows: int) -> torch.Tensor:
    w = _rows.get(device)
    if w is None or w.numel() < rows:
        size = max(rows, 2 * (0 if w is None else w.numel()), 64)
        w = _rows[device] = torch.tensor([fingerprint.row_weight(r) for r in range(size)], dtype=torch.int64,
                                         device=device)
    return w


def words(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes in logical order as a 1-D int32 tensor (a view where possible)."""
    flat = t.detach().reshape(-1)
    if not flat.is_contiguous():
        flat = flat.contiguous()
    if flat.is_conj():
        flat = flat.resolve_conj()
    if flat.dtype is torch.bool:
        flat = flat.view(torch.uint8)
    if flat.element_size() >= 4 or (flat.numel() * flat.element_size()) % 4 == 0:
        try:
            return flat.view(torch.int32)
        except RuntimeError:  # storage offset not 4-byte aligned
            pass
    narrow = {1: torch.uint8, 2: torch.int16}[flat.element_size()]
    return flat.view(narrow).to(torch.int32)


def fingerprint_of(t: torch.Tensor) -> torch.Tensor:
    """0-dim int64 tensor on t's device: the fingerprint of t's exact bytes."""
    w = words(t)
    n = w.numel()
    cols = _col_weights(w.device)
    width = fingerprint.WIDTH
    rows, tail = divmod(n, width)
    row_w = _row_weights(w.device, rows + 1)
    total = None
    if rows:
        per_row = (w[: rows * width].view(rows, width) * cols).sum(1)  # int32 * int64: one kernel, mod 2**64
        total = (per_row * row_w[:rows]).sum()
    if total is None:  # one row: its weight folded into the column weights (cached)
        return (w * _first_row(w.device)[:tail]).sum()
    if tail:
        total = total + (w[rows * width:] * cols[:tail]).sum() * row_w[rows]
    return total


def _first_row(device: torch.device) -> torch.Tensor:
    key = ("first", device)
    w = _picks.get(key)
    if w is None:
        w = _picks[key] = _col_weights(device) * fingerprint.row_weight(0)  # int64 product: mod 2**64
    return w


def _pick_index(n: int, device: torch.device) -> torch.Tensor:
    key = (n, device)
    idx = _picks.get(key)
    if idx is None:
        positions = [(i * (n - 1)) // (SAMPLE - 1) for i in range(SAMPLE)] if n > SAMPLE else list(range(n))
        positions += [positions[-1]] * (SAMPLE - len(positions))
        idx = _picks[key] = torch.tensor(positions, dtype=torch.long, device=device)
    return idx


def stats_of(t: torch.Tensor) -> torch.Tensor | None:
    """float64 vector [min, max, mean, 8 sampled elements] on t's device (None: no numbers)."""
    x = t.detach().reshape(-1)
    if x.numel() == 0:
        return None
    if x.is_complex():
        x = x.abs()
    elif x.dtype is torch.bool:
        x = x.to(torch.uint8)
    elif not (x.is_floating_point() or x.dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)):
        x = x.to(torch.float32)
    lo, hi = torch.aminmax(x)
    mean = x.sum(dtype=torch.float64) / x.numel()
    picks = x[_pick_index(x.numel(), x.device)]
    return torch.cat([torch.stack([lo.double(), hi.double(), mean]), picks.double()])


class _Batch:
    """One step's probes on one device: their log entries and their device-side results.

    An entry's result is a row of a fused-kernel piece ("fused", piece, row) or an index into
    the plain-torch results ("torch", index, index of its statistics or -1). A piece is a
    buffer's rows, finished when the buffer filled up or at the step's end."""

    def __init__(self) -> None:
        self.entries: list[dict] = []
        self.where: list[tuple[str, int, int]] = []
        self.pieces: list[tuple[torch.Tensor, torch.Tensor | None] | None] = []
        self.open: dict[tuple, int] = {}  # buffer key -> its piece still being filled
        self.fps: list[torch.Tensor] = []
        self.stats: list[torch.Tensor] = []
        self.fp_host: torch.Tensor | None = None
        self.stats_host: torch.Tensor | None = None
        self.fp_at: list[int] = []  # where each piece's rows start in fp_host (torch results follow)
        self.stats_at: list[int] = []
        self.event: Any = None  # a torch.cuda.Event on CUDA


def _fused_module():
    """kb.probe._torch_fused, or None where Triton is missing or switched off
    (KB_PROBE_FUSED=0): the plain-torch path then does the same work, only slower."""
    if _fused[0] is False:
        return None
    if _fused[0] is None:
        import os

        try:
            if os.environ.get("KB_PROBE_FUSED", "1") == "0":
                raise ImportError("switched off by KB_PROBE_FUSED=0")
            from kb.probe import _torch_fused
        except ImportError:
            _fused[0] = False
            return None
        _fused[0] = _torch_fused
    return _fused[0]


_fused: list = [None]


class Collector:
    """The batches of the current step (per device) and the copies still in flight."""

    def __init__(self, fused=None) -> None:
        self.current: dict[torch.device, _Batch] = {}
        self.in_flight: list[_Batch] = []
        self.buffers: dict[tuple[torch.device, bool], Any] = {}  # fused.StepBuffers
        self.fused = fused  # a stand-in for kb.probe._torch_fused (tests on machines without a GPU)

    def add(self, t: torch.Tensor, entry: dict, with_stats: bool) -> None:
        batch = self.current.get(t.device)
        if batch is None:
            batch = self.current[t.device] = _Batch()
        fused = self.fused or (_fused_module() if t.is_cuda else None)
        if fused is not None and self._add_fused(fused, batch, t, entry=entry, with_stats=with_stats):
            return
        with torch.no_grad():
            batch.fps.append(fingerprint_of(t))
            vec = stats_of(t) if with_stats else None
        stats_at = -1
        if with_stats:
            if vec is not None:
                stats_at = len(batch.stats)
                batch.stats.append(vec)
                entry["_sample_n"] = min(SAMPLE, t.numel())
        batch.where.append(("torch", len(batch.fps) - 1, stats_at))
        batch.entries.append(entry)

    def _add_fused(self, fused, batch: _Batch, t: torch.Tensor, *, entry: dict, with_stats: bool) -> bool:
        view = fused.prepare(t)
        if view is None:
            return False
        key = (t.device, with_stats)
        buf = self.buffers.get(key)
        if buf is None:
            buf = self.buffers[key] = fused.StepBuffers(t.device, _BUFFER_ROWS, with_stats)
        piece = batch.open.get(key)
        if piece is not None and buf.used == buf.capacity:
            batch.pieces[piece] = buf.finish()
            piece = None
        try:
            row = buf.add(view)
        except Exception as exc:  # a GPU or Triton version the kernel does not build for
            import warnings

            warnings.warn(f"kb.probe: the fused fingerprint kernel failed ({exc}); using plain torch ops", stacklevel=2)
            _fused[0] = False
            return False
        if piece is None:
            piece = batch.open[key] = len(batch.pieces)
            batch.pieces.append(None)
        if with_stats:
            entry["_sample_n"] = min(SAMPLE, t.numel())
            entry["_numel"] = t.numel()
        batch.where.append(("fused", piece, row))
        batch.entries.append(entry)
        return True

    def submit(self) -> None:
        """Start the step's device-to-host copies (asynchronous on CUDA)."""
        for device, batch in self.current.items():
            for key, piece in batch.open.items():
                batch.pieces[piece] = self.buffers[key].finish()
            batch.open = {}
            fps_parts, stats_parts = [], []
            n_fp = n_stats = 0
            for fps, stats in batch.pieces:  # type: ignore[misc]  # every piece is finished by now
                batch.fp_at.append(n_fp)
                batch.stats_at.append(n_stats)
                fps_parts.append(fps)
                n_fp += fps.numel()
                if stats is not None:
                    stats_parts.append(stats)
                    n_stats += stats.shape[0]
            batch.fp_at.append(n_fp)
            batch.stats_at.append(n_stats)
            if batch.fps:
                fps_parts.append(torch.stack(batch.fps))
            if batch.stats:
                stats_parts.append(torch.stack(batch.stats))
            fps = torch.cat(fps_parts) if len(fps_parts) > 1 else fps_parts[0]
            stats = (torch.cat(stats_parts) if len(stats_parts) > 1 else stats_parts[0]) if stats_parts else None
            if device.type == "cuda":
                batch.fp_host = fps.to("cpu", non_blocking=True)
                batch.stats_host = stats.to("cpu", non_blocking=True) if stats is not None else None
                batch.event = torch.cuda.Event()
                batch.event.record()
            else:
                batch.fp_host = fps.cpu()
                batch.stats_host = stats.cpu() if stats is not None else None
            self.in_flight.append(batch)
        self.current = {}

    def resolve(self, wait: bool) -> None:
        """Fill in the entries whose copies finished (all of them when `wait`)."""
        while self.in_flight:
            batch = self.in_flight[0]
            if batch.event is not None and not batch.event.query():
                if not wait and len(self.in_flight) <= _MAX_IN_FLIGHT:
                    return
                batch.event.synchronize()
            self.in_flight.pop(0)
            _fill(batch)
def _fill(batch: _Batch) -> None:
    assert batch.fp_host is not None  # copied by submit()
    values = batch.fp_host.tolist()
    vectors = batch.stats_host.tolist() if batch.stats_host is not None else []
    for entry, (kind, a, b) in zip(batch.entries, batch.where):
        if kind == "fused":
            entry["hash"] = fingerprint.hexdigest(int(values[batch.fp_at[a] + b]))
            numel = entry.pop("_numel", None)
            if numel is None:
                continue
            vec = vectors[batch.stats_at[a] + b]
            mean = vec[2] / numel
        else:
            entry["hash"] = fingerprint.hexdigest(int(values[batch.fp_at[-1] + a]))
            if b < 0:
                continue
            vec = vectors[batch.stats_at[-1] + b]
            mean = vec[2]
        n = entry.pop("_sample_n", SAMPLE)
        entry["stats"] = {"min": vec[0], "max": vec[1], "mean": mean, "sample": vec[3:3 + n]}
    for entry in batch.entries:
        entry.pop("_sample_n", None)
    recorder.filled()
