"""KB013: `caused_by` names existing source records of a library (cuDNN, cuBLAS, NCCL, Horovod).

A framework record's `caused_by` is how a user asking about `tf.nn.conv2d` learns that the
mechanism lives in cuDNN. The link is only useful if it resolves to a record whose versions
are the library's own, so it must name a library record, never another framework's record
or itself, and must not be withdrawn (a withdrawn record is not in the index).
"""

from __future__ import annotations

from kb.catalog import Catalog

CODE = "KB013"
TITLE = "causes: caused_by names an existing, current source record of a library (cudnn, cublas, nccl, horovod)"

LIBRARIES = ("cudnn", "cublas", "nccl", "horovod")


def check(catalog: Catalog) -> None:
    records = {record.id: record for record in catalog.sources.values()}
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        seen: set[str] = set()
        for index, cause in enumerate(record.caused_by):
            line = doc.line_of(("caused_by", index))
            target = records.get(cause)
            if cause in seen:
                catalog.report(path, line, CODE, f"caused_by lists {cause!r} twice", "list each cause once")
            elif cause == record.id:
                catalog.report(path, line, CODE, f"{cause!r} cannot cause itself", "name the library record underneath this one")
            elif target is None:
                known = sorted(i for i, r in records.items() if r.framework in LIBRARIES)
                catalog.report(path, line, CODE, f"caused_by names unknown record {cause!r}", f"use one of {', '.join(known) or '(no library records yet)'} or add data/sources/<library>/{cause}.yaml")
            elif target.framework not in LIBRARIES:
                catalog.report(path, line, CODE, f"caused_by names {cause!r}, a {target.framework} record, not a library record", f"caused_by points to records of {', '.join(LIBRARIES)}")
            elif target.withdrawn is not None:
                catalog.report(path, line, CODE, f"caused_by names withdrawn record {cause!r}", "point to the record that replaced it, or drop the link")
            seen.add(cause)
