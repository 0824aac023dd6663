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


def test_r4_l17_what_to_do_is_cut_at_a_sentence_end_outside_parentheses() -> None:
    from kb.site.readme import _first_sentence

    assert _first_sentence("Set A to one protocol (e.g. Simple), and keep B. More text.") == \
        "Set A to one protocol (e.g. Simple), and keep B."
    assert _first_sentence("PyTorch 1.7 only (the beta API; deprecated in 1.8). Then more.") == \
        "PyTorch 1.7 only (the beta API; deprecated in 1.8)."
    assert _first_sentence("One; two.") == "One."
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "(e.g. |" not in readme and "(the beta API. |" not in readme


def test_r4_l17_lint_codes_named_in_the_readme_exist_and_no_range_is_stale() -> None:
    import re

    from kb.lint import CODES

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"KB\d{3}", readme)) <= set(CODES)
    for last in re.findall(r"KB001\s*-\s*(KB\d{3})", readme):
        assert last == max(CODES), f"README says KB001-{last}; the codes run to {max(CODES)}"
