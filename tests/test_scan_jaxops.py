"""JAX ops the scan missed on the twelfth corpus (issue 45): `@` on arrays whose JAX type shows only in an
annotation or a Flax `self.param`, and `jax.jit` / `jax.pmap` named inside a tuple that is unpacked or indexed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"


def _scan(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return scan([str(tmp_path)], given=pins.parse_versions(VERSIONS))


def _lines(report, op: str) -> list[int]:
    return sorted({f.line for f in report.findings if f.op == op})


def test_matmul_on_arrays_typed_by_annotation_or_made_by_flax_param(tmp_path):
    report = _scan(tmp_path, {"m.py": """\
        import dataclasses
        import jax
        import jax.numpy as jnp
        import flax.linen as nn

        @dataclasses.dataclass
        class Pair:
            real: jax.Array
            imag: jnp.ndarray

            def __matmul__(self, x):
                return Pair(self.real @ x, self.imag @ x)

        def apply(w: jax.Array, x):
            return x @ w

        class Embed(nn.Module):
            def setup(self):
                self.table = self.param("table", nn.initializers.normal(), (10, 4))

            def decode(self, x):
                x, table = nn.dtypes.promote_dtype(x, self.table, dtype=None)
                return x @ table.T

            def direct(self, x):
                w = self.param("w", nn.initializers.normal(), (4, 4))
                return x @ w
        """})
    assert _lines(report, "jax.numpy.matmul") == [12, 15, 23, 27]


def test_numpy_and_torch_annotations_are_not_jax_arrays(tmp_path):
    report = _scan(tmp_path, {"m.py": """\
        import dataclasses
        import numpy as np
        import torch
        import jax

        @dataclasses.dataclass
        class Host:
            a: np.ndarray
            t: torch.Tensor

            def f(self, x):
                return self.a @ x, self.t @ x

        def g(w: np.ndarray, v: torch.Tensor, x):
            return x @ w, x @ v
        """})
    assert _lines(report, "jax.numpy.matmul") == []


def test_jit_or_pmap_named_in_an_unpacked_or_indexed_tuple_is_handed_on(tmp_path):
    report = _scan(tmp_path, {"m.py": """\
        import jax

        def build(n, f, i):
            func, arg = (
                (jax.jit, 'static_argnums') if n == 1 else
                (jax.pmap, 'static_broadcasted_argnums'))
            g = (jax.jit, jax.pmap)[i]
            return func(f), g(f)
        """})
    assert _lines(report, "jax.jit") == [5, 7]
    assert _lines(report, "jax.pmap") == [6, 7]


def test_gather_indexing_of_a_jax_array_by_an_integer_array_under_differentiation(tmp_path):
    report = _scan(tmp_path, {"m.py": """\
        import jax
        import jax.numpy as jnp

        def loss(table: jax.Array, ids, n: int):
            idx = jnp.array([0, 0, 1])
            a = table[ids]            # a parameter: may be an integer array
            b = table[idx, :]         # visibly a JAX array
            c = table[:, 0]           # static
            d = table[1:3]            # static
            e = table[..., None]      # static
            f = table[n]              # an int
            for i in range(3):
                g = table[i]          # a loop counter
            return (a + b + c + d + e + f + g).sum()

        grads = jax.grad(loss)(jnp.ones((3, 3)), jnp.array([0, 0]), 1)
        """})
    assert sorted({(f.line, f.record) for f in report.findings if f.op == "jax.numpy.ndarray.__getitem__"}) == [
        (6, "jax.getitem-backward"), (7, "jax.getitem-backward")]


def test_gather_indexing_where_nothing_differentiates_is_not_reported(tmp_path):
    (tmp_path / "app").mkdir()
    report = _scan(tmp_path, {"app/run.py": """\
        import jax.numpy as jnp

        def lookup(table, ids):
            t = jnp.asarray(table)
            return t[ids]

        if __name__ == "__main__":
            print(lookup([1.0, 2.0], jnp.array([0, 0])))
        """})
    assert [f.line for f in report.findings if f.op == "jax.numpy.ndarray.__getitem__"] == []


def test_gather_indexing_reads_the_parameter_it_rebinds_and_skips_unique_indices(tmp_path):
    report = _scan(tmp_path, {"m.py": """\
        import jax
        import jax.numpy as jnp
        import flax.linen as nn

        class Embed(nn.Module):
            def setup(self):
                self.table = self.param("table", nn.initializers.normal(), (10, 4))

            def encode(self, x):
                x = self.table[(x,)]      # the parameter x: token ids, which repeat
                return x

        def shuffle(value: jax.Array):
            order = jax.random.permutation(jax.random.PRNGKey(0), jnp.arange(0, jnp.size(value)))
            return value[order]           # a permutation: no index repeats

        grads = jax.grad(lambda v: shuffle(v).sum())(jnp.ones(3))
        model = Embed()
        """})
    assert sorted({f.line for f in report.findings if f.op == "jax.numpy.ndarray.__getitem__"}) == [10]


def test_operands_of_traced_parameters_flax_outputs_and_jaxtyping_locals_are_jax_arrays(tmp_path):
    """The fourteenth corpus's misses: `outputs @ params["embedding"]["embedding"].T` in a function `@jax.jit` and
    `@jax.value_and_grad` decorate (bart-base-jax: JAX calls it with tracers), `attention @ v` where `v` is an item
    of a flax.linen module's output (m3ae), and `embedding[x]` where `embedding: Array` is a jaxtyping-annotated
    local. A function with a static argument, or an undecorated one, keeps its parameters unknown."""
    report = _scan(tmp_path, {"m.py": """\
        import functools
        import jax
        import jax.numpy as jnp
        import flax.linen as nn
        from jaxtyping import Array, Float as F, UInt16 as U16

        @jax.jit
        @jax.value_and_grad
        def train_forward(params, outputs, labels):
            lm_head = params["embedding"]["embedding"].T
            logits = outputs @ lm_head
            return jnp.mean(logits - labels)

        @functools.partial(jax.jit, static_argnums=(0,))
        def static(params, outputs):
            return outputs @ params["w"]

        def plain(params, outputs):
            return outputs @ params["w"]

        class Attention(nn.Module):
            @nn.compact
            def __call__(self, inputs):
                qkv = nn.Dense(12)(inputs)
                q, k, v = qkv[0], qkv[1], qkv[2]
                attention = nn.softmax(jnp.einsum("ij,kj->ik", q, k), axis=-1)
                attention = nn.Dropout(0.1)(attention, deterministic=False)
                return attention @ v

        def fwd_embedding(params, x: U16[Array, "*dims"]) -> F[Array, "*dims d"]:
            embedding: Array = params["embedding"]
            return embedding[x]

        def loss(params, x):
            return jnp.sum(fwd_embedding(params, x))

        grads = jax.grad(loss)
        model = Attention()
        """})
    assert _lines(report, "jax.numpy.matmul") == [11, 28], report.findings
    assert _lines(report, "jax.numpy.ndarray.__getitem__") == [32], report.findings
