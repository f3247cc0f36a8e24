"""AppTest: the Lookup page and the app shell on toy tables."""
from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import assert_clean, figure, open_page, open_sidebar_section, plotly_array, scoped, texts, visible
from ui.keys import DISPLAY_SECTION


def x_matrix(at) -> np.ndarray:
    spec = figure(at, 0)
    return plotly_array(spec["data"][0]["z"]).astype(float)


def test_lookup_runs_clean_with_seed000_numbers():
    at = open_page("lookup")
    assert_clean(at)
    np.testing.assert_array_equal(x_matrix(at), [[0, 1, 0, 1], [1, 0, 1, 0]])
    metrics = {m.label: (m.value, m.delta) for m in at.metric}
    assert metrics["Parameters in E (V × d)"] == ("12", "3 × 4")        # the count, its factors below it
    assert metrics["Entries in X (T × d)"] == ("8", "2 × 4")
    assert any("‖E_a − E_b‖² = **1**" in m for m in texts(at.markdown))
    assert any("S @ E equals E[ids] exactly: yes" in s for s in texts(at.success))


def test_distance_between_rows_0_and_2_is_4():
    at = open_page("lookup")
    scoped(at, "selectbox", "lookup_dist_b").set_value(2).run()
    assert any("‖E_a − E_b‖² = **4**" in m for m in texts(at.markdown))


@pytest.mark.parametrize("ids, message", [
    ("7", "token id 7 is outside 0..2"), ("-1", "token id -1 is outside 0..2"),
    ("1, x", "'x' is not a token id"), ("", "no token ids given"),
    (" ".join(["1"] * 5000), "5,000 ids given"),
])
def test_bad_ids_show_an_error_and_keep_the_rest(ids, message):
    at = open_page("lookup")
    at.radio(key="lookup_mode").set_value("ids").run()
    at.text_input(key="lookup_ids").input(ids).run()
    assert_clean(at)
    assert any(message in e for e in texts(at.error)), texts(at.error)
    assert at.button(key="lookup_resize_apply")  # the rest of the page is still there


def test_unknown_word_lists_vocabulary():
    at = open_page("lookup")
    at.text_input(key="lookup_text").input("α δ").run()
    assert any("unknown word 'δ'" in e and "α, β, γ" in e for e in texts(at.error))


def test_repeated_ids_share_a_row():
    at = open_page("lookup")
    at.text_input(key="lookup_text").input("γ α γ").run()
    assert any("positions 0, 2" in i for i in texts(at.info))
    X = x_matrix(at)
    np.testing.assert_array_equal(X[0], X[2])


def test_edit_changes_every_occurrence_and_reset_restores():
    at = open_page("lookup")
    at.text_input(key="lookup_text").input("γ α γ").run()
    scoped(at, "selectbox", "lookup_edit_row").set_value(2).run()
    scoped(at, "number_input", "lookup_edit_col").set_value(1).run()
    at.number_input(key="lookup_edit_value").set_value(7.5).run()
    at.button(key="lookup_edit_apply").click().run()
    assert_clean(at)
    X = x_matrix(at)
    assert X[0, 1] == X[2, 1] == 7.5
    at.button(key="lookup_reset").click().run()
    np.testing.assert_array_equal(x_matrix(at)[0], [0, 1, 0, 1])


def test_edit_survives_a_bad_input_and_a_page_change():
    at = open_page("lookup")
    scoped(at, "selectbox", "lookup_edit_row").set_value(2).run()
    at.number_input(key="lookup_edit_value").set_value(3.0).run()
    at.button(key="lookup_edit_apply").click().run()
    at.text_input(key="lookup_text").input("nonsense").run()
    assert at.error
    at.switch_page("app_pages/geometry.py").run()
    at.switch_page("app_pages/lookup.py").run()
    assert at.text_input(key="lookup_text").value == "nonsense"
    at.text_input(key="lookup_text").input("γ").run()
    assert x_matrix(at)[0, 0] == 3.0


@pytest.mark.parametrize("kind", ["reverse", "shift", "random"])
def test_rename(kind):
    at = open_page("lookup", table="seed004")
    at.radio(key="lookup_perm").set_value(kind).run()
    assert_clean(at)
    markdown = " ".join(texts(at.markdown))
    assert "✅ lookup unchanged" in markdown
    assert "❌ positions" in markdown


def test_resize_adds_rows_and_plots_them():
    at = open_page("lookup")
    at.number_input(key="lookup_resize_n").set_value(3).run()
    at.selectbox(key="lookup_resize_method").set_value("mean").run()
    at.button(key="lookup_resize_apply").click().run()
    assert_clean(at)
    assert any("6 × 4" in c for c in texts(at.sidebar.caption))
    names = [trace.get("name") for trace in figure(at, len(at.get("plotly_chart")) - 1)["data"]]
    assert "new row" in names and "old row" in names


@pytest.mark.parametrize("table", ["seed000", "seed001-lab", "seed001-excerpt", "seed003", "seed004"])
def test_every_toy_table_on_every_page(table):
    for name in ("home", "lookup", "geometry", "attention", "models", "training"):
        at = open_page(name, table=table)
        assert_clean(at)
        assert not at.error, (table, name, texts(at.error))


def test_seed001_excerpt_ids_6_9_6():
    at = open_page("lookup", table="seed001-excerpt", mode="ids", ids="6, 9, 6")
    assert_clean(at)
    X = x_matrix(at)
    np.testing.assert_array_equal(X[0], X[2])
    assert X.shape == (3, 3)


