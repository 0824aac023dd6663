"""Time bounds for the "fast, never a hang" checks on hostile input.

Why one generous number: the suite runs on every core at once (pytest-xdist), and a loaded
2-core machine stretches a 0.1 s answer past 1 s; a hang or a blow-up on hostile input still
takes far longer than this and fails. Speed itself is measured in benchmarks/, not here.
"""

BOUND_S = 5.0
