"""`kb scan`: find the calls in a code base whose results can differ run to run, before it trains.

The scanner reads source with the standard `ast` module and never imports or runs the user's
code or the frameworks. Layers, low to high: `sources` (files and notebooks to text),
`resolve` (aliases, calls and the switches a code base sets), `pins` (which framework
versions to answer for), `lookup` (calls to findings through `kb.status`), `recipe` (one
fix for the whole code base), `report_*` (text, JSON, SARIF), `run` (the whole scan), `cli`.
Not imported by `import kb`.
"""
