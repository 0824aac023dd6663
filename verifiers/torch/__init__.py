"""PyTorch verifiers, one module per area of records (attention, indexing, interpolation, layers, ...)."""
