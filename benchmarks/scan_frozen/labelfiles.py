"""Read a frozen corpus's labels: one labels.yaml, or (the fourth corpus) one file per repository under
labels/, written by several labellers at once, each file as its labeller committed it.

The per-repository files are read, not merged into one file, so that what each labeller wrote stays
the committed record of it; a repository labelled twice is an error rather than a silent choice.
"""

from __future__ import annotations

from pathlib import Path

import yaml


def load_labels(folder: Path) -> dict:
    """{"repositories": {repo: {commit, training_and_model_files, sites}}} of the corpus in `folder`."""
    single = folder / "labels.yaml"
    if single.exists():
        return yaml.safe_load(single.read_text(encoding="utf-8"))
    parts = sorted((folder / "labels").glob("*.yaml"))
    if not parts:
        raise SystemExit(f"{folder}: neither labels.yaml nor labels/*.yaml")
    repositories: dict = {}
    for part in parts:
        doc = yaml.safe_load(part.read_text(encoding="utf-8")) or {}
        for repo, block in (doc.get("repositories") or {}).items():
            if repo in repositories:
                raise SystemExit(f"{part}: {repo} is labelled in another file too")
            repositories[repo] = block
    return {"repositories": repositories}
