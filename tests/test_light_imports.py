"""The query path must not import heavy modules (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pydantic", "yaml", "jinja2", "tensorflow", "torch", "jax", "rich", "packaging", "json", "re", "dataclasses", "typing")

PROBE = """
import sys
import kb
kb.status('tf.nn.bias_add', '1.15')
kb.status('tf.nn.bias_add', '2.21.0')
kb.status('tf.bias-add-backprop', '2.1', framework='tensorflow', device='any')
kb.status('tf.add', '2.1')  # no record: reads the API inventory
loaded = sorted(m for m in sys.modules if m.split('.')[0] in %r)
sys.stdout.write(repr(loaded))
"""


def test_query_path_imports_no_heavy_module() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE % (HEAVY,)], capture_output=True, text=True, check=True)
    assert out.stdout == "[]", f"heavy modules loaded by the query path: {out.stdout}"


def test_prerelease_version_loads_packaging_only_then() -> None:
    code = "import sys, kb; kb.status('tf.nn.bias_add', '2.21.0rc1'); print('packaging' in sys.modules, 'pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]
