"""torch.compile with mode="max-autotune": a fresh compilation per call.

Autotuning picks kernels by timing them once per compilation, so calling one compiled model
N times would compare one choice with itself. Each call here resets Dynamo and runs inside
torch._inductor.utils.fresh_cache() (a new Inductor/Triton cache directory and cleared
in-memory autotuning results), then compiles and runs the model once: N calls are N
independent compilations, as N training processes would be. The model is one GEMM, whose
candidates (aten/cuBLAS against Triton templates) add in different orders, and a LayerNorm,
whose reduction configuration is tuned; one GEMM keeps a compilation short enough for N of
them per mode.
"""

from __future__ import annotations

from verifiers import verifier
from verifiers.torch.common import mixed, setup


@verifier("torch.compile_max_autotune", framework="pytorch", solutions=("PT_DET", "PT_INDUCTOR_DET"))
def compile_max_autotune(ctx):
    """Linear (4096 -> 4096, float32, batch 2048, a long K for split-K candidates) and LayerNorm,
    compiled with mode='max-autotune-no-cudagraphs' afresh on every call."""
    torch, device, gen = setup(ctx)
    import torch._dynamo  # type: ignore[no-redef]  # noqa: F811  (loads the submodule on the module setup() returned)
    from torch._inductor.utils import fresh_cache

    width, batch = ctx.size(4096, 32), ctx.size(2048, 16)
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.LayerNorm(width)).to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen).to(device) * 0.02)
    x = mixed(torch, gen, (batch, width), device) * 1e-4

    def run():
        torch._dynamo.reset()
        with fresh_cache():
            compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
            with torch.no_grad():
                return compiled(x)

    return run
