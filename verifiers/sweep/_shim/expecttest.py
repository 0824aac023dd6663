"""Stand-in for the `expecttest` test helper, used only when it is not installed.

torch.testing._internal.common_utils subclasses `expecttest.TestCase`; the sweep imports that
module for the operator catalog (op_db) and never runs its tests, so a plain TestCase suffices.
"""

import unittest


class TestCase(unittest.TestCase):
    pass
