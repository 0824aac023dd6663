"""Blocks a module-level flag set once never lets run (kb/scan/fixedflags.py): karpathy/build-nanogpt's
`use_compile = False` then `if use_compile: model = torch.compile(model)` (forty-third corpus), and
bert-for-tf2's notebook `max_pooling = True` with its `else:` (fortieth), RULES R4: the branch never runs."""

from __future__ import annotations

from pathlib import Path

from kb.scan import lookup, pins
from kb.scan.run import scan
from scan_files import scan_files


def _scan(tmp_path: Path, files: dict[str, str]) -> list[lookup.Finding]:
    """The findings and the notes (a note's level is "note")."""
    scan_files(tmp_path, files, "torch=2.11")
    result = scan([str(tmp_path)], given=pins.parse_versions("torch=2.11"))
    return [*result.findings, *result.notes]


def _levels(found: list[lookup.Finding], record: str) -> list[tuple[str, int, str]]:
    return sorted((Path(f.path).name, f.line, f.level) for f in found if f.record == record)


_SCRIPT = """\
    import torch
    model = torch.nn.Linear(4, 4).cuda()
    use_compile = False  # compiling is slow here
    if use_compile:
        model = torch.compile(model)
    def build(m):
        if not use_compile:
            return m
        return torch.compile(m)
    if __name__ == "__main__":
        build(model)
    """


def test_a_flag_set_once_at_the_top_of_a_script(tmp_path):
    """The top-level test and the test inside a function of a script: both `torch.compile` calls are notes that
    name the flag's line; the guard's return makes the code after it a note too."""
    found = _scan(tmp_path, {"train.py": _SCRIPT})
    compiled = [f for f in found if f.record == "torch.inductor-autotuning"]
    assert [(f.line, f.level) for f in compiled] == [(5, "note"), (9, "note")], found
    assert all("`use_compile` is set to False at line 3" in f.note for f in compiled), compiled


def test_flags_that_something_may_change_keep_their_findings(tmp_path):
    """A flag bound again (by a loop, a parameter, a `global`), a module that rewrites its globals (`exec`, as
    nanoGPT's configurator), and a test inside a function of a module that is no script (another file may set the
    flag before calling it): the findings stay."""
    rebound = _SCRIPT.replace("    if __name__", "    for use_compile in (True,):\n        pass\n    if __name__")
    configured = _SCRIPT.replace("    if use_compile:\n", "    exec(open('configurator.py').read())\n    if use_compile:\n")
    library = _SCRIPT.replace('    if __name__ == "__main__":\n        build(model)\n', "")
    found = _scan(tmp_path, {"rebound.py": rebound, "configured.py": configured, "lib.py": library})
    levels = _levels(found, "torch.inductor-autotuning")
    assert [(n, line) for n, line, level in levels if level == "note"] == [("lib.py", 5)], levels
    assert {(n, line) for n, line, level in levels if level != "note"} == {
        ("rebound.py", 5), ("rebound.py", 9), ("configured.py", 6), ("configured.py", 10), ("lib.py", 9)}, levels


def test_comparisons_and_else_branches(tmp_path):
    """`mode = "train"` then `if mode == "eval": ... else: ...`, `if pool is None`, `and` decided by one operand."""
    found = _scan(tmp_path, {"run.py": """\
        import torch
        x = torch.randn(4, 4, device="cuda", requires_grad=True)
        mode = "train"
        pool = None
        if mode == "eval":
            y = torch.nn.functional.interpolate(x[None, None], scale_factor=2, mode="bilinear")
        else:
            y = torch.nn.functional.interpolate(x[None, None], scale_factor=2, mode="nearest")
        if pool is not None and x.sum() > 0:
            z = torch.nn.functional.interpolate(x[None, None], scale_factor=2, mode="bicubic")
        y.sum().backward()
        """})
    bilinear = _levels(found, "torch.interpolate-bilinear-backward")
    bicubic = _levels(found, "torch.interpolate-bicubic-backward")
    assert bilinear == [("run.py", 6, "note")], found
    assert bicubic == [("run.py", 10, "note")], found


def test_a_flag_whose_comment_invites_a_change_keeps_its_findings(tmp_path):
    """google-deepmind/jax_privacy's notebook (twenty-sixth corpus, one risky entry the first version lost): `use_dp =
    True` under "# Switch it to False to see the non-DP-SGD results": the reader is meant to run the other branch too.
    A comment that invites nothing (build-nanogpt's "torch.compile interferes with HellaSwag eval") fixes the flag."""
    found = _scan(tmp_path, {"invited.py": _SCRIPT.replace(
        "    use_compile = False  # compiling is slow here\n",
        "    # Switch it to True to compile the model.\n    use_compile = False\n"), "quiet.py": _SCRIPT.replace(
        "  # compiling is slow here", "  # torch.compile interferes with HellaSwag eval. TODO fix")})
    levels = _levels(found, "torch.inductor-autotuning")
    assert levels == [("invited.py", 6, "nondeterministic"), ("invited.py", 10, "nondeterministic"),
                      ("quiet.py", 5, "note"), ("quiet.py", 9, "note")], levels
