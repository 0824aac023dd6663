"""Verifiers of torchvision's own ops (torchvision.ops): CUDA kernels of the vision library."""
