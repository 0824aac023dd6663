"""JAX verifiers; solution codes set XLA_FLAGS in the fresh child (verifiers/solutions.py)."""
