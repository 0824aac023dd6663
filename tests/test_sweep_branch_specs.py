"""The PyTorch branch units run on the GPU machine only; here each is built and called on the CPU
so that a typo or a renamed argument in a unit is found before device time is spent on it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the CPU build of PyTorch is not installed")

from verifiers.sweep.torch_branches import PLANTED_UNITS, UNITS  # noqa: E402


@pytest.mark.parametrize("unit", sorted({**UNITS, **PLANTED_UNITS}))
def test_every_branch_unit_builds_distinct_cases_on_the_cpu(unit: str) -> None:
    specs = {**UNITS, **PLANTED_UNITS}[unit](torch, "cpu", torch.float32, 0.05)
    assert specs, f"{unit} built no case"
    branches = [s.branch for s in specs]
    repeated = sorted({b for b in branches if branches.count(b) > 1})
    # the runner finds a case's float64 twin by its branch id: two cases under one id measure one
    assert not repeated, f"{unit}: branch ids used twice: {repeated}"
    for s in specs:
        for leaf in s.leaves:
            assert leaf.is_leaf and leaf.requires_grad, f"{s.branch}: a leaf the backward cannot differentiate"


def test_the_channels_last_group_norm_case_reads_its_channels_last_input() -> None:
    specs = UNITS["norms"](torch, "cpu", torch.float32, 0.05)
    case = next(s for s in specs if s.branch == "torch.nn.functional.group_norm|4d|channels_last")
    assert case.leaves[0].is_contiguous(memory_format=torch.channels_last)
    assert not case.leaves[0].is_contiguous()
