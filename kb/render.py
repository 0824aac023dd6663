"""The one Jinja environment every generated text goes through (kb/templates/).

Two escaping filters, because record text is data, never markup:
- `e` (autoescape, on for every template whose name ends in .html.j2 or .md.j2): HTML-escape.
- `md`: HTML-escape, then backslash-escape Markdown's inline syntax, for text that lands
  where Markdown is parsed (headings, list items), so `[x](y)` stays literal text.
Raw HTML blocks in the .md pages are not parsed as Markdown by Python-Markdown, so text
inside them only needs `e`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

TEMPLATES = Path(__file__).resolve().parent / "templates"
_MD_SPECIAL = "\\`*_{}[]()#+-.!|~"


def md(text: object) -> Markup:
    """Escape text for a Markdown inline context (after HTML-escaping it)."""
    html = str(escape("" if text is None else str(text)))
    html = " ".join(html.split())  # a newline could start a Markdown block
    return Markup("".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in html))


def meta_title(text: object) -> Markup:
    """A front-matter title: HTML-escaped (mkdocs puts it in <title> and the nav unescaped)."""
    return Markup(json.dumps(str(escape(" ".join(str(text).split()))), ensure_ascii=False))


def to_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2", "md.j2"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = md
    env.filters["tojson_sorted"] = to_json
    env.filters["meta_title"] = meta_title
    return env


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
