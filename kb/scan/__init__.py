"""`kb scan`: find the calls in a code base whose results can differ run to run, before it trains.

The scanner reads source with the standard `ast` module and never imports or runs the user's
code or the frameworks. Layers, low to high: `sources` (files and notebooks to text),
`resolve` (aliases, calls and the switches a code base sets), `pins` (which framework
versions to answer for), `lookup` (calls to findings through `kb.status`), `recipe` (one
fix for the whole code base), `report_*` (text, JSON, SARIF), `run` (the whole scan), `cli`.
Not imported by `import kb`.

To add a scan rule (`kb scan` reports calls of the ops records list; SARIF names each rule
by its record id):
1. Add the op to a record's `ops:` (or write the record, `kb/catalog.py`); run `python -m kb build`.
2. Where a literal argument of the call rules the record out and the record's `calls:` cannot
   say so ("any value but this one"), add `"<record id>": (parameter, values, why)` to
   `NOT_REACHED` in `kb/scan/lookup.py`.
3. Run `python -m kb scan <a file calling the op> --versions <framework>=<version>`: the call
   is reported, and a call with a ruling-out value is not; where a fixture under
   `tests/fixtures/scan/` calls the op, add its finding to `EXPECTED` in tests/test_scan.py.
"""
