"""Type, then click: a value changed and applied by the same click is the value used.

AppTest sends a changed widget and a click in one run, as a browser does when the user types
and clicks without pressing Enter; arguments built in the previous run would carry old values."""
from __future__ import annotations

import numpy as np
from helpers import figure, open_page, open_sidebar_section, plotly_array, scoped, visible
from ui.keys import LOADERS_SECTION


def test_apply_edit_uses_the_value_typed_with_the_click():
    at = open_page("lookup", table="seed000")
    at.number_input(key="lookup_edit_value").set_value(9.5)
    at.button(key="lookup_edit_apply").click().run()
    assert not at.exception
    X = plotly_array(figure(at, 0)["data"][0]["z"]).astype(float)
    assert X[1, 0] == 9.5                                    # 'γ α': α is position 1


def test_apply_edit_after_choosing_another_coordinate():
    at = open_page("lookup", table="seed000")
    scoped(at, "number_input", "lookup_edit_col").set_value(1).run()
    at.number_input(key="lookup_edit_value").set_value(-3.25)
    at.button(key="lookup_edit_apply").click().run()
    X = plotly_array(figure(at, 0)["data"][0]["z"]).astype(float)
    assert X[1, 1] == -3.25 and X[1, 0] == 1.0


def test_add_rows_uses_the_count_typed_with_the_click():
    at = open_page("lookup", table="seed000")
    at.number_input(key="lookup_resize_n").set_value(5)
    at.button(key="lookup_resize_apply").click().run()
    assert not at.exception
    assert at.session_state["table_operations"]["seed000"][-1].added == 5
    assert any("8 × 4" in c.value for c in at.sidebar.caption)    # 3 rows + 5


def test_training_step_uses_the_learning_rate_typed_with_the_click():
    from core.toy_tables import LAB_OUTPUT_TOKENS, LAB_OUTPUT_WEIGHT, seed001_lab_table
    from core.training.gradients import softmax_ce_step

    at = open_page("training")
    at.number_input(key="train_lr").set_value(2.0)
    at.button(key="train_step").click().run()
    assert not at.exception
    lab = seed001_lab_table()
    row = lab.row_of_token("kamienny")
    target = LAB_OUTPUT_TOKENS.index(at.selectbox(key="train_target").value)
    expected = softmax_ce_step(np.asarray(lab.weight[row], dtype=np.float64), LAB_OUTPUT_WEIGHT, target, 2.0)
    history = at.session_state["train_history"][row]
    np.testing.assert_allclose(history[-1], expected.x_after)


def test_hub_loader_uses_the_id_typed_with_the_click():
    at = open_sidebar_section(open_page("home"), LOADERS_SECTION)
    at.text_input(key="load_hub_id").input("gpt2")
    at.button(key="load_hub_go").click().run()
    assert not at.exception
    assert any("Choose MiniLM-L6" in visible(e.value) for e in at.error), [e.value for e in at.error]   # not "type an id"
