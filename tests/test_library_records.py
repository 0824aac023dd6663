"""Library records (cuDNN, cuBLAS, NCCL, Horovod): answers at the newest release and at each
boundary; `caused_by` links seen from framework ops; KB013; the batch_invariant combination."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kb
from kb import query
from kb.catalog import load
from kb.compile import build_index
from kb.lint import run

ROOT = Path(__file__).resolve().parents[1]
MINI = Path(__file__).parent / "fixtures" / "mini"
SAMPLE = MINI / "data" / "sources" / "tensorflow" / "tf.sample.yaml"


def newest(name: str) -> str:
    return query.index()["registries"][name]["latest"]


# (record id, version, deterministic, recipe, batch_invariant); "newest" = the registry's latest.
CASES = [
    ("cudnn.nondeterministic-algorithms", "8.0.1", False, ("CUDNN_DET_ALGO",), None),
    ("cudnn.nondeterministic-algorithms", "7.6.5", None, None, None),  # below ==8.0.*: unknown
    ("cudnn.nondeterministic-algorithms", "8.5", None, None, None),  # above: unknown (dispute, not followed)
    ("cudnn.nondeterministic-algorithms", "newest", None, None, None),
    ("cudnn.autotuning", "7.6.5", False, ("CUDNN_FIXED_ALGO",), None),
    ("cudnn.autotuning", "7.5", None, None, None),
    ("cudnn.autotuning", "newest", False, ("CUDNN_FIXED_ALGO",), None),
    ("cublas.workspace-multistream", "10.2", False, ("CUBLAS_WS",), None),
    ("cublas.workspace-multistream", "10.0", None, None, None),
    ("cublas.workspace-multistream", "newest", False, ("CUBLAS_WS",), None),
    ("cublas.split-k", "12.0", True, (), False),
    ("cublas.split-k", "11.11.3", None, None, None),
    ("cublas.split-k", "newest", True, (), False),
    # repeats run to run with the configuration fixed (4x H200 run); NCCL_PIN keeps the bits across
    # configurations, so nothing is needed for run-to-run determinism (varies: configuration)
    ("nccl.allreduce-order", "2.5.6", True, (), None),  # env.rst: NCCL_ALGO 'since 2.5'
    ("nccl.allreduce-order", "2.4.8", None, None, None),
    ("nccl.allreduce-order", "newest", True, (), None),
    ("nccl.nvls-reduction", "2.17.1", False, ("NCCL_NO_NVLS",), None),  # env.rst: NVLS 'since 2.17'
    ("nccl.nvls-reduction", "2.16.5", None, None, None),
    ("nccl.nvls-reduction", "newest", False, ("NCCL_NO_NVLS",), None),
    # groups alone still fuse with other tensors (horovod#2616): HOROVOD_DISABLE_GROUP_FUSION fixes it
    ("horovod.grouped-allreduce", "0.21.0", False, ("HVD_NOGRPFUSE",), None),
    ("horovod.grouped-allreduce", "0.20.3", None, None, None),
    ("horovod.grouped-allreduce", "newest", False, ("HVD_NOGRPFUSE",), None),
    ("vllm.batch-variance", "0.11.1", False, ("VLLM_BI",), False),  # first wheel reading VLLM_BATCH_INVARIANT
    ("vllm.batch-variance", "0.11.0", None, None, None),
    ("vllm.batch-variance", "newest", False, ("VLLM_BI",), False),
    ("cudnn.attention-backward", "9.19", False, ("CUDNN_FE_DET",), None),
    ("cudnn.attention-backward", "8.9", None, None, None),
    # deterministic=True splits dQ by SM count and batch x heads: reproducible, not batch invariant
    ("flash-attn.backward-dq", "2.4.1", False, ("FA_DET",), False),
    ("flash-attn.backward-dq", "1.0.5", False, ("FA1_DET",), None),  # FA1 1.0.x deterministic= (PR 147)
    ("flash-attn.backward-dq", "0.2.8", None, None, None),  # num_splits only on a private function
    ("flash-attn.cute-backward", "2.8.3", False, None, None),  # flash_attn/cute package, no switch
    ("flash-attn.cute-backward", "2.8.2", None, None, None),  # no flash_attn/cute/__init__.py yet
    ("cccl.device-reduce", "3.1", True, (), None),
    ("cccl.device-reduce", "3.0", None, None, None),
    ("cccl.device-scan", "3.4", False, None, None),  # float scans: no level until the 3.5 line
    ("cccl.device-scan", "2.2", False, None, None),
    ("transformer-engine.jax-attention", "1.10", False, ("NVTE_DET",), None),
    ("transformer-engine.jax-attention", "1.9", True, (), None),  # 1.9 hard-codes the deterministic backward
    ("transformer-engine.mhc-atomics", "2.15", False, None, None),  # raises under the variable
    ("transformer-engine.mhc-atomics", "2.14", None, None, None),
    ("transformer-engine.grouped-dbias-atomics", "2.16", False, None, None),
    ("transformer-engine.grouped-dbias-atomics", "2.15", False, None, None),  # silent: the kernel has no check
    ("transformer-engine.grouped-dbias-atomics", "2.14.1", None, None, None),
    ("megatron-core.batch-variance", "0.16.0", False, ("MCORE_BI",), False),
    ("megatron-core.batch-variance", "0.15.0", None, None, None),
    ("megatron-core.training", "0.19.0", False, ("MCORE_DET",), None),
    ("vllm.v1-scheduling", "0.6.5", False, ("VLLM_NOMP",), None),
    ("vllm.v1-scheduling", "0.6.4", None, None, None),  # variable there, but off by default
    ("deepspeed.transformer-stochastic-mode", "0.3.1", False, ("DS_NOSTOCH",), None),
    ("deepspeed.transformer-stochastic-mode", "newest", False, ("DS_NOSTOCH",), None),
    ("flash-attn.backward-dq", "2.4.0.post1", False, None, None),  # FA2 before 2.4.1: no switch
    ("flash-attn.backward-dq", "1.0.9", False, ("FA1_DET",), None),  # was unknown before FA1 was read (issue 38)
    ("transformer-engine.attention-backward", "newest", False, ("NVTE_DET",), None),
    ("megatron-core.training", "0.8.0", False, ("MCORE_DET",), None),
    ("megatron-core.training", "0.7.0", None, None, None),
    ("sglang.batch-variance", "0.5.3", False, ("SGL_DET",), False),
    ("sglang.batch-variance", "0.5.2", None, None, None),
]


@pytest.mark.parametrize("record, version, deterministic, recipe, invariant", CASES)
def test_library_record_answers(record, version, deterministic, recipe, invariant) -> None:
    framework = query.index()["sources"][record]["framework"]
    if version == "newest":
        version = newest(framework)
    status = kb.status(record, version)
    assert status.framework == framework
    assert status.deterministic is deterministic
    assert status.recipe == recipe
    assert status.batch_invariant is invariant
    assert status.references, "every library record cites a source"


def test_library_versions_come_from_their_own_registries() -> None:
    # cuDNN 9.1 is a cuDNN release, not a TensorFlow one: no "unknown release" note
    assert kb.status("cudnn.autotuning", "9.1.0").notes == ()
    assert "not a known cudnn release" in kb.status("cudnn.autotuning", "9.99").notes[0]


@pytest.mark.parametrize("op, framework", [
    ("cudnn.cudnnConvolutionBackwardFilter", "cudnn"),
    ("cublas.cublasGemmEx", "cublas"),
    ("nccl.ncclAllReduce", "nccl"),
    ("hvd.grouped_allreduce", "horovod"),
    ("vllm.LLM", "vllm"),
    ("sglang.Engine", "sglang"),
    ("flash_attn.flash_attn_func", "flash-attn"),
    ("flash_attn_interface.flash_attn_func", "flash-attn"),
    ("transformer_engine.pytorch.DotProductAttention", "transformer-engine"),
    ("megatron.training.pretrain", "megatron-core"),
    ("cub.DeviceScan.InclusiveSum", "cccl"),
    ("flash_attn.cute.flash_attn_func", "flash-attn"),
    ("deepspeed.DeepSpeedTransformerConfig", "deepspeed"),
    ("torchvision.ops.roi_align", "torchvision"),
])
def test_library_op_names_infer_their_library(op: str, framework: str) -> None:
    assert kb.status(op, newest(framework)).framework == framework


def test_nccl_allreduce_combines_both_nccl_records() -> None:
    status = kb.status("nccl.ncclAllReduce", "2.21.5")
    assert {s.id for s in status.sources} == {"nccl.allreduce-order", "nccl.nvls-reduction"}
    assert status.deterministic is False
    # Run to run only NVLS differs (NCCL_NO_NVLS, preferred to the pin, which implies it); the order
    # record repeats with the configuration fixed and says what changes it instead (varies_with).
    assert status.recipe == ("NCCL_NO_NVLS",)
    assert set(status.solutions) == {"NCCL_PIN", "NCCL_NO_NVLS"}
    assert "algorithm" in status.varies_with


def test_cublas_split_k_is_deterministic_but_not_batch_invariant() -> None:
    status = kb.status("cublas.cublasLtMatmul", newest("cublas"))
    # workspace-multistream (not deterministic) and split-k (not batch invariant) both apply
    assert status.deterministic is False
    assert status.batch_invariant is False
    split = next(s for s in status.sources if s.id == "cublas.split-k")
    assert split.deterministic is True and split.batch_invariant is False


def test_tensorflow_conv_shows_its_cudnn_cause() -> None:
    status = kb.status("tf.nn.conv2d", "2.10")
    causes = {c for s in status.sources for c in s.caused_by}
    assert {"cudnn.nondeterministic-algorithms", "cudnn.autotuning"} <= causes
    filt = next(s for s in status.sources if s.id == "tf.cudnn-conv-backprop-filter")
    assert filt.caused_by == ("cudnn.nondeterministic-algorithms", "cudnn.autotuning")
    # the library records' references reach the framework answer (cudnn.autotuning cites tensorflow_status.md)
    titles = {r.title for r in status.references}
    assert "cuDNN Developer Guide, non-deterministic algorithms of cuDNN 8.0.1 (as quoted in a Q&A thread)" in titles
    assert status.to_dict()["sources"][0]["caused_by"]
    # a framework answer is not changed by the library records (their versions are another line)
    assert status.recipe == ("EOD",)


def test_every_caused_by_in_the_data_resolves_to_a_library_record() -> None:
    sources = query.index()["sources"]
    linked = [(rid, c) for rid, s in sources.items() for c in s["caused_by"]]
    assert linked, "the TensorFlow cuDNN records link their causes"
    for rid, cause in linked:
        assert sources[cause]["framework"] in ("cudnn", "cublas", "nccl", "horovod"), (rid, cause)


# --- KB013 beyond the malformed fixtures -------------------------------------------


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    return root


def _record(root: Path, framework: str, rid: str, extra: str = "", versions: str = ">=2.1", body: str = "") -> None:
    text = SAMPLE.read_text(encoding="utf-8").replace("id: tf.sample", f"id: {rid}")
    text = text.replace("framework: tensorflow", f"framework: {framework}")
    if body:
        text = text.replace("status:\n  - versions: <2.1\n  - versions: '>=2.1'\n    solutions: [TDO]\n", body)
    if extra:
        text = text.replace("references:\n", extra + "references:\n", 1)
    folder = root / "data" / "sources" / framework
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{rid}.yaml").write_text(text, encoding="utf-8")


def test_kb013_rejects_a_framework_record_as_cause(tmp_path: Path) -> None:
    root = _project(tmp_path)
    _record(root, "tensorflow", "tf.other")
    _record(root, "tensorflow", "tf.sample", extra="caused_by:\n  - tf.other\n")
    _, findings = run(root)
    assert [(f.code, f.line) for f in findings] == [("KB013", 16)]
    assert "not a library record" in findings[0].message


def test_kb013_accepts_a_library_record(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "data" / "versions" / "cudnn.yaml").write_text(
        "# yaml-language-server: $schema=../../schema/versions.schema.json\n"
        "name: cudnn\nframework: cudnn\nsource: test fixture\nreleases:\n  - version: 8.0.1\n",
        encoding="utf-8",
    )
    body = "status:\n  - versions: '>=8.0'\n    deterministic: true\n"
    _record(root, "cudnn", "cudnn.sample", body=body)
    text = (root / "data/sources/cudnn/cudnn.sample.yaml").read_text().replace("tf.nn.bias_add", "cudnn.cudnnSample")
    (root / "data/sources/cudnn/cudnn.sample.yaml").write_text(text)
    _record(root, "tensorflow", "tf.sample", extra="caused_by:\n  - cudnn.sample\n")
    _, findings = run(root)
    assert findings == []


# --- batch_invariant combination ----------------------------------------------------


def _invariance_index(tmp_path: Path) -> dict:
    root = _project(tmp_path)
    for rid, claim in (("tf.bi-true", "true"), ("tf.bi-false", "false"), ("tf.bi-none", None)):
        body = "status:\n  - versions: '>=2.1'\n    deterministic: true\n"
        if claim:
            body += f"    batch_invariant: {claim}\n"
        _record(root, "tensorflow", rid, body=body)
        path = root / "data/sources/tensorflow" / f"{rid}.yaml"
        ops = {"tf.bi-true": ["tf.a", "tf.ab", "tf.ac"], "tf.bi-false": ["tf.ab", "tf.b"], "tf.bi-none": ["tf.ac"]}[rid]
        listed = "".join(f"  - {name}\n" for name in ops)
        path.write_text(path.read_text().replace("ops:\n  - tf.nn.bias_add\n", f"ops:\n{listed}"))
    catalog, findings = run(root)
    assert findings == []
    return build_index(load(root))


@pytest.mark.parametrize("op, version, expected, deterministic", [
    ("tf.a", "2.1", True, True),      # every applying source claims invariance
    ("tf.ab", "2.1", False, True),    # one batch-variant source: False, though deterministic run to run
    ("tf.ac", "2.1", None, True),     # one source makes no claim: unknown
    ("tf.a", "2.0", None, None),      # no range for the version: unknown
    ("tf.nn.bias_add", "2.2", None, False),  # tf.sample makes no claim
])
def test_batch_invariant_combination(tmp_path: Path, op: str, version: str, expected, deterministic) -> None:
    query.reset(_invariance_index(tmp_path))
    try:
        status = kb.status(op, version)
        assert status.batch_invariant is expected
        assert status.deterministic is deterministic
        assert status.to_dict()["batch_invariant"] is expected
    finally:
        query.reset()


def test_no_known_source_is_batch_invariant() -> None:
    assert kb.status("tf.add", "2.1").batch_invariant is True


@pytest.mark.parametrize("version, fixed, raises", [("0.15.2", False, False), ("0.16.0", True, True), ("0.26.0", True, True)])
def test_torchvision_roi_ops_follow_the_wheels(version: str, fixed: bool, raises: bool) -> None:
    """Before 0.16 neither roi op knew the switch (silent); from 0.16 roi_align falls back to
    pure PyTorch (PT_DET fixes it) and roi_pool raises (read in the PyPI wheels)."""
    align = kb.status("torchvision.ops.roi_align", version)
    assert align.deterministic is False
    assert (align.recipe == ("PT_DET",)) is fixed
    assert bool(align.silent) is not fixed
    pool = kb.status("torchvision.ops.RoIPool", version)
    assert pool.recipe is None
    assert bool(pool.silent) is not raises
    assert (pool.sources[0].raises == "RuntimeError") is raises
