"""Which codes to apply: every code that fixes at least one source (`union`), and a smallest
set that fixes them all (`smallest_cover`, the recipe), each in the order a user applies them."""

from kb.query.state import memo

MAX_EXACT = 12
"""Exhaustive search over at most this many candidate codes (2^12 subsets); beyond it (a whole
code base's findings, `kb scan`) the cover is greedy: most needs covered first."""

_unions: dict[tuple, tuple[str, ...]] = memo()
_recipes: dict[tuple, tuple[str, ...]] = memo()


def union(needs: list[frozenset[str]], idx: dict) -> tuple[str, ...]:
    """Every code that fixes at least one source, in the order a user applies them."""
    memo_key = tuple(needs)
    found = _unions.get(memo_key)
    if found is None:
        order = idx["order"]
        found = _unions[memo_key] = tuple(sorted(set().union(*needs), key=order.index))
    return found


def recipe(needs: list[frozenset[str]], idx: dict) -> tuple[str, ...]:
    """`smallest_cover` of the index's solutions, memoized per set of needs."""
    memo_key = tuple(needs)
    found = _recipes.get(memo_key)
    if found is None:
        found = _recipes[memo_key] = smallest_cover(needs, idx["solutions"], idx["order"])
    return found


def _combinations(items: list, size: int):
    """itertools.combinations(items, size), in its order (itertools costs start-up time)."""
    n = len(items)
    if size > n:
        return
    indices = list(range(size))
    yield tuple(items[i] for i in indices)
    while True:
        for i in reversed(range(size)):
            if indices[i] != i + n - size:
                break
        else:
            return
        indices[i] += 1
        for j in range(i + 1, size):
            indices[j] = indices[j - 1] + 1
        yield tuple(items[i] for i in indices)


def smallest_cover(needs: list[frozenset[str]], solutions: dict, order: tuple[str, ...]) -> tuple[str, ...]:
    """Fewest codes such that every need holds one of them or one they imply; ties go to the
    lower total preference; the codes come in the order a user applies them."""
    codes = sorted(set().union(*needs)) if needs else []
    if len(codes) > MAX_EXACT:
        chosen: list[str] = []
        left = list(needs)
        while left:
            best_code = max(codes, key=lambda c: (sum(1 for n in left if c in n or n & set(solutions[c]["implies"])),
                                                  -solutions[c]["preference"]))
            chosen.append(best_code)
            covered = {best_code, *solutions[best_code]["implies"]}
            left = [n for n in left if not n & covered]
        return tuple(sorted(chosen, key=order.index))
    for size in range(0, len(codes) + 1):
        best = None
        for combo in _combinations(codes, size):
            covered = set(combo)
            for code in combo:
                covered.update(solutions[code]["implies"])
            if all(need & covered for need in needs):
                rank = (sum(solutions[c]["preference"] for c in combo), combo)
                if best is None or rank < best:
                    best = rank
        if best is not None:
            return tuple(sorted(best[1], key=order.index))
    return ()  # unreachable: every need is non-empty, so all codes together cover them
