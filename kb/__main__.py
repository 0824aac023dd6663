"""`python -m kb`: the `kb` command line (kb/cli.py)."""

from kb.cli import main

raise SystemExit(main())
