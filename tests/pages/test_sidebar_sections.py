"""The sidebar's expanders draw their contents only while open (ui.state.sidebar_section, issue 35):
closed, a page run draws none of their widgets; opened, each draws what it holds and the others stay
closed; it stays open on the next page, as a plain expander did, and a value set inside one
(presentation mode) stays when it is closed again."""
from __future__ import annotations

import pytest
from helpers import assert_clean, open_page, open_sidebar_section, texts
from ui.keys import ABOUT_SECTION, CLASS_LINK_SECTION, DISPLAY_SECTION, LOADERS_SECTION, TOURS_SECTION

SECTIONS = {     # key -> (label, what only the open section draws)
    TOURS_SECTION: ("Guided tours", lambda at: [b.key for b in at.sidebar.button if b.key.startswith("tour_start_")]),
    LOADERS_SECTION: ("Load a model or your own table", lambda at: [t.key for t in at.sidebar.text_input]),
    DISPLAY_SECTION: ("Display", lambda at: [t.key for t in at.sidebar.toggle if t.key == "present"]),
    ABOUT_SECTION: ("About this server", lambda at: [c for c in texts(at.sidebar.caption) if "Model memory" in c]),
    CLASS_LINK_SECTION: ("Copy the link for your class", lambda at: [c.value for c in at.sidebar.code]),
}


def labels(at) -> list[str]:
    return [e.label for e in at.sidebar.expander]


def test_closed_sections_draw_nothing_inside():
    at = open_page("lookup", table="seed003")
    assert_clean(at)
    assert {label for label, _ in SECTIONS.values()} <= set(labels(at))
    assert {key: inside(at) for key, (_, inside) in SECTIONS.items()} == {key: [] for key in SECTIONS}


@pytest.mark.parametrize("key", list(SECTIONS))
def test_an_opened_section_draws_its_contents_alone_on_every_page(key):
    at = open_sidebar_section(open_page("lookup", table="seed003"), key)
    assert_clean(at)
    inside = SECTIONS[key][1]
    assert inside(at), key
    at.switch_page("app_pages/geometry.py").run()
    assert_clean(at)
    assert inside(at), key                                      # still open on the next page
    others = [other for other in SECTIONS if other != key]
    assert all(not SECTIONS[other][1](at) for other in others)  # the others still closed


def test_a_setting_made_in_a_section_outlives_its_closing():
    at = open_sidebar_section(open_page("lookup", table="seed003"), DISPLAY_SECTION)
    at.toggle(key="present").set_value(True).run()
    at.session_state[f"keep_{DISPLAY_SECTION}"] = False            # closed, as a click on it does
    at.run()
    assert not SECTIONS[DISPLAY_SECTION][1](at)
    assert at.session_state["keep_present"] is True and at.query_params["present"] in ("True", ["True"])
    at = open_sidebar_section(at, DISPLAY_SECTION)
    assert at.toggle(key="present").value is True
