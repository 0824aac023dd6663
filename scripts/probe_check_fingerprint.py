"""The device fingerprint on this machine's accelerator equals the definition computed on the
host (it relies on integer products wrapping modulo 2**64 on the device), for PyTorch and,
when installed, JAX. Prints one line per check and exits 1 if any differs.

    PYTHONPATH=. python scripts/probe_check_fingerprint.py
"""

from __future__ import annotations

import importlib.util
import sys

from kb.probe import fingerprint


def main() -> int:
    bad = 0
    import torch

    from kb.probe import _torch_device

    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool):
        for n in (7, fingerprint.WIDTH, 3 * fingerprint.WIDTH + 5, 1 << 20):
            t = (torch.randn(n, generator=g) * 100).to(dtype)
            want = fingerprint.reference(_torch_device.words(t).numpy())
            got = int(_torch_device.fingerprint_of(t.to(device)))
            ok = got == want
            bad += not ok
            print(f"torch {device} {str(dtype):15} n={n:8}: {'same' if ok else 'DIFFERENT'} {fingerprint.hexdigest(got)}")
    if importlib.util.find_spec("jax") is not None:
        import jax
        import numpy as np

        from kb.probe import _jax

        for dtype in ("float32", "bfloat16", "int32"):
            for n in (7, 3 * fingerprint.WIDTH + 5):
                x = (np.random.default_rng(n).standard_normal(n) * 100).astype("float32")
                arr = jax.numpy.asarray(x).astype(dtype)
                want = _jax.reference_digest(np.asarray(arr))
                got = _jax.digest(jax.jit(_jax.device_fingerprint)(arr))
                ok = got == want
                bad += not ok
                print(f"jax {jax.default_backend()} {dtype:9} n={n:8}: {'same' if ok else 'DIFFERENT'} {got}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
