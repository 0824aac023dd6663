"""`kb.status(..., call=...)`: records with `calls:` conditions answer for the call (docs/calls.md).

A small project (the mini fixture plus records with conditions) is compiled into an index
and swapped in, so each case states exactly which condition it exercises.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kb
from kbproject import answering, compiled

MINI = Path(__file__).parent / "fixtures" / "mini"
ROOT = Path(__file__).resolve().parents[1]

RESIZE = """\
# yaml-language-server: $schema=../../../schema/source.schema.json
id: tf.resize-sample
framework: tensorflow
title: Resize sample
ops:
  - tf.image.resize
device: gpu
pass: backward
mechanism: cuda-atomics
summary: Bilinear and bicubic resize backprop add with atomics.
calls:
  - when:
      method: [bilinear, bicubic]
      antialias: [false]
status:
  - versions: <2.1
  - versions: '>=2.1'
    solutions: [TDO]
references:
  - kind: pr
    repo: tensorflow/tensorflow
    number: 31465
"""

SEGMENT = """\
# yaml-language-server: $schema=../../../schema/source.schema.json
id: tf.segment-sample
framework: tensorflow
title: Segment sample
ops:
  - tf.math.segment_sum
device: gpu
pass: forward
mechanism: cuda-atomics
summary: Floating-point segment sums add with atomics; rank decides the kernel.
calls:
  - when:
      input.dtype: [float]
      input.ndim: [1, 2]
status:
  - versions: <2.1
  - versions: '>=2.1,<2.2'
    solutions: [TDO]
  - versions: '>=2.2'
    solutions: [TDO]
    when:
      input.ndim: [2]
