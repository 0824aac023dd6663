"""Count the frozen corpus's labels: sites, risky, safe and unsure, per repository and per framework.

    python benchmarks/scan_frozen/summary.py [CORPUS_DIR]     # default: this folder; benchmarks/scan_frozen3

Reads corpus.yaml and labels.yaml of this folder (RULES.md says how they were made). A site is
one (path, line); an entry is one (site, record). The framework of an entry is its record's
(torch./torchvision. -> PyTorch, tf./keras./horovod. -> TensorFlow, jax. -> JAX); an entry with
record `*` takes the framework of its repository, or of its folder where a repository holds two.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import yaml

from labelfiles import load_labels  # this folder (the script's own, first on sys.path)

HERE = Path(__file__).resolve().parent
FRAMEWORKS = (("torch", "PyTorch"), ("torchvision", "PyTorch"), ("tf", "TensorFlow"), ("keras", "TensorFlow"),
              ("horovod", "TensorFlow"), ("jax", "JAX"))


def framework(repo_framework: str, entry: dict) -> str:
    prefix = entry["record"].split(".")[0]
    for name, label in FRAMEWORKS:
        if prefix == name:
            return label
    if "+" in repo_framework:  # a repository with a PyTorch and a TensorFlow folder
        return "TensorFlow" if entry["path"].startswith("tf/") else "PyTorch"
    names = {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}
    listed = [name.strip() for name in repo_framework.split(",")]
    if len(listed) > 1:  # a repository with a folder per framework (big_transfer's bit_pytorch, bit_tf2, bit_jax)
        for name in listed:
            if {"pytorch": "pytorch", "tensorflow": "tf", "jax": "jax"}[name] in entry["path"].lower():
                return names[name]
    return names[listed[0]]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else HERE
    corpus = {r["repo"]: r for r in yaml.safe_load((folder / "corpus.yaml").read_text())["repositories"]}
    labels = load_labels(folder)["repositories"]
    per_fw: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    print("| repository | commit | .py | .ipynb | training/model files | sites | entries | risky | safe | unsure |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    total = collections.Counter()
    for repo, doc in labels.items():
        c = collections.Counter(e["label"] for e in doc["sites"])
        sites = {(e["path"], e["line"]) for e in doc["sites"]}
        meta = corpus[repo]
        print(f"| {repo} | `{doc['commit'][:12]}` | {meta['python_files']} | {meta['notebooks']} | "
              f"{len(doc['training_and_model_files'])} | {len(sites)} | {len(doc['sites'])} | {c['risky']} | {c['safe']} | {c['unsure']} |")
        total.update(c)
        total["sites"] += len(sites)
        total["entries"] += len(doc["sites"])
        total["py"] += meta["python_files"]
        total["nb"] += meta["notebooks"]
        total["files"] += len(doc["training_and_model_files"])
        for e in doc["sites"]:
            fw = framework(meta["framework"], e)
            per_fw[fw][e["label"]] += 1
            per_fw[fw]["entries"] += 1
    print(f"| all | | {total['py']} | {total['nb']} | {total['files']} | {total['sites']} | {total['entries']} | "
          f"{total['risky']} | {total['safe']} | {total['unsure']} |")
    print()
    print("| framework | entries | risky | safe | unsure |")
    print("| --- | --- | --- | --- | --- |")
    for fw in ("PyTorch", "TensorFlow", "JAX"):
        v = per_fw[fw]
        print(f"| {fw} | {v['entries']} | {v['risky']} | {v['safe']} | {v['unsure']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
