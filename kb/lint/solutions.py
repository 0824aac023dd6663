"""KB006: every solution code used is defined in data/solutions.yaml for that framework."""

from __future__ import annotations

from kb.catalog import SOLUTIONS_FILE, Catalog
from kb.lint.ranges import range_lists

CODE = "KB006"
TITLE = "solutions: codes in ranges are defined in data/solutions.yaml for the record's framework"


def check(catalog: Catalog) -> None:
    defined = {s.code: s for s in catalog.solutions}
    solutions_path = catalog.root / SOLUTIONS_FILE
    for index, solution in enumerate(catalog.solutions):
        for pos, code in enumerate(solution.implies):
            if code not in defined or code == solution.code:
                line = catalog.documents[solutions_path].line_of((index, "implies", pos))
                catalog.report(solutions_path, line, CODE, f"{solution.code} implies unknown code {code!r}", "name another code defined in this file")
    for path, record in catalog.sources.items():
        doc = catalog.documents[path]
        for loc, ranges in range_lists(record):
            for index, item in enumerate(ranges):
                for pos, code in enumerate(item.solutions):
                    line = doc.line_of(loc + (index, "solutions", pos))
                    used = defined.get(code)
                    if used is None:
                        catalog.report(path, line, CODE, f"unknown solution code {code!r}", f"use one of {', '.join(sorted(defined)) or '(none defined)'} or define it in data/solutions.yaml")
                    elif used.kind == "none":
                        catalog.report(path, line, CODE, f"{code} is not a solution", "write NS as an empty list: solutions: []")
                    elif record.framework not in used.frameworks:
                        catalog.report(path, line, CODE, f"solution {code} is not defined for {record.framework}", f"{code} applies to {', '.join(used.frameworks)}")
