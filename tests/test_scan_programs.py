"""Which programs reach the code (issue 45, the ninth corpus): imports that name the code base's own root
package by its clone folder's name, and backward records on code only programs that never differentiate run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.scan import pins
from kb.scan.run import scan

VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"


def _scan(root: Path, files: dict[str, str]):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return scan([str(root)], given=pins.parse_versions(VERSIONS))


def test_an_import_naming_the_root_package_by_its_clone_name_reaches_the_file(tmp_path):
    root = tmp_path / "checkout-with-another-name"  # the code imports itself as `proj`, the folder it is cloned to
    report = _scan(root, {
        "__init__.py": "",
        "aug/__init__.py": "",
        "aug/ops.py": """\
            import tensorflow.compat.v1 as tf
            def flip(image):
                if tf.random_uniform([]) > 0.5:
                    return image[::-1]
                return image
            """,
        "trainer/__init__.py": "",
        "trainer/train.py": """\
            from proj.aug import ops
            def main():
                return ops.flip(1)
            if __name__ == "__main__":
                main()
            """})
    seeds = [f.line for f in report.findings if f.record == "tf.random-seeds"]
    assert seeds == [3]
    assert not [n for n in report.notes if n.record == "tf.random-seeds"]
