"""A table switch gives the new table's settings (issue 31): a page opened on table A, then switched
to table B in the sidebar, shows every widget as a fresh session opened on B does. A setting whose
default or valid values come from the table (kept_widget(per_table=True)) is never the old table's:
MiniLM's "row length" indicator kept on SmolLM2 made Hidden report "0 of 10 verified"."""
from __future__ import annotations

import pytest
from helpers import assert_clean, open_page, open_sidebar_section, scoped
from ui.keys import TOURS_SECTION

KINDS = ("selectbox", "number_input", "text_input", "text_area", "toggle", "radio", "slider", "multiselect")
SIDEBAR_ONLY = {"table", "class_link_lock", "present", "image_format"}


def widget_values(at) -> dict:
    """Every keyed widget of the page (not the sidebar's) by its key, scoped keys by their name."""
    shown = {}
    for kind in KINDS:
        for widget in getattr(at.main, kind):
            if widget.key and not widget.key.startswith("FormSubmitter"):
                shown[widget.key.split("@")[0]] = widget.value
    return {key: value for key, value in shown.items() if key not in SIDEBAR_ONLY}


def switched(page: str, first: str, second: str, before=None):
    at = open_page(page, table=first)
    assert_clean(at)
    if before:
        before(at)
        assert_clean(at)
    at.selectbox(key="table").set_value(second).run()
    assert_clean(at)
    return at


def _preset_on(at):
    scoped(at, "toggle", "geo_preset_h_w").set_value(True).run()
    assert scoped(at, "toggle", "geo_preset_h_w").value


def _pct_and_refs(at):
    scoped(at, "text_input", "hid_refs").input("5, 7").run()


@pytest.mark.parametrize("page, first, second, before", [
    ("geometry", "seed003", "seed004", _preset_on),          # the seed 003 arrows preset is seed 003's
    ("attention", "seed004", "minilm", None),                # MiniLM's mask is not causal; learned positions
    ("models", "minilm", "smollm2", None),
    ("hidden", "minilm", "smollm2", _pct_and_refs),          # the indicator: row length vs PCA-removed cosine
    ("lookup", "seed004", "glove-50d", None),
    ("maps", "seed004", "minilm", None),                     # sample size, iterations, min cluster size
])
def test_a_switched_page_shows_what_a_fresh_session_on_the_new_table_shows(page, first, second, before):
    at = switched(page, first, second, before)
    fresh = open_page(page, table=second)
    assert_clean(fresh)
    got, expected = widget_values(at), widget_values(fresh)
    assert got == expected, {k: (got.get(k), expected.get(k)) for k in set(got) | set(expected)
                             if got.get(k) != expected.get(k)}


def test_hidden_on_smollm2_after_minilm_uses_smollm2s_indicator():
    at = switched("hidden", "minilm", "smollm2")
    assert scoped(at, "radio", "hid_indicator").value == "cosine_pc"
    assert at.query_params.get("indicator") in (None, "cosine_pc", ["cosine_pc"])


def test_a_tour_step_that_sets_its_table_keeps_its_own_per_table_settings():
    """A step's view (seed 003's step 2: table seed003, no positions) is that table's setting: the switch
    the step makes does not forget it; a later switch by hand does."""
    at = open_page("attention", table="seed004")                    # the positions' widget drawn on seed004
    assert scoped(at, "radio", "attn_positions").value == "sinusoidal"
    open_sidebar_section(at, TOURS_SECTION).button(key="tour_start_seed003").click().run()
    assert_clean(at)
    at.button(key="tour_next").click().run()
    at.switch_page("app_pages/attention.py").run()                  # where the browser's address now points
    assert_clean(at)
    assert at.session_state["keep_table"] == "seed003" and scoped(at, "radio", "attn_positions").value == "none"
    at.selectbox(key="table").set_value("seed004").run()
    assert scoped(at, "radio", "attn_positions").value == "sinusoidal"
