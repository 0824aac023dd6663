"""The generated documentation: site pages, static JSON API, README status section.

Nothing is imported here on purpose: Jinja and the page builders load only when `kb build`
or `kb site` asks for them, never on the `import kb` / `kb.status()` path.
"""
