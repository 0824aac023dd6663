"""Read, release by release, the code and binaries behind each record an operator sweep made, and write
what holds where: data/static/release-reads.yaml (machine output, never edited; run it again).

A sweep measures one release (PyTorch 2.11.0, JAX 0.11.2). Its records say only that release until
someone reads where the behaviour begins and ends. data/static/release-probes.yaml names, per record,
what must hold at a release for the record's range to extend to it:

- `file`: a file of the release, read where it ships: for PyTorch inside the release's wheel (downloaded
  with `pip download --no-deps`, the members extracted, the wheel deleted; `--wheels DIR` holds the
  extracted trees as torch-<release>/), for JAX in the repository at the release's tag (`--jax-repo`);
  `require` patterns must each match a line (their 1-based lines are kept), `forbid` patterns none;
- `alert_absent` / `alert_present`: the switch's alerts read from the release's own wheel by
  `kb verify --static` (data/runs/static-<framework>/<release>.yaml), matched by pattern;
- `docs`: an entry of use_deterministic_algorithms' docstring lists read there (`deterministic` or `raises`);
- `flag_present`: an XLA flag the release's jaxlib knows (data/runs/static-jaxlib/).

Per record the output lists every release read with what held and the lines, and the runs of releases in
which every probe held: the record's range may extend over them (basis static, citing the first and last
release read); the first release outside a run is where the code changed, with the probe that failed.

    python scripts/release_reads.py --wheels /tmp/relfiles --jax-repo /path/to/jax/.git
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kb import atomic  # noqa: E402


def key(version: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:4])


def load_yaml(path: Path):
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def static_of(framework: str) -> dict[str, dict]:
    """Release -> its static evidence (alerts, docs lists, flags) read by `kb verify --static`."""
    folder = ROOT / "data/runs" / f"static-{framework}"
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        data = load_yaml(path)
        alerts, flags, members = [], [], {}
        for wheel in data.get("wheels") or ():
            alerts += [a["name"] for a in wheel.get("alerts") or ()]
            flags += [f["name"] for f in wheel.get("flags") or ()]
            for item in (*(wheel.get("alerts") or ()), *(wheel.get("flags") or ())):
                members.setdefault(item["name"], []).extend(item.get("members") or ())
            members.setdefault("", []).append(wheel["file"])
        docs = {}
        for wheel in data.get("wheels") or ():
            for name, items in (wheel.get("docs") or {}).items():
                docs.setdefault(name, []).extend(items)
        out[str(data["release"])] = {"alerts": alerts, "flags": flags, "docs": docs, "members": members,
                                     "file": str(path.relative_to(ROOT))}
    return out


class Torch:
    """PyTorch releases: files inside each release's wheel (extracted trees under `wheels`)."""

    def __init__(self, wheels: Path) -> None:
        self.trees = {p.name.removeprefix("torch-"): p for p in wheels.glob("torch-*") if (p / "WHEEL").is_file()}

    def releases(self) -> list[str]:
        return sorted(self.trees, key=key)

    def text(self, release: str, member: str) -> str | None:
        path = self.trees[release] / member
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    def where(self, release: str) -> dict:
        wheel, digest = (self.trees[release] / "WHEEL").read_text().split()
        version = self.text(release, "torch/version.py") or ""
        commit = re.search(r"git_version\s*=\s*'([0-9a-f]{40})'", version)
        return {"repo": "pytorch/pytorch", "tag": f"v{release}", "commit": commit.group(1) if commit else None,
                "wheel": wheel, "sha256": digest}


