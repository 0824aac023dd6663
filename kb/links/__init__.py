"""GitHub link refresh: the live state of every issue, PR and commit in data/links.yaml.

`state` (light: reads the machine-written state file for `kb build`) and `refresh` (talks to
the GitHub REST API through requests) are separate modules so that building the index never
imports requests.
"""
