"""Two readings from the forty-fourth corpus. google-research/meliad builds its model through gin: the `.gin` files
import the modules (`from transformer import attention`) and bind the classes (`@decoder_stack.DecoderStack`) that
no Python file names (kb/scan/ginconfigs.py; 31 risky entries read as code nothing runs). ayaka14732/llama-2-jax's
`seq @ params.gate_proj` inside `@partial(jax.jit, ...)` multiplies traced arrays whatever the names hold
(kb/scan/resolvers.py, jax_matmul_operator; 6 risky entries missed)."""

from __future__ import annotations

from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan
from scan_files import scan_files

_LAUNCHER = """\
    import sys
    import gin
    import jax
    import jax.numpy as jnp
    from transformer import language_model
    def main():
        gin.parse_config_files_and_bindings(sys.argv[1:], [])
        model = language_model.build()
        return jax.grad(lambda p: jnp.sum(model(p)))
    if __name__ == "__main__":
        main()
    """
_ATTENTION = """\
    import jax.numpy as jnp
    def attend(q, k):
        return jnp.einsum("...qd,...kd->...qk", q, k)
    class Memory:
        def lookup(self, q, k):
            return jnp.einsum("...qd,...kd->...qk", q, k)
    """
_LAYER = """\
    from transformer import attention
    class Layer:
        def __init__(self, memory_factory):
            self.memory = memory_factory()
        def __call__(self, q, k):
            return attention.attend(q, k) + self.memory.lookup(q, k)
    """


def _einsums(tmp_path: Path, files: dict[str, str]) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    found = scan_files(tmp_path, files, "jax=0.8")
    notes = scan([str(tmp_path)], given=pins.parse_versions("jax=0.8")).notes
    pick = lambda fs: {(Path(f.path).name, f.line) for f in fs if f.record == "jax.xla-gemm-conv-attention"}  # noqa: E731
    return pick(found), pick(notes)


def test_modules_and_classes_a_gin_file_names_run(tmp_path: Path) -> None:
    """The gin file imports `layer` (which imports `attention`) and binds `Layer` and `Memory`, which no Python file
    builds: the einsums are findings, not notes."""
    files = {"transformer/__init__.py": "", "transformer/launch.py": _LAUNCHER,
             "transformer/language_model.py": "def build():\n    return None\n",
             "transformer/attention.py": _ATTENTION, "transformer/layer.py": _LAYER,
             "transformer/configs/base.gin": (
                 "from transformer import attention\n"
                 "from transformer import layer\n"
                 "language_model.build.layer_factory = @layer.Layer\n"
                 "layer.Layer:\n"
                 "  memory_factory = @attention.Memory\n")}
    live, notes = _einsums(tmp_path, files)
    assert live == {("attention.py", 3), ("attention.py", 6)} and not notes, (live, notes)


def test_without_the_gin_file_the_modules_stay_unrun(tmp_path: Path) -> None:
    """The same code base without its gin file: nothing imports `layer` or `attention`, so both einsums are notes."""
    files = {"transformer/__init__.py": "", "transformer/launch.py": _LAUNCHER,
             "transformer/language_model.py": "def build():\n    return None\n",
             "transformer/attention.py": _ATTENTION, "transformer/layer.py": _LAYER}
    live, notes = _einsums(tmp_path, files)
    assert not live and notes == {("attention.py", 3), ("attention.py", 6)}, (live, notes)


def test_a_matrix_product_inside_a_jitted_function(tmp_path: Path) -> None:
    """`@` in a function decorated by `partial(jax.jit, ...)` or `jax.jit` is a JAX matmul though neither operand shows
    its type; the same `@` in an undecorated function of a module that also imports NumPy is not read as one, nor one
    in a function compiled for the host (`backend="cpu"`: google-research/scenic's few-shot solve, thirty-sixth)."""
    found = scan_files(tmp_path, {"block.py": """\
        from functools import partial
        import jax
        import numpy as np
        from helpers import norm
        @partial(jax.jit, static_argnames=("config",))
        def forward(params, seq, *, config):
            seq = norm(seq)
            return seq @ params.gate_proj
        @jax.jit
        def head(params, outputs):
            return outputs @ params.lm_head
        def plain(a, b):
            return a @ b
        @partial(jax.jit, backend="cpu")
        def solve(x, y):
            return x.T @ y
        """, "helpers.py": "def norm(x):\n    return x\n"}, "jax=0.8")
    assert sorted(f.line for f in found if f.record == "jax.xla-gemm-conv-attention") == [8, 11], found
