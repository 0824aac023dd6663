"""The probe's PyTorch call facts, for tools that record calls outside `watch()` (`kb check`'s
inventory of a whole program).

Why a public module: `kb check` records every framework call a training program makes in its
first steps, in the same terms as the probe's per-module recording (the knowledge base's call
conditions: parameter values, exact dtypes, `input.ndim`, `input.layout`, the attention
backend PyTorch picks), so the two tools ask the knowledge base the same questions. Importing
this module imports PyTorch.
"""

from __future__ import annotations

from kb.probe._torch import op_name
from kb.probe._torch_calls import dtype_name, facts, show, tensors

__all__ = ["dtype_name", "facts", "op_name", "show", "tensors"]
