"""Text from strangers (URL, uploads, vocabularies, file and model names) shown as text.

Streamlit renders every alert, caption and markdown call as Markdown (links, images, bold,
:colour[...] directives, $LaTeX$), and Plotly renders a subset of HTML (<a href>, <b>, <br>) in
labels. These functions make such text literal, so a page can compose it into its own messages.
"""
from __future__ import annotations

import re

# CommonMark lets a backslash escape any ASCII punctuation character.
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
# GFM turns bare addresses (http://…, www.…, a@b.c) into links even when escaped, so an
# invisible word joiner is put where the address pattern would start.
_BARE_ADDRESS = re.compile(r"(?i)(https?|ftp|mailto|www|@)(?=[:.\w])")
WORD_JOINER = "\u2060"


def markdown_literal(text: object) -> str:
    """Any text -> Markdown that shows exactly that text: every ASCII punctuation mark escaped,
    line breaks folded into spaces (so no heading, list or table can start), bare web and mail
    addresses broken by an invisible word joiner (so they are not made into links)."""
    flat = _LINE_BREAKS.sub(" ", str(text))
    unlinked = _BARE_ADDRESS.sub(lambda match: match.group(1) + WORD_JOINER, flat)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", unlinked)


def html_literal(text: object) -> str:
    """Any text -> a Plotly label that shows exactly that text (no tag, no entity is rendered)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def shorten(text: object, limit: int) -> str:
    """At most `limit` characters, with an ellipsis when cut (long names in messages)."""
    text = str(text)
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
