"""`nn.Embedding.from_pretrained(table, freeze=...)`: the record torch.embedding-backward applies when freeze is False
(the table is trained through the atomic backward) and not for the default freeze=True (the weight has
requires_grad=False); measured on an H200 with PyTorch 2.11 (the record's condition cites the run). Left out of
the KB before, so a scan missed `freeze=False` (13 risky sites of the forty-seventh and forty-eighth corpora)."""

from __future__ import annotations

from pathlib import Path

import kb
from scan_files import scan_files


def test_status_depends_on_freeze() -> None:
    trained = kb.status("torch.nn.Embedding.from_pretrained", "2.11", call={"freeze": False})
    frozen = kb.status("torch.nn.Embedding.from_pretrained", "2.11", call={"freeze": True})
    default = kb.status("torch.nn.Embedding.from_pretrained", "2.11", call={})
    assert trained.deterministic is False
    assert frozen.deterministic is not False and default.deterministic is not False


def test_scan_reports_only_the_trained_table(tmp_path: Path) -> None:
    found = scan_files(tmp_path, {"m.py": """\
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self, table):
                super().__init__()
                self.a = nn.Embedding.from_pretrained(table, freeze=False)
                self.b = nn.Embedding.from_pretrained(table)
                self.c = nn.Embedding.from_pretrained(table, False)
                self.d = nn.Embedding.from_pretrained(table, freeze=True)
            def forward(self, i):
                return self.a(i) + self.b(i) + self.c(i) + self.d(i)
        m = M(torch.randn(4, 3)).cuda()
        m(torch.zeros(2, dtype=torch.long).cuda()).sum().backward()
        """}, "torch=2.11")
    assert sorted(f.line for f in found if f.record == "torch.embedding-backward") == [6, 8], found
