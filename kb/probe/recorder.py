"""Where probe records go: one JSON line per probe and step, in execution order.

Why hashes and a few statistics instead of tensors: two runs are compared bit for bit, so a
hash of the exact bytes decides "same or not"; the statistics (min, max, mean and a fixed
sample of elements) only size a difference. Both are small, so probing can stay on for a
whole run without filling the disk; with `stats_every=N` (KB_PROBE_STATS_EVERY) statistics
are kept only every N steps and the other steps hold the hash alone.

Framework tensors are fingerprinted on their device (kb.probe.fingerprint): an adapter
`reserve()`s the record when the probe fires (so execution order is kept), fills in hash and
statistics when its asynchronous copy arrives, and records are written in order once filled.

Recording is off unless a log directory is set, by `configure(dir)` or by the environment
variable KB_PROBE_DIR (which `kb probe run` sets for every run): an unconfigured probe is an
identity function, so probes can stay in a script.

Files in the log directory:
- probes.jsonl  one record per probe, step and pass (input, call, forward, dout, backward, grad, param, update)
- places.json   what each probe name is: the layer type or the ops under it (for the blame)
- meta.json     framework versions, device kind, argv: the versions `kb.status` is asked about;
                `not_recorded`: what the probe failed to record, where and why (see `not_recorded()`);
                `closed`: true once close() ran (at exit through atexit). A process that ends
                without it (`os._exit`, a kill) leaves false: its last step's records may be
                missing, and `kb probe diff` never calls such a log identical. `truncated`:
                true once the log reached MAX_RECORDS or MAX_LOG_BYTES, what the diff reads.

Every file is strict JSON: a statistic that is not finite (a run diverging to NaN or inf)
is written as the string "nan", "inf" or "-inf" (kb.jsonio.NON_FINITE).

The probe runs inside someone's training: no failure of its own may reach the training code.
Every entry point (hooks, callbacks, the public functions) catches what its recording
raises, notes it once in meta.json and lets the step go on (`guard`, `not_recorded`).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import sys
import threading
from typing import IO, Any

ENV_DIR = "KB_PROBE_DIR"
ENV_RUN = "KB_PROBE_RUN"
ENV_STATS_EVERY = "KB_PROBE_STATS_EVERY"
RECORDS = "probes.jsonl"
PLACES = "places.json"
META = "meta.json"
SAMPLE = 8  # elements at fixed positions, so a difference can be sized without the tensor
MAX_LOG_BYTES = 64 * 1024 * 1024  # a probe log: ~300 bytes a record; `kb probe diff` reads no more
MAX_RECORDS = 100_000             # ~2 s and ~200 MB to compare two such logs

FRAMEWORK_MODULES = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.dir: str | None = None
        self.handle: IO[str] | None = None
        self.step = 0
        self.seq = 0
        self.occ: dict[tuple, int] = {}
        self.places: dict[str, dict] = {}
        self.places_dirty = False
        self.devices: set[str] = set()
        self.meta_written = False
        self.meta_last: dict | None = None
        self.env_checked = False
        self.stats_every = 1
        self.pending: list[dict] = []  # reserved records, written in order once filled
        self.boundary: list = []  # adapters' (submit, resolve) at each step boundary
        self.failures: dict[tuple[str, str], dict] = {}  # (where, why) -> {where, why, count}
        self.failures_dirty = False
        self.closed = False
        self.written = 0  # records and bytes in the log, against MAX_RECORDS / MAX_LOG_BYTES
        self.written_bytes = 0
        self.truncated = False


_state = _State()
_encoder = json.JSONEncoder(separators=(",", ":")).encode  # one encoder, not one per record


def _number(value: object) -> object:
    """A statistic as strict JSON holds it: a float, or "nan" / "inf" / "-inf" (kb.jsonio)."""
    return str(float(value)) if isinstance(value, float) and value - value != 0.0 else value


def _encode(entry: dict) -> str:
    stats = entry.get("stats")
    if stats:  # the device adapters' statistics come here as they were computed: NaN when a run diverged
        entry = dict(entry, stats={k: ([_number(x) for x in v] if isinstance(v, list) else _number(v))
                                   if isinstance(v, (float, list)) else v for k, v in stats.items()})
    return _encoder(entry)


def _write_line(entry: dict) -> None:
    """One record into the log, while the log is under the limits the diff reads; past them
    the log is marked truncated (meta.json) and the rest is noted, not written."""
    if _state.truncated:
        return
    line = _encode(entry) + "\n"
    if _state.written >= MAX_RECORDS or _state.written_bytes + len(line) > MAX_LOG_BYTES:
        _state.truncated = True
        _state.failures_dirty = True
        not_recorded("the log", OverflowError(f"more than {MAX_RECORDS:,} records or {MAX_LOG_BYTES:,} bytes, "
                                              "what kb probe diff reads: later records are not written"))
        return
    assert _state.handle is not None  # opened by the first record's step
    _state.handle.write(line)
    _state.written += 1
    _state.written_bytes += len(line)


def configure(log_dir: str | os.PathLike | None, *, stats_every: int | None = None) -> None:
    """Start recording into `log_dir` (None: stop). Closes any previous log first.

    `stats_every=N` keeps statistics only on steps divisible by N (hashes on every step);
    default: KB_PROBE_STATS_EVERY, else 1.
    """
    close()
    if stats_every is None:
        text = os.environ.get(ENV_STATS_EVERY, "1")
        try:
            stats_every = int(text)
        except ValueError:
            raise ValueError(f"{ENV_STATS_EVERY}={text!r}: expected a whole number of steps >= 1") from None
    if stats_every < 1:
        raise ValueError(f"stats_every={stats_every}: expected a whole number of steps >= 1")
    with _state.lock:
        _state.stats_every = stats_every
        _state.pending.clear()
        _state.env_checked = True
        _state.dir = None if log_dir is None else os.fspath(log_dir)
        _state.step = _state.seq = 0
        _state.occ.clear()
        _state.places.clear()
        _state.devices.clear()
        _state.meta_written = False
        _state.meta_last = None
        _state.failures.clear()
        _state.failures_dirty = False
        _state.closed = _state.truncated = False
        _state.written = _state.written_bytes = 0
        if _state.dir is not None:
            os.makedirs(_state.dir, exist_ok=True)
            _state.handle = open(os.path.join(_state.dir, RECORDS), "w", encoding="utf-8")


def enabled() -> bool:
    """Recording on? The first call reads KB_PROBE_DIR (not the import: `kb probe` itself
    imports this module and must never open, let alone truncate, a log). A log that cannot
    be opened, or a bad KB_PROBE_STATS_EVERY, turns recording off with a warning: this runs
    inside the training script, which must not fail because of its probes."""
    if not _state.env_checked:
        _state.env_checked = True
        if os.environ.get(ENV_DIR) and _state.dir is None:
            try:
                configure(os.environ[ENV_DIR])
            except Exception as exc:
                _state.dir = None
                _warn("opening the log", exc)
    return _state.handle is not None


MAX_FAILURE_KINDS = 100  # distinct (where, why) pairs kept in meta.json; later ones only counted


def _why(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


def _warn(where: str, exc: BaseException) -> None:
    try:
        print(f"kb.probe: not recorded ({where}): {_why(exc)}; training goes on", file=sys.stderr)
    except Exception:  # a closed stderr: nothing to tell anyone
        pass


def not_recorded(where: str, exc: BaseException) -> None:
    """Note that the probe failed to record something at `where` (an entry point: a hook, a
    callback, a public function) and why. Kept once per (where, why) with a count in
    meta.json's `not_recorded`, which `kb probe diff` shows; the first time also one line on
    stderr. Never raises: it is called from the places that must not."""
    try:
        why = _why(exc)
        with _state.lock:
            entry = _state.failures.get((where, why))
            if entry is None:
                if len(_state.failures) >= MAX_FAILURE_KINDS:
                    where, why = "more", "further kinds of failure not listed"
                    entry = _state.failures.get((where, why))
                if entry is None:
                    entry = _state.failures[(where, why)] = {"where": where, "why": why, "count": 0}
                    if where != "more":
                        _warn(where, exc)
            entry["count"] += 1
            _state.failures_dirty = True
    except Exception:
        pass


def guard(where: str, fallback=None):
    """Decorate an entry point of the probe: an Exception it raises is noted with
    `not_recorded(where, ...)` and `fallback(*args, **kwargs)` (or None) is returned instead,
    so the training code that called it goes on. KeyboardInterrupt and SystemExit pass."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                not_recorded(where, exc)
                if fallback is None:
                    return None
                try:
                    return fallback(*args, **kwargs)
                except Exception:
                    return None
        return inner
    return wrap


