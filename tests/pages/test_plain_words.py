"""Plain words: a page that uses a term of the glossary (core.lessons.glossary) defines it on the
page (a caption or a widget's hover text), in the glossary's own sentence."""
from __future__ import annotations

import re

import pytest
from helpers import assert_clean, open_page, used_in

from core.lessons import glossary

TEXT_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "latex", "text")
WIDGETS = ("radio", "selectbox", "toggle", "checkbox", "button", "number_input", "slider", "text_input",
           "text_area", "multiselect", "select_slider")
STYLE = re.compile(r"<style>.*?</style>", re.S)

VIEWS = [
    ("home", {}),
    ("attention", {}),
    ("training", {}),
    ("models", {"table": "smollm2"}),
    ("models", {"table": "minilm"}),
    ("why", {"table": "smollm2"}),
    ("why", {"table": "smollm2", "method": "patching"}),
    ("why", {"table": "smollm2", "method": "skipping"}),
    ("why", {"table": "smollm2", "method": "massive"}),
    ("hidden", {"table": "smollm2"}),
    ("hidden", {"table": "minilm"}),
]


def page_words(at) -> tuple[str, str]:
    """(what the page's body says, the hover texts of its widgets); the sidebar is left out."""
    said = [e.value for kind in TEXT_ELEMENTS for e in getattr(at.main, kind)]
    hovers = []
    for kind in WIDGETS:
        for widget in getattr(at.main, kind):
            said.append(str(getattr(widget, "label", "")))
            hovers.append(str(getattr(widget, "help", None) or ""))
    return STYLE.sub("", "\n".join(said)), "\n".join(hovers)


def undefined_terms(said: str, hovers: str) -> list[str]:
    """Terms the page uses without their glossary sentence on it (in its text or a hover)."""
    everything = said + "\n" + hovers
    sentences = [glossary.sentence(t.name) for t in glossary.TERMS]
    plain = said
    for sentence in sentences:                  # a definition's own words need no definition
        plain = plain.replace(sentence, "")
    return [t.name for t in used_in(plain) if glossary.sentence(t.name) not in everything]


@pytest.mark.parametrize("page, query", VIEWS, ids=[f"{p}-{'-'.join(q.values()) or 'default'}" for p, q in VIEWS])
def test_every_term_a_page_uses_is_defined_on_it(page, query):
    at = open_page(page, **query)
    assert_clean(at)
    said, hovers = page_words(at)
    assert undefined_terms(said, hovers) == []


def test_a_page_that_drops_a_definition_is_caught():
    said = "Each head writes into the residual stream. " + glossary.sentence("attention head")
    assert undefined_terms(said, "") == ["residual stream"]
    assert undefined_terms(said, glossary.sentence("residual stream")) == []


def test_terms_of_results_shown_after_a_button_are_defined_too():
    """Layer skipping's results say "nats": defined once they are on the page (the page without them, above,
    never showed the word; a run after another test had made them did)."""
    at = open_page("why", table="smollm2", method="skipping", stext="The cat sat on the mat.")
    if any(button.key == "why_skip_run" for button in at.button):
        at.button(key="why_skip_run").click().run()
    assert_clean(at)
    said, hovers = page_words(at)
    assert "nats" in said and undefined_terms(said, hovers) == []
