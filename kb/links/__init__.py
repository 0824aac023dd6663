"""The issues, PRs and commits of data/links.yaml: which entry a reference means, and their live state.

`resolve` (which entry a record's reference means), `state` (light: reads the machine-written
state file for `kb build`) and `refresh` (talks to the GitHub REST API through requests) are
separate modules so that building the index never imports requests.
"""
