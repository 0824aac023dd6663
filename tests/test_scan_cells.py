"""Notebook cells read as IPython runs them (kb.scan.cells): with IPython's own transformer when it
is importable, with the fallback always; both keep the cell's line count and parse."""

from __future__ import annotations

import ast
import json

import pytest

from kb.scan import cells

# (cell, what must hold of the Python text) - the constructs issue 35 found failing to parse
CELLS = {
    "cell magic with an indented body": "%%timeit\nfor i in range(3):\n    x = i\n",
    "writefile cell": "%%writefile train.py\nimport torch\n  not python at all (\n",
    "shell continuation": "!pip install torch \\\n    torchvision \\\n    jax\nimport torch\ny = torch.zeros(3)\n",
    "assignment from the shell": "files = !ls -1\nn, m = %who_ls\nimport torch\n",
    "indented first line": "    import torch\n    x = torch.zeros(3)\n    if x.sum():\n        x.index_add_(0, i, v)\n",
    "magics inside a block": "import torch\nif True:\n    %time y = 1\n    !echo hi\n    torch.index_add(x, 0, i, s)\n",
    "help": "?torch.zeros\nimport torch\n",
}


def _check(python: str, source: str) -> None:
    assert python.count("\n") == source.count("\n")  # one line per line: findings keep their cell line
    ast.parse(python)


@pytest.mark.parametrize("name", sorted(CELLS))
def test_fallback_parses_line_for_line(name):
    source = CELLS[name]
    python = cells.fallback(source)
    _check(python, source)
    lines = python.split("\n")
    if name == "shell continuation":
        assert lines[:3] == ["pass", "", ""] and lines[3] == "import torch"
    if name == "assignment from the shell":
        assert lines[:2] == ["files = None", "n, m = None"]
    if name == "indented first line":
        assert lines[3] == "    x.index_add_(0, i, v)"  # dedented by the first line's indent, line 4 kept
    if name == "writefile cell":
        assert lines[0] == "pass" and not any(lines[1:])  # the body is the magic's input, not code
    if name == "cell magic with an indented body":  # %%timeit runs its body as Python: scanned
        assert lines[:3] == ["pass", "for i in range(3):", "    x = i"]




@pytest.mark.parametrize("name", sorted(CELLS))
def test_ipython_transformer_parses_line_for_line(name):
    pytest.importorskip("IPython", reason="IPython is not installed here: the fallback is tested above")
    transformer = cells.manager()
    assert transformer is not None
    source = CELLS[name]
    python = cells.ipython(source, transformer)
    assert python is not None, "IPython's output could not be matched line for line"
    _check(python, source)
    if name == "assignment from the shell":
        assert "getoutput" in python.split("\n")[0]  # IPython's own rewrite, not the fallback's
    assert cells.python_of(source) == python


def test_a_notebook_finding_keeps_its_cell_line(tmp_path, capsys):
    from kb.cli import main

    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": CELLS["shell continuation"]},
                                        {"cell_type": "code", "source": CELLS["indented first line"]}],
                              "nbformat": 4, "nbformat_minor": 5}))
    main(["scan", str(nb), "--versions", "torch=2.11", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == []
    assert [(f["cell"], f["line"], f["record"]) for f in doc["notes"]] == [(2, 4, "torch.index-add")]


BODY = "import torch\nx = torch.zeros(3, device='cuda')\nx.index_add_(0, i, v)\n"


def _scan_notebook(tmp_path, capsys, *sources: str) -> dict:
    from kb.cli import main

    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": s} for s in sources],
                              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    main(["scan", str(nb), "--versions", "torch=2.5", "--format", "json"])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1 -r 1", "%%capture out", "%%prun -s cumulative",
                                   "%%profile", "%%debug", "%%capture\n%%time"])
def test_r4_m6_python_running_cell_magics_are_scanned(tmp_path, capsys, magic):
    """IPython runs these cells' bodies as Python; the scan said "clean" (issue 43, R4-M6)."""
    doc = _scan_notebook(tmp_path, capsys, f"{magic}\n{BODY}")
    lines = magic.count("\n") + 1
    assert doc["errors"] == []
    assert [(f["cell"], f["line"], f["record"]) for f in doc["findings"]] == [(1, lines + 3, "torch.index-add")]


@pytest.mark.parametrize("line", ["%time x.index_add_(0, i, v)", "%timeit -n 10 -r 3 x.index_add_(0, i, v)",
                                  "%prun -s cumulative x.index_add_(0, i, v)"])
def test_r4_m6_python_running_line_magics_are_scanned_in_their_column(tmp_path, capsys, line):
    doc = _scan_notebook(tmp_path, capsys, f"import torch\nx = torch.zeros(3, device='cuda')\n{line}\n")
    assert doc["errors"] == []
    [finding] = doc["findings"]
    assert (finding["line"], finding["col"]) == (3, line.index("x.index_add_") + 1)


def test_r4_m6_other_cell_magics_stay_unscanned(tmp_path, capsys):
    doc = _scan_notebook(tmp_path, capsys, f"%%bash\n{BODY}", f"%%writefile t.py\n{BODY}")
    assert doc["findings"] == [] and doc["errors"] == []


def test_r4_l1_cr_only_line_endings_are_lines(tmp_path, capsys):
    """Python runs a file saved with CR-only line endings; the scan saw no call in it."""
    from kb.cli import main

    (tmp_path / "cr.py").write_bytes(b"import torch\rdef f(x, i, v):\r    x.index_add_(0, i, v)\r")
    main(["scan", str(tmp_path / "cr.py"), "--versions", "torch=2.5", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [(f["line"], f["record"]) for f in doc["findings"]] == [(3, "torch.index-add")]
    doc = _scan_notebook(tmp_path, capsys, BODY.replace("\n", "\r"))
    assert [(f["cell"], f["line"]) for f in doc["findings"]] == [(1, 3)]


def test_r4_l5_help_at_the_end_of_a_line_keeps_the_cell(tmp_path, capsys):
    """`torch.index_add?` is IPython help; the fallback failed on the whole cell and lost its calls."""
    doc = _scan_notebook(tmp_path, capsys, "import torch\ntorch.index_add?\nx.index_add_(0, i, v)\nx.cumsum??\n")
    assert doc["errors"] == []
    assert [(f["cell"], f["line"], f["record"]) for f in doc["notes"]] == [(1, 3, "torch.index-add")]
    assert cells.fallback("a = b?\n") == "a = b?\n"  # not a help line: left for the parser to refuse


def test_r4_l6_lone_surrogate_is_named_and_the_other_cells_scanned(tmp_path, capsys):
    """A JSON escape `\\ud800` in a cell was reported as "too deeply nested or too large"."""
    doc = _scan_notebook(tmp_path, capsys, "# \ud800 note\n", BODY)
    [error] = doc["errors"]
    assert error["line"] == 1 and "cell 1" in error["message"] and "lone surrogate '\\ud800'" in error["message"]
    assert [(f["cell"], f["record"]) for f in doc["findings"]] == [(2, "torch.index-add")]
