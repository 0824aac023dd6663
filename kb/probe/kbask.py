"""Ask the knowledge base about one op, or one call of it, for the version and device that ran.

Standard library only (plus `kb.status`), like the rest of the diff.
"""

from __future__ import annotations


def ask(op: str, framework: str | None, version: str | None, device: str, call: dict | None = None) -> dict:
    """Ask the knowledge base about one op (one call of it, with `call`'s facts); an unknown
    name is "no KB record", not an error."""
    import kb
    from kb.query import index

    out: dict = {"op": op, "framework": framework, "version": version, "device": device, "known": False}
    if call is not None:
        out["call"] = call
    if not version:
        out["note"] = "framework version not recorded"
        return out
    try:
        status = _status(kb, op, version, framework, device, call, out)
    except kb.UnknownOpError:
        out["note"] = "no KB record"
        return out
    except ValueError as exc:
        out["note"] = f"no KB answer: {exc}"
        return out
    solutions = index().get("solutions", {})
    out.update(known=bool(status.sources), deterministic=status.deterministic,
               recipe=list(status.recipe) if status.recipe is not None else None,
               sources=[s.id for s in status.sources])
    if getattr(status, "depends_on_call", False):
        out["depends_on_call"] = True
    if getattr(status, "excluded", None):
        out["excluded"] = [str(e) for e in status.excluded]
    out["fixes"] = [{"code": c, "title": solutions.get(c, {}).get("title"), "snippet": solutions.get(c, {}).get("snippet")}
                    for c in (status.recipe or ())]
    return out


FACTS = ("input.ndim", "input.dtype", "backend")
RECORDED_FACTS = FACTS + ("input.layout",)  # recorded by the probe; asked where the KB takes them


def _status(kb, op: str, version: str, framework: str | None, device: str, call: dict | None, out: dict):
    """kb.status with the call's facts. Where the KB cannot take them (a KB without call
    conditions, or a parameter name its inventory does not list) it asks with fewer and
    says so in `call_used`."""
    if not call:
        return kb.status(op, version, framework=framework, device=device)
    attempts = []
    for used in (call, {k: v for k, v in call.items() if k in RECORDED_FACTS},
                 {k: v for k, v in call.items() if k in FACTS}):
        if used not in attempts:
            attempts.append(used)
    for used in attempts:
        try:
            status = kb.status(op, version, framework=framework, device=device, call=used)
        except TypeError:  # this KB's status() has no call= yet
            out["call_used"] = None
            return kb.status(op, version, framework=framework, device=device)
        except kb.UnknownOpError:
            raise
        except ValueError as exc:
            out.setdefault("call_rejected", str(exc))
            continue
        out["call_used"] = used
        return status
    out["call_used"] = None
    return kb.status(op, version, framework=framework, device=device)


def verdict(answer: dict) -> str:
    where = f"on {answer['device'].upper()} in {answer['version']}"
    if not answer.get("known") and "deterministic" not in answer:
        return answer.get("note", "no KB record")
    if answer.get("deterministic") is False:
        text = f"not deterministic {where}"
        if answer.get("fixes"):
            text += "; fix: " + " + ".join(f"{f['code']} ({f['title']})" if f.get("title") else f["code"] for f in answer["fixes"])
        elif answer.get("recipe") is None:
            text += "; no known fix in this version"
        return text
    if answer.get("deterministic") is None:
        return f"KB has records but none covers {answer['version']}"
    return f"no known source of non-determinism {where}"
