"""Files in Python 2 (or pre-3.7) syntax, which `ast.parse` refuses: the lenient second parse
(kb/scan/oldsyntax.py) rewrites the old constructs token by token and the file's sites are read at
their own lines and columns (the eleventh corpus's TF 1 files with `print` statements, the tenth's
`.cuda(async=True)`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kb.scan import lookup, oldsyntax
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str], versions: str) -> list[lookup.Finding]:
    return scan_files(tmp_path, files, versions)


def test_tf1_file_with_print_statements_is_scanned(tmp_path):
    """hexiangnan/attentional_factorization_machine's shape: TF 1 optimizers' `minimize` (default GATE_OP
    gating) in a file whose `print` statements and `except E, e` kept it unparsed."""
    found = _scan(tmp_path, {"AFM.py": """\
        import os
        import tensorflow as tf
        def train(loss, lr):
            print "building", lr
            print >>open(os.devnull, "w"), "quiet"
            try:
                os.makedirs("/tmp/afm", 0777)
            except OSError, e:
                print `e`
            if lr <> 0.0:
                opt = tf.train.AdamOptimizer(learning_rate=lr).minimize(loss)
            print
            return opt
        """}, "tensorflow=1.15")
    assert [(f.line, f.col, f.record) for f in found if f.record == "tf.gradient-gating"] == [
        (11, 15, "tf.gradient-gating")], found


def test_async_keyword_argument_of_old_pytorch_is_scanned(tmp_path):
    """bearpaw/pytorch-classification's shape: `.cuda(async=True)` (PyTorch 0.3's name of non_blocking;
    `async` is a keyword since Python 3.7) kept the file unparsed, and its DataLoader with workers unread."""
    found = _scan(tmp_path, {"cifar.py": """\
        import torch
        from torch.utils.data import DataLoader
        def main(trainset, model, index):
            loader = DataLoader(trainset, batch_size=128, shuffle=True, num_workers=4)
            for inputs, targets in loader:
                inputs, targets = inputs.cuda(async=True), targets.cuda(async=True)
                out = model(inputs)
                out.index_add_(0, index, targets); out.sum().backward()
        """}, "torch=2.11")
    assert [(f.line, f.col, f.record) for f in found if f.record in ("torch.data-loader-workers", "torch.index-add")
            ] == [(4, 14, "torch.data-loader-workers"), (8, 9, "torch.index-add")], found


def test_rewrites_keep_the_original_columns_and_leave_strings_alone():
    """Strings and comments are never rewritten, and the tree's columns are those of the original text."""
    text = 's = ur"print x <> 0777"  # print y\nprint s, 10L\nx = f(async=True, b=`s`)\n'
    tree = oldsyntax.parse(text)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert [ast.get_source_segment(text, n) for n in calls] == ["print s, 10L", "f(async=True, b=`s`)"]
    assert isinstance(tree.body[0], ast.Assign) and tree.body[0].value.value == "print x <> 0777"  # type: ignore


def test_text_that_still_does_not_parse_keeps_the_first_error():
    """A file broken for another reason is reported as before (the error of the first parse)."""
    with pytest.raises(SyntaxError) as caught:
        oldsyntax.parse("print x\ndef (:\n")
    assert caught.value.lineno == 1
