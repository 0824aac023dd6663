"""Which data/links.yaml entry a record's issue, PR or commit reference means.

Lint (KB007: every such reference resolves) and the compiler (titles, states and URLs in the
index) both need the answer, so it lives below both.
"""

from __future__ import annotations

from kb import schema


def resolve(ref: schema.IssueRef | schema.CommitRef, links: list[schema.Link]) -> schema.Link | None:
    """The entry for `ref` (a commit matches on either SHA's prefix of the other), or None."""
    for link in links:
        if link.repo != ref.repo:
            continue
        if isinstance(ref, schema.CommitRef):
            if link.sha and (link.sha.startswith(ref.sha) or ref.sha.startswith(link.sha)):
                return link
        elif link.kind == ref.kind and link.number == ref.number:
            return link
    return None
