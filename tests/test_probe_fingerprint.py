"""The device fingerprint: the adapters compute the definition's number, and any single bit
flip anywhere in a tensor changes it (the property that makes it a safe "same bytes" test)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from kb.probe import fingerprint

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="torch is not installed (pip install -e '.[test]' installs it)")


def _torch():
    import torch

    from kb.probe import _torch_device

    return torch, _torch_device


def _shapes():
    w = fingerprint.WIDTH
    return [(1,), (37,), (w,), (2 * w + 3,), (3, 5, 7)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64", "int64", "bool", "uint8"])
@pytest.mark.parametrize("shape", _shapes())
def test_torch_matches_the_definition(dtype: str, shape: tuple) -> None:
    torch, dev = _torch()
    g = torch.Generator().manual_seed(0)
    t = (torch.randn(shape, generator=g) * 100).to(getattr(torch, dtype))
    words = dev.words(t).numpy()
    assert int(dev.fingerprint_of(t)) == fingerprint.reference(words)
    # the words are the tensor's bytes in logical order: a transposed copy hashes like its values
    if t.dim() == 3 and dtype != "bool":  # randn*100 as bool is all True: any order is the same
        tt = t.transpose(0, 2)
        assert int(dev.fingerprint_of(tt)) == int(dev.fingerprint_of(tt.contiguous()))
        assert int(dev.fingerprint_of(tt)) != int(dev.fingerprint_of(t))


def _flip(t, index: int, bit: int):
    torch, _ = _torch()
    raw = t.clone().reshape(-1).view(torch.uint8)
    raw[index] ^= 1 << bit
    return raw.view(t.dtype).reshape(t.shape)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "bool"])
def test_every_single_bit_flip_changes_the_fingerprint_small(dtype: str) -> None:
    torch, dev = _torch()
    t = (torch.randn(37, generator=torch.Generator().manual_seed(1)) * 10).to(getattr(torch, dtype))
    base = int(dev.fingerprint_of(t))
    nbytes = t.numel() * t.element_size()
    flips = {int(dev.fingerprint_of(_flip(t, i, b))) for i in range(nbytes) for b in range(8)}
    assert base not in flips
    assert len(flips) == nbytes * 8  # and no two flips collide with each other either


def test_single_bit_flips_across_rows_and_tail() -> None:
    torch, dev = _torch()
    w = fingerprint.WIDTH
    t = torch.randn(3 * w + 17, generator=torch.Generator().manual_seed(2))
    base = int(dev.fingerprint_of(t))
    rng = np.random.default_rng(3)
    words = sorted({0, w - 1, w, 2 * w, 3 * w, 3 * w + 16, *rng.integers(0, 3 * w + 17, 40).tolist()})
    for word in words:
        for bit in range(32):
            flipped = _flip(t, 4 * word + bit // 8, bit % 8)
            assert int(dev.fingerprint_of(flipped)) != base, (word, bit)


def test_swapping_two_elements_changes_the_fingerprint() -> None:
    torch, dev = _torch()
    t = torch.arange(10000, dtype=torch.float32)
    s = t.clone()
    s[[5, 9000]] = s[[9000, 5]]
    assert int(dev.fingerprint_of(t)) != int(dev.fingerprint_of(s))


def test_statistics_on_the_device() -> None:
    torch, dev = _torch()
    t = torch.tensor([[1.0, -2.0], [3.0, 4.0]], dtype=torch.bfloat16)
    vec = dev.stats_of(t).tolist()
    assert vec[:3] == [-2.0, 4.0, 1.5] and vec[3:7] == [1.0, -2.0, 3.0, 4.0]


def _need(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs it)")


def test_jax_inside_jit_matches_the_definition_and_catches_every_bit_flip() -> None:
    _need("jax")
    import jax
    import jax.numpy as jnp

    from kb.probe import _jax

    fp = jax.jit(_jax.device_fingerprint)
    x = (np.random.default_rng(0).standard_normal(3 * fingerprint.WIDTH + 5) * 100).astype(np.float32)
    assert _jax.digest(fp(jnp.asarray(x))) == fingerprint.lanes_hexdigest(*fingerprint.reference_lanes(x.view(np.uint32)))
    small = x[:37].copy()
    raw = small.view(np.uint8)
    digests = set()
    for i in range(raw.size):
        for bit in range(8):
            flipped = raw.copy()
            flipped[i] ^= 1 << bit
            digests.add(_jax.digest(fp(jnp.asarray(flipped.view(np.float32)))))
    assert _jax.digest(fp(jnp.asarray(small))) not in digests and len(digests) == raw.size * 8
    bf = jnp.asarray(small).astype(jnp.bfloat16)
    assert _jax.digest(fp(bf)) == _jax.reference_digest(np.asarray(bf))


def test_tensorflow_matches_the_lane_definition_and_jax() -> None:
    _need("tensorflow")
    import tensorflow as tf

    from kb.probe import _tf

    x = (np.random.default_rng(1).standard_normal(fingerprint.WIDTH + 3) * 100).astype(np.float32)
    want = fingerprint.lanes_hexdigest(*fingerprint.reference_lanes(x.view(np.uint32)))
    lanes = tf.function(_tf.device_fingerprint)(tf.constant(x)).numpy()
    assert fingerprint.lanes_hexdigest(int(lanes[0]), int(lanes[1])) == want
    flipped = x.copy()
    flipped.view(np.uint32)[5] ^= 1 << 31  # a sign flip
    other = _tf.device_fingerprint(tf.constant(flipped)).numpy()
    assert fingerprint.lanes_hexdigest(int(other[0]), int(other[1])) != want


class _FakeFused:
    """Stands in for the CUDA kernel module on a machine without a GPU: the same interface
    (prepare, StepBuffers with add/finish, capacity, used), computed with plain torch, with
    a tiny capacity so that one step spans several pieces."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    def prepare(self, t):
        import torch

        if t.numel() == 0 or (t.numel() * t.element_size()) % 4:
            return None  # like the kernel: such tensors take the plain-torch path
        return t.contiguous().view(torch.uint8) if t.dtype is torch.bool else t.contiguous()

    def StepBuffers(self, device, capacity, stats):  # noqa: N802 - mirrors the class it stands in for
        torch, dev = _torch()
        fake = self

        class Buffers:
            def __init__(self) -> None:
                self.capacity, self.used, self.stats, self.rows = fake.capacity, 0, stats, []

            def add(self, t) -> int:
                x = t.reshape(-1)
                sums = x.sum(dtype=torch.float64)
                vec = dev.stats_of(t)
                self.rows.append((dev.fingerprint_of(t), torch.cat([vec[:2], sums.reshape(1), vec[3:]])))
                self.used += 1
                return self.used - 1

            def finish(self):
                fps = torch.stack([fp for fp, _ in self.rows])
                st = torch.stack([v for _, v in self.rows]) if self.stats else None
                self.rows, self.used = [], 0
                return fps, st

        return Buffers()