def current_step() -> int:
    return _state.step


def want_stats() -> bool:
    """Keep statistics in this step? (sampling mode keeps them every N steps)"""
    return _state.step % _state.stats_every == 0


def on_boundary(submit, resolve) -> None:
    """Register an adapter's step-boundary work: `submit()` starts copying the step's device
    results to the host, `resolve(wait)` fills the records whose copies arrived."""
    with _state.lock:
        if (submit, resolve) not in _state.boundary:
            _state.boundary.append((submit, resolve))


def _drain_devices(wait: bool) -> None:
    for submit, resolve in list(_state.boundary):
        try:
            submit()
            resolve(wait)
        except Exception as exc:
            not_recorded("step boundary (copying the step's fingerprints)", exc)


def set_step(step: int | None = None) -> int:
    """Start step `step` (None: the next one). Records made from now on carry it."""
    _barrier()
    with _state.lock:
        new = _state.step + 1 if step is None else int(step)
        try:
            _drain_devices(wait=False)
        finally:  # the step moves on even where the boundary work failed
            if new != _state.step:
                _state.occ.clear()
            _state.step = new
        flush()
        return new


def _barrier() -> None:
    """JAX runs callbacks asynchronously: wait for them so a record lands in its own step."""
    jax = sys.modules.get("jax")
    if jax is not None and enabled():
        try:
            jax.effects_barrier()
        except Exception:  # an old jax or no backend yet: nothing is pending then
            pass