def test_query_params_reopen_the_view():
    at = open_page("lookup", table="seed004", text="cat dog cat")
    assert at.text_input(key="lookup_text").value == "cat dog cat"
    assert at.query_params["table"] == ["seed004"] or at.query_params["table"] == "seed004"


@pytest.mark.parametrize("query, warning", [
    ({"table": "nope"}, "'nope' is not one of"),
    ({"mode": "weird"}, "'weird' is not one of"),
    ({"text": "a" * 100_000}, "the first 2,000 are used"),
])
def test_tampered_url_gets_a_warning(query, warning):
    at = open_page("lookup", **query)
    assert_clean(at)
    assert any(warning in w for w in texts(at.warning)), texts(at.warning)


def test_home_comparison_table():
    at = open_page()
    assert_clean(at)
    frame = shown_table(at)                         # one row per representation, its value first
    assert list(frame.index) == ["Token ID", "One-hot", "Token embedding", "Contextual vector"]
    assert frame.columns[0] == "This token's value"
    assert frame.loc["Token ID", "This token's value"] == "2" and frame.loc["One-hot", "This token's value"] == "[0, 0, 1]"
    scoped(at, "selectbox", "home_position").set_value(1).run()
    assert shown_table(at).loc["Token embedding", "This token's value"] == "[1, 0, 1, 0]"


def shown_table(at):
    """Home's comparison as it reads (an HTML table of literal text: Markdown escapes undone)."""
    frame = at.table[0].value.map(visible)
    frame.columns = [visible(c) for c in frame.columns]
    return frame


def test_presentation_mode_and_figure_format():
    at = open_sidebar_section(open_page(present="1"), DISPLAY_SECTION)
    assert_clean(at)
    assert at.toggle(key="present").value is True
    at.radio(key="image_format").set_value("svg").run()
    at.switch_page("app_pages/lookup.py").run()
    spec = at.get("plotly_chart")[0].proto
    assert "svg" in spec.config


def test_an_upload_opens_with_its_own_words_and_fresh_widgets():
    """A new table: the sentence comes from its vocabulary (no red 'unknown words'), and widgets
    whose options were the old table's tokens start afresh."""
    from helpers import APP, TIMEOUT
    from streamlit.testing.v1 import AppTest

    from core.tables import EmbeddingTable

    table = EmbeddingTable("mine.npy", np.arange(12.0).reshape(4, 3), ("sun", "moon", "star", "sky"), np.arange(4),
                           key="upload:mine")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("app_pages/lookup.py")
    at.run()
    scoped(at, "selectbox", "lookup_edit_row").set_value(2).run()            # 'γ' of seed 000
    at.session_state["uploads"] = {"upload:mine": table}
    at.session_state["extra_tables"] = {"upload:mine": "mine.npy (upload)"}
    at.session_state["keep_table"] = "upload:mine"               # as the sidebar's picker does
    at.run()
    assert_clean(at)
    assert not at.error, texts(at.error)
    assert at.text_input(key="lookup_text").value == "sun moon star sky"
    assert scoped(at, "selectbox", "lookup_edit_row").value == 0


def test_figures_download_under_their_own_names():
    at = open_page("lookup", table="seed004")
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"]["filename"] == "x-lookup-seed004"


def test_presentation_mode_shows_plain_tables_the_css_can_enlarge():
    projected = open_page("lookup", table="seed000", present="1")
    assert_clean(projected)
    assert len(projected.table) >= 2 and len(projected.dataframe) == 0
    normal = open_page("lookup", table="seed000")
    assert len(normal.dataframe) >= 2 and len(normal.table) == 0


def test_added_rows_obey_max_rows_and_every_action_says_what_it_did(monkeypatch):
    from core import edits

    monkeypatch.setattr(edits, "MAX_ROWS", 6)                   # seed 000 has 3 rows
    at = open_page("lookup", table="seed000")
    at.number_input(key="lookup_resize_n").set_value(2)
    at.button(key="lookup_resize_apply").click().run()
    assert any("Added 2 rows" in s and "now 5 × 4" in s for s in texts(at.success)), texts(at.success)
    at.button(key="lookup_resize_apply").click().run()          # 5 + 2 > 6
    assert_clean(at)
    assert any("Nothing was changed: the table has 5 rows: 2 more would pass the limit of 6 rows "
               "(at most 1 can be added)." in e for e in texts(at.error)), texts(at.error)
    assert any("5 × 4" in c for c in texts(at.sidebar.caption))
    assert len(at.session_state["table_operations"]["seed000"]) == 1
    at.button(key="lookup_reset").click().run()
    assert any("Reset: 2 added rows dropped; the table is the original 3 × 4 again." in s for s in texts(at.success))
    assert any("3 × 4" in c for c in texts(at.sidebar.caption))
    at.button(key="lookup_edit_apply").click().run()            # nothing typed
    assert any("Type a new value in the box" in e for e in texts(at.error))


def test_minilm_rows_a_and_b_open_on_words_of_the_text():
    """Not [PAD] / [unused0] (rows 0 and 1): 'the' and 'cat' of "[CLS] the cat is sleeping…"."""
    at = open_page("lookup", table="minilm")
    assert_clean(at)
    assert (scoped(at, "selectbox", "lookup_dist_a").value, scoped(at, "selectbox", "lookup_dist_b").value) == (1996, 4937)