references:
  - kind: pr
    repo: tensorflow/tensorflow
    number: 31465
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("calls") / "project"
    shutil.copytree(MINI, root)
    for name, text in (("tf.resize-sample", RESIZE), ("tf.segment-sample", SEGMENT)):
        (root / "data/sources/tensorflow" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return compiled(root)


@pytest.fixture()
def kbq(index: dict):
    with answering(index) as answering_kb:
        yield answering_kb


def test_unknown_call_applies_with_the_condition_stated(kbq) -> None:
    s = kbq.status("tf.image.resize", "2.3")
    assert s.deterministic is False and s.recipe == ("TDO",)
    assert s.depends_on_call is True and s.call is None and s.excluded == ()
    (source,) = s.sources
    assert source.applies is None
    assert source.when == ({"antialias": (False,), "method": ("bilinear", "bicubic")},)
    assert source.condition == "antialias is False and method is 'bilinear' or 'bicubic'"
    assert "when antialias is False" in str(s) and "deterministic otherwise" in str(s)
    assert json.loads(json.dumps(s.to_dict()))["sources"][0]["when"] == [
        {"antialias": [False], "method": ["bilinear", "bicubic"]}
    ]


def test_a_call_the_condition_excludes_is_deterministic(kbq) -> None:
    s = kbq.status("tf.image.resize", "2.3", call={"method": "nearest"})
    assert s.deterministic is True and s.sources == () and s.recipe == ()
    assert s.excluded == ("tf.resize-sample",)
    assert any("method is 'nearest'" in n for n in s.notes)
    assert s.depends_on_call is False


def test_defaults_decide_a_parameter_left_out(kbq) -> None:
    s = kbq.status("tf.image.resize", "2.3", call={})  # method defaults to 'bilinear', antialias to False
    assert s.deterministic is False and s.sources[0].applies is True and s.depends_on_call is False
    s = kbq.status("tf.image.resize", "2.3", call={"antialias": True})
    assert s.deterministic is True
    assert any("antialias is True" in n for n in s.notes)


def test_true_is_not_one(kbq) -> None:
    """A flag and a count are different facts: antialias=1 is not antialias=True."""
    assert kbq.status("tf.image.resize", "2.3", call={"antialias": 0}).deterministic is True


def test_a_fact_left_out_stays_unknown(kbq) -> None:
    s = kbq.status("tf.math.segment_sum", "2.1", call={"input.dtype": "float"})
    assert s.deterministic is False and s.depends_on_call is True
    assert s.sources[0].applies is None and s.sources[0].depends_on == ("input.ndim",)
    assert kbq.status("tf.math.segment_sum", "2.1", call={"input.dtype": "int"}).deterministic is True
    assert kbq.status("tf.math.segment_sum", "2.1", call={"input.dtype": "float", "input.ndim": 1}).sources[0].applies


def test_a_range_condition_narrows_the_record_in_that_range_only(kbq) -> None:
    call = {"input.dtype": "float", "input.ndim": 1}
    assert kbq.status("tf.math.segment_sum", "2.1", call=call).deterministic is False
    s = kbq.status("tf.math.segment_sum", "2.2", call=call)
    assert s.deterministic is True and s.excluded == ("tf.segment-sample",)
    assert kbq.status("tf.math.segment_sum", "2.2", call={**call, "input.ndim": 2}).deterministic is False
    (source,) = kbq.status("tf.math.segment_sum", "2.2").sources
    assert source.when == ({"input.dtype": ("float",), "input.ndim": (2,)},)


def test_records_without_conditions_apply_to_every_call(kbq) -> None:
    s = kbq.status("tf.nn.bias_add", "2.3", call={"data_format": "NHWC"})
    assert s.deterministic is False and s.sources[0].applies is True and s.sources[0].when == ()
    assert s.sources[0].condition is None and s.depends_on_call is False


@pytest.mark.parametrize("call, message", [
    ({"metod": "nearest"}, "has no parameter 'metod'; its parameters are: images, size, method"),
    ({"method": ["nearest"]}, "must be a plain literal"),
    ({"input.ndim": -1}, "whole number"),
    ({"input.ndim": True}, "whole number"),
    ({"input.dtype": "float33"}, "dtype kind"),
    ({1: "x"}, "parameter names"),
    ("method=nearest", "mapping"),
    (5, "mapping"),
])
def test_bad_calls_are_value_errors_naming_what_is_expected(kbq, call, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        kbq.status("tf.image.resize", "2.3", call=call)


def test_a_bad_call_is_never_cached(kbq) -> None:
    for _ in range(2):
        with pytest.raises(ValueError):
            kbq.status("tf.image.resize", "2.3", call={"metod": "nearest"})


def test_parameters_lists_names_and_defaults(kbq) -> None:
    params = kbq.parameters("tf.image.resize")
    assert params[0] == ("images", kb.NO_DEFAULT)
    assert ("method", "bilinear") in params and ("antialias", False) in params
    with pytest.raises(kb.UnknownOpError):
        kbq.parameters("tf.image.resiz")


def test_real_index_parameters_and_unknown_key() -> None:
    """The shipped index compiles the signatures of record ops (data/api/*.signatures.txt)."""
    params = dict(kb.parameters("torch.nn.functional.interpolate"))
    assert params["mode"] == "nearest" and params["antialias"] is False
    with pytest.raises(ValueError, match="torch.nn.functional.interpolate has no parameter 'mdoe'"):
        kb.status("torch.nn.functional.interpolate", "2.11", call={"mdoe": "bilinear"})


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_cli_call_reads_literals_and_reports_bad_keys() -> None:
    done = _cli("status", "torch.nn.functional.interpolate", "2.11", "--call", "mode=nearest",
                "--call", "input.ndim=4", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["call"] == {"mode": "nearest", "input.ndim": 4}
    bad = _cli("status", "torch.nn.functional.interpolate", "2.11", "--call", "mdoe=nearest")
    assert bad.returncode == 2 and "no parameter 'mdoe'" in bad.stderr and "Traceback" not in bad.stderr
    bad = _cli("status", "torch.nn.functional.interpolate", "2.11", "--call", "mode")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_evidence_of_2_11_is_not_shown_for_2_0() -> None:
    """Release keys drop trailing zeros: 2.0 is (0, 2), a prefix of 2.11's (0, 2, 11)."""
    assert kb.status("torch.Tensor.index_add_", "2.11").verified
    assert kb.status("torch.Tensor.index_add_", "2.0").verified == ()
    assert kb.status("torch.Tensor.index_add_", "2.1").verified == ()
