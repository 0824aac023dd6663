"""The README explains every code an answer can name (generated from data/solutions.yaml)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_every_solution_code_has_a_readme_row() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("<!-- BEGIN GENERATED SOLUTIONS (kb build) -->", 1)[1].split("<!-- END GENERATED SOLUTIONS -->", 1)[0]
    rows = {line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ") and "---" not in line}
    codes = {s["code"] for s in yaml.safe_load((ROOT / "data" / "solutions.yaml").read_text(encoding="utf-8"))}
    assert codes and codes <= rows, sorted(codes - rows)
    for code in ("PT_DET", "MCORE_DET", "FA_DET", "NVTE_DET", "CUDNN_FE_DET", "HVD_NOGRPFUSE"):  # issue 34's list
        assert code in rows