@pytest.mark.parametrize("stats", [True, False])
def test_fused_bookkeeping_gives_each_record_its_own_result(stats: bool) -> None:
    """Records that go through the fused path (in several pieces a step) and through the plain
    path (odd byte counts), interleaved over two steps, each get exactly the fingerprint and
    statistics the plain path gives them."""
    torch, dev = _torch()
    g = torch.Generator().manual_seed(3)
    def make(n: int, dt):
        x = torch.randn(n, generator=g) * 100
        return (x > 0) if dt is torch.bool else x.to(dt)

    steps = [[make(n, dt) for n, dt in
              [(5, torch.float32), (7, torch.bfloat16), (4096 * 2 + 1, torch.float32), (6, torch.int64),
               (3, torch.bfloat16), (64, torch.bool), (12, torch.float16)]] for _ in range(2)]
    fused, plain = dev.Collector(fused=_FakeFused(capacity=2)), dev.Collector()
    got, want = [], []
    for tensors in steps:
        for collector, out in ((fused, got), (plain, want)):
            entries = [{} for _ in tensors]
            for t, e in zip(tensors, entries):
                collector.add(t, e, stats)
            collector.submit()
            out.append(entries)
    fused.resolve(True)
    plain.resolve(True)
    assert [[e["hash"] for e in s] for s in got] == [[e["hash"] for e in s] for s in want]
    assert len({e["hash"] for s in got for e in s}) == 14  # every record its own value
    if stats:
        for a, b in zip([e for s in got for e in s], [e for s in want for e in s]):
            assert a["stats"]["min"] == b["stats"]["min"] and a["stats"]["max"] == b["stats"]["max"]
            assert a["stats"]["sample"] == b["stats"]["sample"]
            assert a["stats"]["mean"] == pytest.approx(b["stats"]["mean"], rel=1e-12)
    else:
        assert not any("stats" in e for s in got for e in s)
    assert not any(k.startswith("_") for s in got for e in s for k in e)
