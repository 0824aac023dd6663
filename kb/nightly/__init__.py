"""`kb nightly`: re-verify, refresh links, rebuild, and report what changed since the last night.

Modules: `env` (what this machine has), `compare` (run files against their predecessors),
`report` (Markdown and JSON), `run` (the steps), `cli` (arguments and exit codes).
"""
