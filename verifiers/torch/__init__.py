"""PyTorch verifiers (sizes from shared/reference/h100-probe.md and pytorch-jax-libs.md §7)."""
