"""Ask the knowledge base about one op, or one call of it, for the version and device that ran.

Standard library only (plus `kb.status`), like the rest of the diff.
"""

from __future__ import annotations


def ask(op: str, framework: str | None, version: str | None, device: str, *, call: dict | None = None) -> dict:
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
        status = _status(kb, op, version, framework=framework, device=device, call=call, out=out)
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
    if getattr(status, "basis", None):
        out["basis"] = status.basis  # how it is known (verified, static, documented, unverified)
    if getattr(status, "depends_on_call", False):
        out["depends_on_call"] = True
    if getattr(status, "excluded", None):
        out["excluded"] = [str(e) for e in status.excluded]
    out["fixes"] = [{"code": c, "title": solutions.get(c, {}).get("title"), "snippet": solutions.get(c, {}).get("snippet")}
                    for c in (status.recipe or ())]
    return out


# The KB asked may be an older install than this package (`kb` is whichever one is importable),
# so these are the fallbacks the probe steps down to, not the KB's own list (kb/calls.py FACTS,
# which tests/test_calls.py checks they stay within): the facts the first KB with `call=` took,
# and those plus the layout the probe records.
FACTS = ("input.ndim", "input.dtype", "backend")
RECORDED_FACTS = FACTS + ("input.layout",)
KINDS = ("float", "int", "bool", "complex")


def dtype_kind(name: object) -> str | None:
    """The kind of an exact dtype name: bfloat16, float32, float8_e4m3fn -> float; int64,
    uint8 -> int; bool; complex64 -> complex; a kind is its own kind; None for anything else."""
    if not isinstance(name, str):
        return None
    if name in KINDS:
        return name
    if name.startswith("complex") or name in ("cfloat", "cdouble", "chalf"):
        return "complex"
    if name.startswith(("float", "bfloat")) or name in ("half", "double"):
        return "float"
    if name.startswith(("int", "uint")) or name in ("long", "short"):
        return "int"
    return None


def as_kinds(call: dict) -> dict:
    """The call with every exact dtype (`input.dtype`, and tensor arguments, which the probe
    writes as dtype names) as its kind: for a KB that takes dtype kinds only (its kb.status
    raises ValueError for input.dtype='bfloat16'). Other strings (`mode='bilinear'`) stay."""
    out = {}
    for key, value in call.items():
        if isinstance(value, str) and (key == "input.dtype" or value in DTYPE_NAMES):
            value = dtype_kind(value) or value
        out[key] = value
    return out


DTYPE_NAMES = frozenset({
    "float16", "float32", "float64", "bfloat16", "half", "double", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf"})
"""Exact dtype names (PyTorch's, which are also NumPy's and JAX's where they exist)."""


def _status(kb, op: str, version: str, *, framework: str | None, device: str, call: dict | None, out: dict):
    """kb.status with the call's facts. Where the KB cannot take them (a KB without call
    conditions, a parameter name its inventory does not list, an exact dtype where it takes
    only dtype kinds) it asks with fewer or coarser facts and says so in `call_used`."""
    if not call:
        return kb.status(op, version, framework=framework, device=device)
    attempts = []
    for used in (call, {k: v for k, v in call.items() if k in RECORDED_FACTS},
                 {k: v for k, v in call.items() if k in FACTS}):
        for each in (used, as_kinds(used)):  # exact dtypes first; their kinds where the KB takes only those
            if each not in attempts:
                attempts.append(each)
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
        if not answer.get("sources"):  # nothing covers the op on this release and device (issue 47)
            return f"no known source, not verified {where}"
        return f"KB has records but none covers {answer['version']}"
    basis = {"static": " (by the code read)", "verified": " (verified)"}.get(answer.get("basis", ""), "")
    return f"no known source of non-determinism {where}{basis}"
