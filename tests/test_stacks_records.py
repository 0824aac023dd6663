"""Attention, compiler and serving-stack records: the answers users ask for (SDPA per backend,
torch.compile under the switch, jax.nn.dot_product_attention), and that every backend has a
verifier of its own that the harness can apply."""

from __future__ import annotations

import kb
from verifiers.discover import scan
from verifiers.solutions import TABLES

SDPA = "torch.nn.functional.scaled_dot_product_attention"


def test_sdpa_backward_is_fixed_by_the_switch_not_by_warn_only() -> None:
    status = kb.status(SDPA, "2.11")
    fused = {"torch.sdpa-flash-backward", "torch.sdpa-efficient-backward", "torch.sdpa-cudnn-backward"}
    assert {s.id for s in status.sources if not s.deterministic} == fused
    assert status.deterministic is False
    assert status.recipe == ("PT_DET",)
    # warn_only keeps the atomic kernels: PT_DETW must not be offered for any backend
    assert "PT_DETW" not in status.solutions
    cudnn = next(s for s in status.sources if s.id == "torch.sdpa-cudnn-backward")
    assert cudnn.raises and "CUDNN_ATTENTION" in cudnn.raises


def test_sdpa_before_the_checked_release_is_unknown() -> None:
    # The CUDA sources were read at main and measured on 2.11 only: earlier releases are not guessed.
    assert kb.status(SDPA, "2.10").deterministic is None


def test_torch_compile_switch_arrives_in_2_10() -> None:
    before, after = kb.status("torch.compile", "2.9"), kb.status("torch.compile", "2.10")
    assert before.deterministic is False and before.recipe is None  # max-autotune: no switch covers it
    assert after.recipe == ("PT_DET",)
    assert set(after.solutions) == {"PT_DET", "PT_INDUCTOR_DET"}


def test_jax_attention_cudnn_record_starts_with_the_api() -> None:
    ids = {s.id for s in kb.status("jax.nn.dot_product_attention", "0.4.31").sources}
    assert "jax.dot-product-attention-cudnn" in ids
    # before implementation= existed (0.4.30) the record names no range: unknown, not guessed
    older = kb.status("jax.nn.dot_product_attention", "0.4.30").sources
    assert next(s for s in older if s.id == "jax.dot-product-attention-cudnn").versions is None


def test_each_attention_backend_has_its_own_verifier_and_codes_the_harness_knows() -> None:
    found = scan()
    for name in ("torch.sdpa_flash_backward", "torch.sdpa_efficient_backward", "torch.sdpa_cudnn_backward",
                 "torch.sdpa_math", "torch.sdpa_flash_forward", "torch.sdpa_efficient_forward",
                 "torch.sdpa_cudnn_forward", "torch.compile_max_autotune",
                 "jax.dot_product_attention_cudnn", "jax.dot_product_attention_xla"):
        assert name in found, name
    # PT_SDPA_MATH is applied by the attention verifiers themselves, so they must declare it
    assert "PT_SDPA_MATH" in found["torch.sdpa_flash_backward"].handles
    env, call, practice = TABLES["pytorch"]["PT_INDUCTOR_DET"]
    assert env == {"TORCHINDUCTOR_DETERMINISTIC": "1"} and call is None and not practice
    assert TABLES["pytorch"]["PT_SDPA_MATH"][2] is True


def test_sdpa_call_with_a_backend_gets_that_backend_only() -> None:
    flash = kb.status(SDPA, "2.11", call={"backend": "flash"})
    assert flash.deterministic is False and flash.recipe == ("PT_DET",)
    assert [s.id for s in flash.sources] == ["torch.sdpa-flash-backward"]
    assert set(flash.excluded) == {"torch.sdpa-cudnn-backward", "torch.sdpa-efficient-backward", "torch.sdpa-math"}
    math = kb.status(SDPA, "2.11", call={"backend": "math"})
    assert math.deterministic is True
    # implementation='xla' excludes the cuDNN attention record; 'cudnn' keeps it
    xla = kb.status("jax.nn.dot_product_attention", "0.10.2", call={"implementation": "xla"})
    assert "jax.dot-product-attention-cudnn" not in {s.id for s in xla.sources}
    cudnn = kb.status("jax.nn.dot_product_attention", "0.10.2", call={"implementation": "cudnn"})
    assert "jax.dot-product-attention-cudnn" in {s.id for s in cudnn.sources}
