"""`kb scan`: find the calls in a code base whose results can differ run to run, before it trains.

The scanner reads source with the standard `ast` module and never imports or runs the user's
code or the frameworks. Layers, low to high: `sources` (files and notebooks to text),
`resolve` (aliases, calls and the switches a code base sets: `syntax`, `survey`, `prepare`,
`context`, `visitor`, and the named code rules of `resolvers`), `rules` (the records' `scan:` blocks), `pins` (which framework
versions to answer for), `lookup` (calls to findings through `kb.status`), `recipe` (one
fix for the whole code base), `report_*` (text, JSON, SARIF), `run` (the whole scan), `cli`.
Not imported by `import kb`.

To add a scan rule (`kb scan` reports calls of the ops records list; SARIF names each rule
by its record id):
1. Add the op to a record's `ops:` (or write the record, `kb/catalog.py`) and say which calls it
   applies to under `calls:` (docs/calls.md).
2. What a call's literal arguments rule out or leave possible, words it must mention, a shape it
   cannot show, a condition that is in the data: the record's `scan:` block (schema.ScanRules;
   lint KB023 checks its parameters against the op's signature). What needs to read code: a
   function in `kb/scan/resolvers.py` registered with `@resolver(name, kind)` and a docstring,
   its name added to schema.SCAN_RESOLVERS and to the record's `scan.resolvers`.
3. Put a line that calls the op in a file under `tests/fixtures/scanrules/code/` with its
   expectation on the line (`# expect: <record> <level>`) and the record in that fixture's data/,
   then run `pytest tests/test_scan_rules.py`; `python -m kb build` lists the rule in docs/scan.md.
"""
