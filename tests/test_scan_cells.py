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
    if name.startswith(("cell magic", "writefile")):
        assert lines[0] == "pass" and not any(lines[1:])  # the body is the magic's input, not code




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
    assert [(f["cell"], f["line"], f["record"]) for f in doc["findings"]] == [(2, 4, "torch.index-add")]
