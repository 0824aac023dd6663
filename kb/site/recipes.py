"""One copy-paste block per framework and version range: the whole recipe, seeding included.

The codes come from kb.status()'s own cover for the whole stack (model.stack); this module
only assembles their snippets into one program in a runnable order (environment first, then
imports, seeding, switches) and says in words what the block changes: which calls will raise,
how to make that a warning, what no switch fixes, and what the recipe cost where a verifier
measured it.
"""

from __future__ import annotations

import re
from typing import Any

from kb.site import matrix, model, words

# Seeding is not a record's solution (it fixes no op) but a recipe without it does not give
# the same run twice; PyTorch's own reproducibility notes give these calls.
SEEDING = {
    "pytorch": ("random.seed(SEED)\nnp.random.seed(SEED)\ntorch.manual_seed(SEED)  # seeds the CPU and every GPU",
                ("import random", "import numpy as np", "import torch")),
    "jax": ("# JAX has no global seed: pass explicit keys, e.g. key = jax.random.key(0)", ("import jax",)),
    "tensorflow": ("", ("import random", "import numpy as np", "import tensorflow as tf")),
}
SEEDING_SOURCE = {
    "pytorch": ("PyTorch: Reproducibility", "https://pytorch.org/docs/stable/notes/randomness.html"),
}
WARN_ONLY = {"PT_DET": "PT_DETW"}
_EXPORT = re.compile(r"^export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def _is_python(snippet: str) -> bool:
    try:
        compile(snippet, "<snippet>", "exec")
    except SyntaxError:
        return False
    return True


def _python(framework: str, codes: list[str], solutions: dict) -> tuple[str, str, list[str]]:
    """(program, shell commands, codes with no snippet): imports, environment, seeding, switches."""
    shell: list[str] = []
    env: list[str] = []
    imports: list[str] = ["import os"]
    body: list[str] = []
    missing: list[str] = []
    seeding, seed_imports = SEEDING.get(framework, ("", ()))
    for line in seed_imports:
        if line not in imports:
            imports.append(line)
    for code in codes:
        snippet = solutions[code].get("snippet")
        if not snippet:
            missing.append(code)
            continue
        if not _is_python(snippet) and not all(_EXPORT.match(line.strip()) for line in snippet.splitlines() if line.strip()):
            shell.append(f"# {code}: {solutions[code]['title']}\n{snippet.strip()}")
            continue
        chunk: list[str] = []
        for line in snippet.splitlines():
            exported = _EXPORT.match(line.strip())
            if exported:
                env.append(f"os.environ[{exported.group(1)!r}] = {exported.group(2).strip()!r}")
            elif line.startswith(("import ", "from ")):
                if line not in imports:
                    imports.append(line)
            elif "os.environ[" in line and not line.startswith(" "):
                env.append(line)
            else:
                chunk.append(line)
        if "numpy." in "\n".join(chunk):  # a snippet written for `import numpy`
            chunk = [line.replace("numpy.", "np.") for line in chunk]
        if chunk:
            body.append(f"# {code}: {solutions[code]['title']}\n" + "\n".join(chunk).strip("\n"))
    # Environment before the framework is imported: XLA and TF read their flags at start-up.
    if not env and not body:
        return "", "\n\n".join(shell), missing
    uses_seed = "SEED" in seeding or any("SEED" in line for line in env + body)
    first = [imports[0]] + (["SEED = 0"] if uses_seed else []) + env
    rest = [line for line in imports[1:] if line != "import os"]
    parts = ["\n".join(first), "\n".join(rest)]
    if seeding:
        parts.append(seeding)
    parts += body
    return "\n\n".join(p for p in parts if p.strip()) + "\n", "\n\n".join(shell), missing


def _costs(index: dict, framework: str, releases: list, codes: list[str]) -> list[str]:
    """What a verifier measured for the recipe's codes on these releases (GPU runs only)."""
    out = []
    for source in sorted(model.sources_of(index, framework), key=lambda s: s["id"]):
        for run in matrix.runs_on(index, source["id"], releases):
            for mode in run.get("modes") or ():
                if mode.get("mode") in codes and mode.get("outcome") == "ok" and isinstance(mode.get("time_ratio"), (int, float)):
                    out.append((mode["time_ratio"], f"{source['title']}: {words.mode_text(mode, run.get('n'))} "
                                                     f"({words.gpu(run)}, {words.name(framework)} {run.get('version')})"))
    return [text for _, text in sorted(out, key=lambda item: -item[0])]


_memo: dict[str, tuple[dict, list[dict]]] = {}


def blocks(catalog: Any, index: dict, framework: str) -> list[dict]:
    """Recipe blocks for the framework's releases, newest first (GPU, stock builds).

    The pages and the JSON API both need them from the same index in one build: computed
    once per index object (held, so a new index with the same id is never mistaken for it).
    """
    held = _memo.get(framework)
    if held is not None and held[0] is index:
        return [dict(b) for b in held[1]]
    found = _blocks(catalog, index, framework)
    _memo[framework] = (index, found)
    return [dict(b) for b in found]


def _blocks(catalog: Any, index: dict, framework: str) -> list[dict]:
    solutions = index["solutions"]
    rows: list[dict] = []
    for col in model.series(catalog, framework):
        answer = model.stack(index, framework, col.label)
        raises = []
        for sid in answer["affected"]:
            status = model.source_answer(sid, framework, col.label)
            if status.raises:
                raises.append({"id": sid, "title": index["sources"][sid]["title"], "exception": status.raises})
        codes = list(answer["recipe"])
        program, shell, missing = _python(framework, codes, solutions) if codes else ("", "", [])
        costs = _costs(index, framework, col.releases, codes)
        signature = (tuple(codes), tuple(r["id"] for r in raises), tuple(answer["unsolved"]), tuple(answer["unknown"]),
                     tuple(costs))
        if rows and rows[-1]["signature"] == signature:
            rows[-1]["last"] = col.label
            rows[-1]["series_keys"].append(list(col.key))
            continue
        warn = WARN_ONLY.get(next((c for c in codes if c in WARN_ONLY), ""), None)
        rows.append({
            "signature": signature, "framework": framework, "name": words.name(framework),
            "first": col.label, "last": col.label, "series_keys": [list(col.key)], "codes": codes,
            "code": program, "shell": shell, "missing": [{"code": c, "title": solutions[c]["title"], "how": solutions[c]["how"]} for c in missing],
            "raises": raises,
            "warn_only": ({"code": warn, "title": solutions[warn]["title"]} if warn in solutions and raises else None),
            "unsolved": [{"id": i, "title": index["sources"][i]["title"]} for i in answer["unsolved"] if not any(r["id"] == i for r in raises)],
            "unknown": [{"id": i, "title": index["sources"][i]["title"]} for i in answer["unknown"]],
            "costs": costs,
            "seeding": SEEDING_SOURCE.get(framework),
        })
    for row in rows:
        row["label"] = row["first"] if row["first"] == row["last"] else f"{row['first']}–{row['last']}"
        del row["signature"]
    return list(reversed(rows))
