"""Measure `kb scan` on whole public repositories: precision per record and level, and recall.

    python benchmarks/scan_corpus/measure.py                 # scan the corpus, compare with labels.yaml
    python benchmarks/scan_corpus/measure.py --kb OTHER_ROOT # the same with another checkout of kb (a baseline)
    python benchmarks/scan_corpus/measure.py --unlabelled    # list findings that labels.yaml does not judge

The corpus is never committed: each repository is read at the commit named in CORPUS from a
local git directory (`--mirrors DIR`, holding `owner+name/repo`, or `owner+name` git dirs),
and only its Python files, notebooks, packaging files (pyproject.toml, setup.cfg, requirements*.txt,
environment.yml) and CI workflows (.github/workflows/*.yml: the scan reads them for a Keras 2
requirement) are written to a temporary folder, which is scanned whole (`kb scan .` in it).
labels.yaml judges every finding (by path, line and record) and lists the risky call sites a
scan should report (`missed` entries are those the judged scan did not report). docs/scan.md gives the labelling rules and the results.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
LABELS = Path(__file__).with_name("labels.yaml")
VERSIONS = "torch=2.11,tensorflow=2.20,jax=0.8"
KEEP = (".py", ".ipynb")
KEEP_NAMES = ("pyproject.toml", "setup.cfg", "environment.yml", "environment.yaml")
# YAML: the CI workflows (kb/scan/keras2.py) and the configs whose `target:` builds classes (kb/scan/configtargets.py)
KEPT = re.compile(r"(?:^|/)requirements[^/]*\.(?:txt|in)$|\.ya?ml$|\.gin$")
# repository, commit, folder scanned (None: the whole repository)
CORPUS = (
    ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8", None),
    ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291", None),
    ("karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26", None),
    ("lucidrains/vit-pytorch", "69d24fe9e3024c0d4b02761123b8583a24ebed1e", None),
    ("lucidrains/denoising-diffusion-pytorch", "faed4db28e724735323fa91c70aa9b28a6e1cbac", None),
    ("facebookresearch/detr", "29901c51d7fe8712168b8d0d64351170bc0f83e0", None),
    ("google/flax", "18f8f311c275d57f46d95e41b15aa97b454754c0", "examples"),
)


def git_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo" / ".git", base / "repo"):  # fetch's layouts: a work tree's .git, or a bare one
        if (candidate / "HEAD").exists():
            return candidate
    return base


def extract(mirrors: Path, repo: str, commit: str, folder: str | None, into: Path) -> Path:
    """The repository's Python files (and packaging files) at `commit`, under `into`."""
    gd = git_dir(mirrors, repo)
    names = subprocess.run(["git", f"--git-dir={gd}", "ls-tree", "-r", "--name-only", commit],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    out = into / repo.replace("/", "+")
    for name in names:
        if folder and not name.startswith(folder.rstrip("/") + "/"):
            continue
        if not (name.endswith(KEEP) or os.path.basename(name) in KEEP_NAMES or KEPT.search(name)):
            continue
        blob = subprocess.run(["git", f"--git-dir={gd}", "show", f"{commit}:{name}"], capture_output=True)
        if blob.returncode:  # a blob the snapshot does not hold (large files): skipped
            continue
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    return out / folder if folder else out


# What makes a file a training script or a model file (issue 30 item 4 counts them): it defines a model
# (a subclass of nn.Module / flax's nn.Module / a Keras Model) or it trains (a backward pass, an optimizer
# step, jax.grad / value_and_grad, Keras fit). Read as text; the corpus's tests are left out.
MODEL_OR_TRAINING = re.compile(r"class \w+\((?:[\w.]*\.)?(?:Module|Model)\b|\.backward\(|optimizer\.step\(|"
                               r"\bjax\.(?:value_and_grad|grad)\(|\.fit\(|optax\.")


def training_files(root: Path) -> list[str]:
    """Training scripts and model files under `root` (paths relative to it), tests excluded."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or not rel.endswith(KEEP) or "test" in path.name:
            continue
        if MODEL_OR_TRAINING.search(path.read_text(errors="replace")):
            out.append(rel)
    return out


def run_scan(kb_root: Path, folder: Path, versions: str = VERSIONS) -> dict:
    env = dict(os.environ, PYTHONPATH=str(kb_root))
    # every file read afresh, and no reading left in the user's cache (a scanner older than the cache has no flag)
    fresh = ["--no-cache"] if (kb_root / "kb" / "scan" / "filecache.py").exists() else []
    # -P: the scanned folder is the working directory, and a file of it named as a standard module (brax's
    # `types.py`) must not shadow the standard library the interpreter imports before kb starts
    done = subprocess.run([sys.executable, "-P", "-m", "kb", "scan", ".", "--versions", versions, "--format", "json", *fresh],
                          cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"kb scan failed in {folder}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def key(repo: str, finding: dict) -> tuple[str, str, int, str]:
    path = finding["path"] + (f"#cell{finding['cell']}" if finding.get("cell") else "")
    return repo, path, finding["line"], finding["record"]


def load_labels() -> tuple[dict, list]:
    doc = yaml.safe_load(LABELS.read_text()) or {}
    judged = {}
    for repo, entries in (doc.get("findings") or {}).items():
        for e in entries:
            judged[(repo, e["path"], e["line"], e["record"])] = (e["label"], e.get("why", ""))
    return judged, doc.get("risky") or []


def measure(kb_root: Path, mirrors: Path, show_unlabelled: bool) -> dict:
    judged, risky = load_labels()
    rows = []
    notes = []
    files: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for repo, commit, folder in CORPUS:
            where = extract(mirrors, repo, commit, folder, Path(tmp))
            doc = run_scan(kb_root, where)
            files[repo] = training_files(where)
            for f in doc["findings"]:
                k = key(repo, f)
                label = judged.get(k, (None, ""))[0]
                rows.append((k, f["level"], label, f["text"]))
            notes.extend(key(repo, f) for f in doc.get("notes", ()))
    unlabelled = [r for r in rows if r[2] is None]
    if show_unlabelled:
        for (repo, path, line, record), level, _, text in unlabelled:
            print(f"- {{repo: {repo}, path: {path}, line: {line}, record: {record}, level: {level}, text: {text!r}}}")
    per_record = collections.defaultdict(lambda: [0, 0])
    per_level = collections.defaultdict(lambda: [0, 0])
    for (_repo, _path, _line, record), level, label, _ in rows:
        if label is None:
            continue
        good = label == "tp"
        per_record[record][0 if good else 1] += 1
        per_level[level][0 if good else 1] += 1
    reported = {(r[0][0], r[0][1], r[0][2], r[0][3]) for r in rows}
    found_risky = [r for r in risky if (r["repo"], r["path"], r["line"], r["record"]) in reported]
    tp = sum(v[0] for v in per_level.values())
    fp = sum(v[1] for v in per_level.values())
    recall_by_record = collections.defaultdict(lambda: [0, 0])
    for r in risky:
        recall_by_record[r["record"]][1] += 1
        if (r["repo"], r["path"], r["line"], r["record"]) in reported:
            recall_by_record[r["record"]][0] += 1
    false_alarms = sorted(f"{k[0]} {k[1]}:{k[2]} [{k[3]}] {level}: {judged[k][1]}"
                          for k, level, label, _ in rows if label == "fp")
    noted_tp = sorted(f"{k[0]} {k[1]}:{k[2]} [{k[3]}]" for k in notes if judged.get(k, (None,))[0] == "tp")
    return {"training_and_model_files": sum(len(v) for v in files.values()), "files": files,
            "findings": len(rows), "notes": len(notes), "notes_judged_tp": noted_tp, "unlabelled": len(unlabelled), "tp": tp, "fp": fp,
            "precision": tp / (tp + fp) if tp + fp else None,
            "per_level": {k: {"tp": v[0], "fp": v[1], "precision": v[0] / sum(v)} for k, v in sorted(per_level.items())},
            "per_record": {k: {"tp": v[0], "fp": v[1], "precision": v[0] / sum(v)} for k, v in sorted(per_record.items())},
            "risky": len(risky), "risky_found": len(found_risky),
            "recall": len(found_risky) / len(risky) if risky else None,
            "recall_per_record": {k: {"found": v[0], "sites": v[1]} for k, v in sorted(recall_by_record.items())},
            "missed": sorted(f"{r['repo']} {r['path']}:{r['line']} [{r['record']}] {r.get('why', '')}"
                             for r in risky if r not in found_risky),
            "false_alarms": false_alarms}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, default=ROOT, help="the kb checkout to measure (default: this one)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="folder of the repositories' git dirs")
    parser.add_argument("--unlabelled", action="store_true", help="print findings labels.yaml does not judge")
    parser.add_argument("--files", action="store_true", help="list the training scripts and model files per repository")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args()
    result = measure(args.kb.resolve(), args.mirrors, args.unlabelled)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    if args.files:
        for repo, names in result["files"].items():
            print(f"{repo} ({len(names)}): " + ", ".join(names))
    p = result["precision"]
    print(f"training scripts and model files: {result['training_and_model_files']}")
    print(f"findings {result['findings']} (unlabelled {result['unlabelled']}); precision "
          f"{'n/a' if p is None else f'{p:.1%}'} ({result['tp']} of {result['tp'] + result['fp']}); "
          f"recall {result['risky_found']} of {result['risky']}; notes (not findings) {result['notes']}")
    for line in result["notes_judged_tp"]:
        print(f"  note on a site labelled tp: {line}")
    for level, v in result["per_level"].items():
        print(f"  {level}: {v['tp']} of {v['tp'] + v['fp']} ({v['precision']:.1%})")
    for record, v in result["per_record"].items():
        print(f"  {record}: {v['tp']} of {v['tp'] + v['fp']} ({v['precision']:.1%})")
    for line in result["missed"]:
        print(f"  missed: {line}")
    for line in result["false_alarms"]:
        print(f"  false alarm: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
