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
    # the compiled-kernel records of the 2.11 GPU sweep that the 2.10 code does not settle stay unknown there;
    # the split scans (torch.inductor-scan, -logcumsumexp) were read in the 2.10 code (basis static)
    unknown = {src.id for src in after.sources if src.deterministic is None}
    assert unknown and all(i.startswith("torch.inductor-") for i in unknown)
    read = {src.id for src in after.sources if src.basis == "static"}
    assert {"torch.inductor-scan", "torch.inductor-logcumsumexp"} <= read
    assert after.recipe is None
    # TORCHINDUCTOR_DETERMINISTIC=1 alone left max-autotune benchmarking on in the 2.11 H100 run; keeping the
    # scan eager is the split scan's own fix
    assert set(after.solutions) == {"PT_DET", "PT_EAGER_OP"}
    (source,) = [s for s in after.sources if s.id == "torch.inductor-autotuning"]
    assert any("Inductor" in claim for claim in source.disputed)


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


def test_cub_scan_answers_float_scans_and_leaves_integral_ones_out() -> None:
    scan = kb.status("cub.DeviceScan.InclusiveSum", "3.4")
    assert scan.deterministic is False and scan.recipe is None  # no level for float scans before 3.5
    assert kb.status("cub.DeviceScan.ExclusiveSum", "3.4", call={"input.dtype": "int"}).deterministic is True
    # v3.2.0 labelled the scan run_to_run while dispatching the same look-back kernel: kept as a dispute
    (source,) = [s for s in kb.status("cub.DeviceScan.InclusiveSum", "3.2").sources if s.id == "cccl.device-scan"]
    assert any("run_to_run" in claim for claim in source.disputed)
    # DeviceReduce: 3.1 accepts not_guaranteed but runs the two-pass kernel; the release notes are the dispute
    (reduce,) = kb.status("cub.DeviceReduce.Sum", "3.1").sources
    assert reduce.deterministic is True and any("3.1" in claim for claim in reduce.disputed)


def test_stack_switches_by_release() -> None:
    # FlashAttention-1 and -2 have different switches; FA2's is reproducible but not batch invariant
    assert kb.status("flash_attn.flash_attn_interface.flash_attn_unpadded_func", "1.0.9").recipe == ("FA1_DET",)
    fa2 = kb.status("flash_attn.flash_attn_varlen_func", "2.8.3")
    assert fa2.recipe == ("FA_DET",) and fa2.batch_invariant is False
    # TE's Triton mHC ops refuse under the variable instead of offering a switch
    (mhc,) = kb.status("transformer_engine.pytorch.triton.mhc.mhc_fused_scale", "2.18").sources
    assert mhc.raises == "AssertionError" and not mhc.deterministic
    assert kb.status("transformer_engine.jax.flax.DotProductAttention", "2.18").recipe == ("NVTE_DET",)
    # Megatron: batch invariance is its own record and does not leak into the run-to-run answer
    assert kb.status("megatron.core.transformer.TransformerConfig", "0.16.0").batch_invariant is False
    gpt = kb.status("megatron.core.models.gpt.GPTModel", "0.16.0")
    assert "megatron-core.batch-variance" not in {s.id for s in gpt.sources} and gpt.recipe == ("MCORE_DET",)
    # vLLM offline scheduling: VLLM_ENABLE_V1_MULTIPROCESSING=0 from 0.6.5, batch invariance also from 0.11.1
    ids = {s.id for s in kb.status("vllm.LLM.generate", "0.11.1").sources}
    assert {"vllm.batch-variance", "vllm.v1-scheduling"} <= ids
    (sched,) = [s for s in kb.status("vllm.LLM", "0.11.1").sources if s.id == "vllm.v1-scheduling"]
    assert set(sched.solutions) == {"VLLM_NOMP", "VLLM_BI"}
    # DeepSpeed's stochastic transformer kernel applies only with stochastic_mode=True
    ds = kb.status("deepspeed.DeepSpeedTransformerConfig", "0.19.5", call={"stochastic_mode": False})
    assert ds.deterministic is True and "deepspeed.transformer-stochastic-mode" in ds.excluded