class Git:
    """A framework's releases as the tags of its repository (a git directory `fetch` brought here)."""

    def __init__(self, repo: Path | None, name: str, prefix: str, only: set[str] | None = None) -> None:
        self.repo, self.name, self.prefix = repo, name, prefix
        tags = subprocess.run(["git", "--git-dir", str(repo), "tag"], capture_output=True, text=True).stdout.split() if repo else []
        self.tags = {t[len(prefix):]: t for t in tags
                     if t.startswith(prefix) and re.fullmatch(r"\d+\.\d+\.\d+(\.\d+)?", t[len(prefix):])}
        if only is not None:  # releases whose binary was read too (data/runs/static-<framework>/)
            self.tags = {r: t for r, t in self.tags.items() if r in only}

    def releases(self) -> list[str]:
        return sorted(self.tags, key=key)

    def text(self, release: str, path: str) -> str | None:
        done = subprocess.run(["git", "--git-dir", str(self.repo), "show", f"{self.tags[release]}:{path}"],
                              capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    def where(self, release: str) -> dict:
        commit = subprocess.run(["git", "--git-dir", str(self.repo), "rev-list", "-n", "1", self.tags[release]],
                                capture_output=True, text=True).stdout.strip()
        return {"repo": self.name, "tag": self.tags[release], "commit": commit or None}


def probe_file(source, release: str, probe: dict) -> tuple[bool, dict]:
    member = probe.get("member") or probe["path"]
    text = source.text(release, member)
    if text is None:
        return False, {"file": member, "why": "not in this release"}
    lines = text.splitlines()
    found = []
    for pattern in probe.get("require") or ():
        last = pattern.startswith("LAST:")  # the last matching line, not the first
        rx = re.compile(pattern[5:] if last else pattern)
        hits = [n for n, line in enumerate(lines, start=1) if rx.search(line)]
        hit = (hits[-1] if last else hits[0]) if hits else None
        if hit is None:
            return False, {"file": member, "why": f"no line matches {pattern!r}"}
        found.append(hit)
    for pattern in probe.get("forbid") or ():
        rx = re.compile(pattern)
        hit = next((n for n, line in enumerate(lines, start=1) if rx.search(line)), None)
        if hit is not None:
            return False, {"file": member, "why": f"line {hit} matches {pattern!r}: {lines[hit - 1].strip()[:160]}"}
    return True, {"file": member, "lines": found}


def probe_static(static: dict | None, probe: dict) -> tuple[bool, dict]:
    if static is None:
        return False, {"why": "no static evidence read for this release"}
    if "alert_absent" in probe:
        rx = re.compile(probe["alert_absent"])
        hits = [a for a in static["alerts"] if rx.search(a)]
        return (not hits), ({"alerts": "none match " + probe["alert_absent"], "file": static["file"],
                              "wheel": static["members"].get("", [""])[0]} if not hits
                            else {"why": f"alert present: {hits[0]}", "file": static["file"]})
    if "alert_present" in probe:
        rx = re.compile(probe["alert_present"])
        hits = [a for a in static["alerts"] if rx.search(a)]
        return bool(hits), ({"alerts": hits, "file": static["file"], "members": sorted({m for h in hits for m in static["members"].get(h, ())})} if hits
                            else {"why": "no alert matches " + probe["alert_present"], "file": static["file"]})
    if "docs" in probe:
        name, pattern = probe["docs"]["list"], re.compile(probe["docs"]["entry"])
        hits = [e for e in static["docs"].get(name, ()) if pattern.search(e)]
        return bool(hits), ({"docs": {name: hits}, "file": static["file"], "members": ["torch/__init__.py"]} if hits
                            else {"why": f"the docstring's {name} list has no entry matching {probe['docs']['entry']!r}",
                                  "file": static["file"]})
    if "flag_present" in probe:
        rx = re.compile(probe["flag_present"])
        hits = sorted({f for f in static["flags"] if rx.search(f)})
        return bool(hits), ({"flags": hits, "file": static["file"], "members": sorted({m for h in hits for m in static["members"].get(h, ())})} if hits
                            else {"why": "no flag matches " + probe["flag_present"], "file": static["file"]})
    raise ValueError(f"unknown probe {probe}")


def read_record(spec: dict, source, statics: dict[str, dict[str, dict]]) -> dict:
    releases = []
    for release in source.releases():
        if spec.get("from") and key(release) < key(spec["from"]):
            continue
        held, details = True, []
        for probe in spec["probes"]:
            if "path" in probe or "member" in probe:
                ok, found = probe_file(source, release, probe)
            else:
                static_framework = probe.get("static", spec["framework"])
                static_release = release if static_framework != "jaxlib" else release
                ok, found = probe_static(statics.get(static_framework, {}).get(static_release), probe)
            found["holds"] = ok
            found["probe"] = probe.get("what", "")
            details.append(found)
            held = held and ok
        releases.append({"release": release, **source.where(release), "holds": held, "probes": details})
    runs, current = [], []
    for item in releases:
        if item["holds"]:
            current.append(item["release"])
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    changes = []
    for before, after in zip(releases, releases[1:]):
        if before["holds"] != after["holds"]:
            failed = next((p for p in (after if not after["holds"] else before)["probes"] if not p["holds"]), {})
            changes.append({"between": f"{before['release']} and {after['release']}",
                            "holds_from": after["release"] if after["holds"] else None,
                            "stops_at": after["release"] if not after["holds"] else None,
                            "why": f"{failed.get('probe', '')}: {failed.get('why', '')}".strip(": ")})
    return {"record": spec["record"], "part": spec.get("part"), "framework": spec["framework"], "swept": spec["swept"],
            "claim": spec["claim"],
            "runs": [{"first": r[0], "last": r[-1], "releases": r} for r in runs], "changes": changes,
            "releases": releases}


def _minor(release: str) -> str:
    return ".".join(release.split(".")[:2])


def _reads(framework: str, item: dict, spec_probes: list[dict]) -> list[dict]:
    """CodeRead entries (kb/schema.py) for one release's probes."""
    out = []
    for probe, found in zip(spec_probes, item["probes"]):
        base = {"release": item["release"], "repo": item["repo"], "tag": item["tag"]}
        if item.get("commit"):
            base["commit"] = item["commit"]
        if "path" in probe or "member" in probe:
            read = {**base, "path": probe.get("path") or probe["member"]}
            if probe.get("member"):
                read["member"] = probe["member"]
            read["lines"] = found.get("lines", [])
            read["what"] = probe["what"]
        else:
            # Alerts live in the CUDA library (the static pass reads every libtorch*.so), the docstring lists
            # in torch/__init__.py (use_deterministic_algorithms), the XLA flags in the jaxlib libraries.
            member = (found.get("members") or ["torch/lib/libtorch_cuda.so"])[0]
            repo = "openxla/xla" if probe.get("static") == "jaxlib" else item["repo"]
            detail = (f"found: {', '.join(found['alerts'])}" if isinstance(found.get("alerts"), list)
                      else f"found: {', '.join(found['flags'])}" if found.get("flags")
                      else "found in the docstring" if found.get("docs") else "none found")
            read = {**base, "repo": repo, "path": member, "member": member,
                    "what": f"{probe['what']} (read in the {item['release']} wheel: {detail})"}
            if repo != item["repo"]:
                read.pop("commit", None)
                read["tag"] = f"jaxlib {item['release']}" if probe.get("static") == "jaxlib" else item["tag"]
        out.append(read)
    return out


def propose(result: dict, spec: dict) -> list[dict]:
    """Ranges (kb/schema.py Range fields, without the claim's own solutions) for each run of releases in
    which every probe held, less the swept range (`swept_range`, the record's own); each citing the first
    and last release read. A PyTorch range starts at its first release's minor series (each .0 wheel was
    read), a JAX or Keras range at the release itself."""
    from kb.versions import compile_range, release_key

    lo_key, hi_key = compile_range(spec["swept_range"])
    lo_text = ".".join(str(part) for part in lo_key[1:])  # keys are (epoch, release parts without trailing zeros)
    out = []
    by_release = {item["release"]: item for item in result["releases"]}
    for run in result["runs"]:
        before = [r for r in run["releases"] if release_key(r) < lo_key]
        after = [r for r in run["releases"] if hi_key is not None and release_key(r) >= hi_key]
        for part, where in ((before, "before"), (after, "after")):
            if not part:
                continue
            first = _minor(part[0]) if result["framework"] == "pytorch" else part[0]
            reaches = where == "before" and run["releases"][-1] != part[-1]  # the run goes on into the swept range
            hi = f"<{lo_text}" if reaches else f"<={part[-1]}"
            reads = _reads(result["framework"], by_release[part[0]], spec["probes"])
            if part[-1] != part[0]:
                reads += _reads(result["framework"], by_release[part[-1]], spec["probes"])
            out.append({"versions": f">={first},{hi}", "releases": part, "read": reads})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="extracted PyTorch wheel trees: torch-<release>/")
    parser.add_argument("--jax-repo", type=Path, help="git directory of jax-ml/jax (its tags are read)")
    parser.add_argument("--keras-repo", type=Path, help="git directory of keras-team/keras (its tags are read)")
    parser.add_argument("--only", action="append", default=[], help="record ids to read (default: all)")
    args = parser.parse_args()
    import yaml

    specs = load_yaml(ROOT / "data/static/release-probes.yaml")
    statics = {fw: static_of(fw) for fw in ("pytorch", "jaxlib")}
    sources = {"pytorch": Torch(args.wheels), "jax": Git(args.jax_repo, "jax-ml/jax", "jax-v", set(statics["jaxlib"])),
               "keras": Git(args.keras_repo, "keras-team/keras", "v")}
    out = []
    for spec in specs:
        if args.only and spec["record"] not in args.only:
            continue
        result = read_record(spec, sources[spec["framework"]], statics)
        result["proposed"] = propose(result, spec)
        out.append(result)
        runs = ", ".join(f"{r['first']}..{r['last']}" for r in result["runs"]) or "none"
        print(f"{spec['record']}{'#' + spec['part'] if spec.get('part') else ''}: holds {runs}; " + "; ".join(f"{c['between']}: {c['why']}" for c in result["changes"]),
              file=sys.stderr)

    class _NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True

    target = ROOT / "data/static/release-reads.yaml"
    previous = load_yaml(target) if target.is_file() and args.only else None
    if previous:  # a partial read keeps the other records' results
        done = {(r["record"], r.get("part")) for r in out}
        out = [r for r in previous["records"] if (r["record"], r.get("part")) not in done] + out
    body = {"generated_by": "scripts/release_reads.py",
            "records": sorted(out, key=lambda r: (r["record"], r.get("part") or ""))}
    atomic.write_atomic(target, yaml.dump(body, Dumper=_NoAliases, sort_keys=False, width=110))
    return 0


if __name__ == "__main__":
    sys.exit(main())
