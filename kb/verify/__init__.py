"""`kb verify`: plan, run and record empirical re-checks of the records (see verifiers/).

Nothing here is imported by `import kb` or `kb.status()`. Planning reads the compiled
index (kb/_index.py) and the verifiers' source (verifiers/discover.py), so it works
without pydantic and without importing any framework (the GPU machine has neither
pydantic nor TensorFlow); each measurement runs in a fresh child process.
"""
