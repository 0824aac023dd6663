"""The answers issue 48 (the 2026 stacks, third reading) changed, on the live data, and the H100
probe file the Inductor and split-K claims cite (its numbers are what the records say)."""

from __future__ import annotations

import json
from pathlib import Path

import kb
from kb.query import solution

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "data/probe/h100-80gb-hbm3-x1-220bb9e5/2026-11-27T1739Z/stacks-switches.json"


def test_compiled_cumsum_is_fixed_by_the_switch_from_2_14() -> None:
    compiled = {"compiled": "inductor", "input.dtype": "float"}
    assert "torch.inductor-scan" in kb.status("torch.cumsum", "2.13", call=compiled).silent
    after = kb.status("torch.cumsum", "2.14", call=compiled)
    assert not after.silent and after.recipe == ("PT_DET",)


def test_flex_attention_flash_backward_by_release() -> None:
    flex = "torch.nn.attention.flex_attention.flex_attention"
    assert "torch.flex-attention-flash-unmasked-backward" in kb.status(flex, "2.10").silent
    typed = [s for s in kb.status(flex, "2.12").sources if s.id == "torch.flex-attention-flash-backward"]
    assert typed[0].raises == "NotImplementedError"
    assert kb.status(flex, "2.13").recipe == ("PT_DET",)


def test_inductor_variable_is_not_offered_as_the_fix_and_says_why() -> None:
    (source,) = [s for s in kb.status("torch.compile", "2.11").sources if s.id == "torch.inductor-autotuning"]
    assert source.solutions == ("PT_DET",)
    assert "first compiled frame" in solution("PT_INDUCTOR_DET")["how"]


def test_probe_file_backs_the_per_frame_and_split_k_claims() -> None:
    data = json.loads(PROBE.read_text(encoding="utf-8"))
    assert data["environment"]["frameworks"]["pytorch"] == "2.11.0"
    runs = {(r["mode"], r["process"]): r for r in data["inductor_frames"]}
    env = [runs["TORCHINDUCTOR_DETERMINISTIC=1", p] for p in (1, 2)]
    switch = [runs["use_deterministic_algorithms(True)", p] for p in (1, 2)]
    for run in env:  # frame 1 honoured, frame 2 reset and benchmarked
        assert run["flags"] == {"at_start": True, "after_frame_1": False, "after_frame_2": False}
        assert not [b for b in run["benchmarks"] if b["frame"] == "1"]
        assert sorted(b["candidates"] for b in run["benchmarks"] if b["frame"] == "2") == [5, 5, 6]
    assert env[0]["outputs"]["2"]["hash"] != env[1]["outputs"]["2"]["hash"]
    assert all(not run["benchmarks"] for run in switch)
    assert all(switch[0]["outputs"][k]["hash"] == switch[1]["outputs"][k]["hash"] for k in ("1", "2"))
    settings = {(s["dtype"], s["setting"]): s for s in data["splitk"]["settings"]}
    for dtype in ("bfloat16", "float16"):
        assert settings[dtype, "default"]["distinct_row0_across_batches"] == 2
        fixed = settings[dtype, "(False, False), cublaslt backend"]
        assert fixed["distinct_row0_across_batches"] == 1
        assert not any("splitK" in k for k in fixed["kernels_b1"] + fixed["kernels_b256"])
        assert "requires the cuBLASLt backend" in settings[dtype, "(False, False), cublas backend"]["error"]
    assert "(False, False)" in solution("PT_NOSPLITK")["how"]


def test_mamba_and_causal_conv1d_switches() -> None:
    assert "mamba-ssm.ssd-backward" in kb.status("mamba_ssm.Mamba2", "2.2.6").silent
    assert set(kb.status("mamba_ssm.Mamba2", "2.3.0").solutions) == {"PT_DET", "MAMBA_DET"}
    assert "mamba-ssm.mamba3-backward" in kb.status("mamba_ssm.Mamba3", "2.3.2.post1").silent
    assert "causal-conv1d.backward" in kb.status("causal_conv1d.causal_conv1d_fn", "1.5.3.post1").silent
    assert set(kb.status("causal_conv1d.causal_conv1d_fn", "1.6.0").solutions) == {"PT_DET", "CCONV_DET"}


def test_deepspeed_fpdt_and_cub_topk() -> None:
    fpdt = "deepspeed.sequence.fpdt_layer.FPDT_Attention"
    assert kb.status(fpdt, "0.16.0").deterministic is None  # before FPDT: no range
    assert "deepspeed.fpdt-attention-backward" in kb.status(fpdt, "0.16.1").silent
    topk = kb.status("cub.DeviceTopK.MaxKeys", "3.2")
    assert topk.deterministic is False and topk.recipe is None
    assert kb.status("cub.DeviceTopK.MaxKeys", "3.1").deterministic is None


def test_megatron_batch_invariance_conditions_split_at_0_19() -> None:
    (source,) = kb.status("megatron.core.transformer.TransformerConfig", "0.19.0").sources
    assert "flash_attention_version 3" in source.note
    assert "enable_batch_invariant_mode()" in solution("MCORE_BI")["how"]
