"""PyTorch's legacy `size_average=` / `reduce=` select the reduction (kb/reductions.py, read in the torch 2.11.0
wheel's torch/nn/_reduction.py): kb.status and kb scan answer such a call as the reduction it selects."""

from __future__ import annotations

import textwrap
from pathlib import Path

import kb
from kb.reductions import legacy_reduction
from kb.scan import pins
from kb.scan.run import scan

NAMES = ("weight", "size_average", "ignore_index", "reduce", "reduction")


def test_the_legacy_arguments_select_the_reduction_as_torch_does() -> None:
    assert legacy_reduction("pytorch", {"reduce": False}, NAMES)["reduction"] == "none"
    assert legacy_reduction("pytorch", {"reduce": False, "size_average": False}, NAMES)["reduction"] == "none"
    assert legacy_reduction("pytorch", {"size_average": False}, NAMES)["reduction"] == "sum"
    assert legacy_reduction("pytorch", {"size_average": True, "reduce": True, "reduction": "none"}, NAMES)["reduction"] == "mean"
    assert legacy_reduction("pytorch", {"reduction": "none"}, NAMES) == {"reduction": "none"}  # neither given
    assert legacy_reduction("pytorch", {"reduce": "x"}, NAMES) == {"reduce": "x"}  # not a bool: left as written
    assert legacy_reduction("tensorflow", {"reduce": False}, NAMES) == {"reduce": False}
    assert legacy_reduction("pytorch", {"reduce": False}, ("reduce",)) == {"reduce": False}  # no reduction parameter


def test_status_answers_reduce_false_as_no_reduction() -> None:
    """NLL loss on 4-D input differs run to run with a mean or a sum (torch.nll-loss); `reduce=False` reduces
    nothing, and `size_average=False` sums."""
    none = kb.status("torch.nn.CrossEntropyLoss", "2.11", call={"reduce": False, "input.ndim": 4})
    summed = kb.status("torch.nn.functional.nll_loss", "2.11", call={"size_average": False, "input.ndim": 4})
    assert none.deterministic is True, none
    assert summed.deterministic is False, summed


def test_scan_reads_reduce_false_as_no_reduction(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from torch import nn
        per_token = nn.CrossEntropyLoss(reduce=False)
        averaged = nn.CrossEntropyLoss()

        def step(logits, target):
            loss = per_token(logits, target).sum() + averaged(logits, target)
            loss.backward()
        """))
    report = scan([str(tmp_path)], given=pins.parse_versions("torch=2.11"))
    lines = sorted({f.line for f in report.findings if f.record == "torch.nll-loss"})
    assert lines == [4], report.findings
