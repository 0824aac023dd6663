"""Issue 42: the check corpora's misses of the static scan, each fixed at its cause and pinned here
against the shipped index: a reseed from a non-deterministic source (torch.seed), backward records at
calls no gradient flows through, and the layers inside a torchvision model a program builds."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan


def _found(tmp_path: Path, source: str, versions: str = "torch=2.11,torchvision=0.26") -> list[tuple[int, str, str]]:
    (tmp_path / "t.py").write_text(textwrap.dedent(source))
    report = scan([str(tmp_path / "t.py")], given=pins.parse_versions(versions))
    return sorted((f.line, f.record, f.level) for f in report.findings)


def test_a_reseed_from_a_non_deterministic_source_is_a_finding(tmp_path):
    """benchmarks/check_corpus/mlp_dropout_reseed.py: torch.manual_seed(0), then torch.seed()."""
    source = """\
        import random
        import numpy as np
        import torch
        torch.manual_seed(0)
        torch.seed()
        torch.random.seed()
        torch.cuda.seed_all()
        g = torch.Generator()
        g.seed()
        random.seed(0)
        np.random.seed(0)
        np.random.default_rng().seed()
        """
    assert _found(tmp_path, source) == [(line, "torch.seed-nondeterministic", "nondeterministic") for line in (5, 6, 7, 9)]