def describe(name: str, **info: Any) -> None:
    """Say what place `name` is (layer type, ops under it) for the diff's blame."""
    if not enabled():
        return
    with _state.lock:
        old = _state.places.get(name)
        merged = dict(old or {})
        for key, value in info.items():
            if value is None:
                continue
            if key == "ops" and merged.get("ops"):
                value = list(dict.fromkeys(list(merged["ops"]) + list(value)))
            merged[key] = value
        if merged != old:
            _state.places[name] = merged
            _state.places_dirty = True


def record(
    name: str,
    kind: str,
    value: object,
    *,
    path: str = "",
    framework: str | None = None,
    device: str | None = None,
    op: str | None = None,
    raw: object = None,
) -> None:
    """Record one value: `value` is a numpy array (or a Python scalar/str/bytes).

    `raw`, when given, is what gets hashed (e.g. the int16 view of a bfloat16 tensor that
    numpy cannot hold), while `value` gives the statistics.
    """
    if not enabled() or _state.truncated:
        return
    entry = _summary(value, raw)
    if not want_stats():
        entry.pop("stats", None)
    _append(entry, name, kind, path=path, framework=framework, device=device, op=op)


def record_digest(name: str, kind: str, digest: str, *, shape: list[int], dtype: str, stats: dict | None,
                  path: str = "", framework: str | None = None, device: str | None = None, op: str | None = None) -> None:
    """Record a value fingerprinted on its device: only the digest and statistics came here."""
    if not enabled() or _state.truncated:
        return
    entry: dict = {"hash": digest, "shape": shape, "dtype": dtype}
    if stats is not None and want_stats():
        entry["stats"] = stats
    _append(entry, name, kind, path=path, framework=framework, device=device, op=op)


def reserve(name: str, kind: str, *, path: str = "", framework: str | None = None, device: str | None = None,
            op: str | None = None, shape: list[int] | None = None, dtype: str | None = None) -> dict | None:
    """Take a record's place in execution order now; the caller sets its "hash" (and
    "stats") later and then calls `filled()`. None when recording is off (or the log is full)."""
    if not enabled() or _state.truncated:
        return None
    entry: dict = {"shape": list(shape or []), "dtype": dtype}
    return _append(entry, name, kind, path=path, framework=framework, device=device, op=op, pending=True)


def discard(entry: dict | None) -> None:
    """A reserved record whose value cannot be computed (its recording failed): drop it so
    the records after it are still written."""
    if entry is None:
        return
    with _state.lock:
        for i, other in enumerate(_state.pending):
            if other is entry:
                del _state.pending[i]
                break
        if _state.handle is not None:
            _write_ready()


def filled() -> None:
    """Some reserved records got their values: write those now in order."""
    with _state.lock:
        _write_ready()


def _write_ready() -> None:
    pending = _state.pending
    done = 0
    while done < len(pending) and "hash" in pending[done]:
        _write_line(pending[done])
        done += 1
    del pending[:done]


def _append(entry: dict, name: str, kind: str, *, path: str, framework: str | None, device: str | None,
            op: str | None, pending: bool = False) -> dict | None:
    with _state.lock:
        if _state.handle is None:
            return None
        key = (kind, name, path)
        occ = _state.occ.get(key, 0)
        _state.occ[key] = occ + 1
        entry.update(step=_state.step, seq=_state.seq, kind=kind, name=name)
        if occ:
            entry["occ"] = occ
        if path:
            entry["path"] = path
        full = want_stats()  # between statistics steps a record is kept short: meta.json and
        if not full:  # places.json hold the framework and the devices; lines are in seq order;
            for short in ("seq", "shape", "dtype"):  # the fingerprint covers shape and dtype changes
                entry.pop(short, None)  # that alter the bytes
        if framework and full:
            entry["framework"] = framework
        if device:
            if full:
                entry["device"] = device
            _state.devices.add(device)
        if op:
            entry["op"] = op
        _state.seq += 1
        if not _state.meta_written:
            _write_meta()
        if pending or _state.pending:
            _state.pending.append(entry)
            _write_ready()
        else:
            _write_line(entry)
        return entry


