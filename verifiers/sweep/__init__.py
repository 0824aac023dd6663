"""Operator sweeps: workers that run a framework's operator catalog (kb/verify/sweep.py drives them).

`torch_worker` (PyTorch op_db and module_db, eager or under torch.compile) and `jax_worker`
(jax.numpy, jax.lax, jax.nn, jax.ops). The driver imports no framework; each worker is a warm
interpreter measuring one unit at a time. docs/sweep.md says how inputs are built and why.
"""

import os
import sys

# torch.testing._internal.common_utils imports `expecttest` (a test-only helper that GPU images
# often lack) for its TestCase base class; the sweep only reads the catalog and never runs those
# tests, so a stand-in module is put on the path when the real one is missing.
_SHIM = os.path.join(os.path.dirname(__file__), "_shim")


def ensure_expecttest() -> None:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        sys.path.append(_SHIM)