def _summary(value: object, raw: object) -> dict:
    if isinstance(value, (str, bytes, bool, int, float, complex)) or value is None:
        text = repr(value).encode()
        return {"hash": hashlib.blake2b(text, digest_size=8).hexdigest(), "shape": [], "dtype": type(value).__name__,
                "stats": _scalar_stats(value)}
    import numpy as np

    arr = np.asarray(value)
    hashed = np.asarray(raw) if raw is not None else arr
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{hashed.dtype.str}{hashed.shape}".encode())
    if hashed.dtype == object:
        for item in hashed.ravel():
            h.update(item if isinstance(item, bytes) else repr(item).encode())
            h.update(b"\0")
    else:
        h.update(np.ascontiguousarray(hashed).data)
    out: dict[str, object] = {"hash": h.hexdigest(), "shape": list(arr.shape), "dtype": str(arr.dtype)}
    if arr.size and arr.dtype.kind in "biufc" or (arr.size and arr.dtype.kind == "V"):
        out["stats"] = _array_stats(arr, np)
    elif arr.size and arr.dtype.kind not in "OSU":
        try:
            out["stats"] = _array_stats(arr.astype(np.float64), np)
        except (TypeError, ValueError):
            pass
    return out


def _scalar_stats(value: object) -> dict | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range
        number = float("inf") if value > 0 else float("-inf")
    return {"min": number, "max": number, "mean": number, "sample": [number]}


def _array_stats(arr, np) -> dict:
    if arr.dtype.kind == "c":
        arr = np.abs(arr)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        arr = arr.astype(np.float64)
    flat = arr.reshape(-1)
    n = flat.shape[0]
    picks = flat[[(i * (n - 1)) // (SAMPLE - 1) for i in range(SAMPLE)]] if n > SAMPLE else flat
    return {
        "min": float(flat.min()),
        "max": float(flat.max()),
        "mean": float(flat.mean(dtype=np.float64)),
        "sample": [float(v) for v in picks],
    }


def _framework_versions() -> dict[str, str]:
    found = {}
    for framework, module in FRAMEWORK_MODULES.items():
        mod = sys.modules.get(module)
        version = getattr(mod, "__version__", None) if mod is not None else None
        if isinstance(version, str):
            found[framework] = version
    return found


def _write_meta() -> None:
    _state.meta_written = True
    _state.failures_dirty = False
    meta = _meta()
    if meta != _state.meta_last:  # rewritten each step only when something new was seen
        _write_json(META, meta)
        _state.meta_last = meta


def _meta() -> dict:
    return {
        "format": 3,
        "closed": _state.closed,
        "truncated": _state.truncated,
        "stats_every": _state.stats_every,
        "argv": sys.argv,
        "pid": os.getpid(),
        "run": os.environ.get(ENV_RUN),
        "python": sys.version.split()[0],
        "frameworks": _framework_versions(),
        "devices": sorted(_state.devices),
        "not_recorded": [dict(entry) for entry in _state.failures.values()],
    }


def _write_json(name: str, obj: object) -> None:
    assert _state.dir is not None  # set when recording starts
    path = os.path.join(_state.dir, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    from kb import jsonio  # standard library only

    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(jsonio.dumps(obj, indent=1, sort_keys=True))
    os.replace(tmp, path)


def flush() -> None:
    with _state.lock:
        if _state.handle is None:
            return
        _state.handle.flush()
        if _state.places_dirty:
            _write_json(PLACES, _state.places)
            _state.places_dirty = False
        if _state.meta_written or _state.failures_dirty:
            _write_meta()  # frameworks imported, devices seen, failures since the first record


def close() -> None:
    """Flush and close the log (also runs at interpreter exit). A failure is noted in the log
    (what could still be written) and on stderr, never raised: scripts call this last."""
    try:
        _barrier()  # outside the lock: pending JAX callbacks need it to record
        with _state.lock:
            if _state.handle is None:
                return
            try:
                _drain_devices(wait=True)
            except Exception as exc:
                not_recorded("probe.close (copying the last fingerprints)", exc)
            try:
                if _state.pending:  # a record whose value never came (an adapter's boundary work failed)
                    for entry in _state.pending:
                        entry.setdefault("hash", "missing")
                    _write_ready()
                _state.closed = True  # meta.json says so: the log holds every step the script ran
                flush()
            finally:
                _state.handle.close()
                _state.handle = None
    except Exception as exc:
        _warn("closing the log", exc)


def _close_at_exit() -> None:
    """close() at interpreter exit, where a failure would print a traceback after the
    training's own output and could change its exit status: noted on stderr instead."""
    try:
        close()
    except Exception as exc:
        _warn("closing the log at exit", exc)


atexit.register(_close_at_exit)
