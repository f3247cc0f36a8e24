"""AppTest: the Training page: lab step/undo/reset, batch gradients, the live model."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_lab_first_step_numbers():
    at = open_page("training")
    assert_clean(at)
    values = metrics(at)
    assert values["p(zamek)"] == "47.0 % → 61.0 %"
    assert values["loss = −ln p"] == "0.755 → 0.495"


def test_step_undo_reset():
    at = open_page("training")
    at.button(key="train_step").click().run()
    assert "Steps taken: **1**. The step just taken (step 1)" in " ".join(texts(at.markdown))
    assert metrics(at)["p(zamek)"] == "47.0 % → 61.0 %"               # the step just taken, not the next
    assert any(c.startswith("Next (not taken yet), with lr = 0.4: p(zamek) 61.0 % →") for c in texts(at.caption))
    assert at.query_params["tsteps"] == "1"
    at.button(key="train_step").click().run()
    assert "Steps taken: **2**" in " ".join(texts(at.markdown))
    at.button(key="train_undo").click().run()
    assert "Steps taken: **1**" in " ".join(texts(at.markdown))
    at.button(key="train_reset").click().run()
    assert "Steps taken: **0**. Next step (not taken yet)" in " ".join(texts(at.markdown))
    assert at.query_params["tsteps"] == "0"
    assert metrics(at)["p(zamek)"] == "47.0 % → 61.0 %"


def test_the_lab_steps_are_in_the_link():
    """A link's tsteps=, tlr= and ttarget= are replayed in a fresh session: the same rows, the same
    step just taken, against steps computed here."""
    import numpy as np

    from core.toy_tables import LAB_OUTPUT_TOKENS, LAB_OUTPUT_WEIGHT, seed001_lab_table
    from core.training.gradients import softmax_ce_step

    at = open_page("training")
    at.number_input(key="train_lr").set_value(0.8).run()
    at.selectbox(key="train_target").set_value(LAB_OUTPUT_TOKENS[1]).run()
    for _ in range(3):
        at.button(key="train_step").click().run()
    link = {key: value for key, value in at.query_params.items()}
    assert link["tsteps"] == "3" and link["tlr"] == "0.8" and link["ttarget"] == LAB_OUTPUT_TOKENS[1]
    shown = metrics(at)
    fresh = open_page("training", **link)
    assert_clean(fresh)
    assert "Steps taken: **3**. The step just taken (step 3), with lr = 0.8" in " ".join(texts(fresh.markdown))
    assert metrics(fresh) == shown
    lab = seed001_lab_table()
    row = lab.row_of_token("kamienny")
    x = np.asarray(lab.weight[row], dtype=np.float64)
    for _ in range(3):
        x = softmax_ce_step(x, LAB_OUTPUT_WEIGHT, 1, 0.8).x_after
    np.testing.assert_allclose(fresh.session_state["train_history"][row][-1], x)


def test_a_tampered_lab_step_count_is_said():
    at = open_page("training", tsteps="100000")
    assert_clean(at)
    assert any("'tsteps' value was not used" in w and "outside 0..50" in w for w in texts(at.warning))
    assert "Steps taken: **0**" in " ".join(texts(at.markdown))


def test_learning_rates():
    at = open_page("training")
    at.number_input(key="train_lr").set_value(0.0).run()
    assert metrics(at)["loss = −ln p"] == "0.755 → 0.755"
    at.number_input(key="train_lr").set_value(1e6).run()
    assert_clean(at)
    at.number_input(key="train_lr").set_value(-0.4).run()
    assert_clean(at)


def test_target_equal_to_input():
    at = open_page("training")
    at.selectbox(key="train_input").set_value("zamek").run()
    assert any("still only the input row moves" in i for i in texts(at.info))


def test_batch_optimizers_and_frozen():
    at = open_page("training")
    for kind in ("sgd", "momentum", "adam"):
        at.selectbox(key="train_opt").set_value(kind).run()
        assert_clean(at)
    at.number_input(key="train_wd").set_value(0.1).run()
    at.toggle(key="train_frozen").set_value(True).run()
    assert_clean(at)
    at.text_input(key="train_batch_text").input("oto").run()
    assert any("at least two tokens" in e for e in texts(at.error))


def test_live_model_trains():
    at = open_page("training")
    at.number_input(key="train_live_steps").set_value(60).run()
    at.button(key="train_live_go").click().run()
    assert_clean(at)
    assert any("Last run: 60 steps" in c for c in texts(at.caption))


def test_live_model_bad_input():
    at = open_page("training")
    at.number_input(key="train_live_steps").set_value(0).run()
    at.button(key="train_live_go").click().run()
    assert any("Steps = 0" in w for w in texts(at.warning))
    at.radio(key="train_corpus_kind").set_value("your text").run()
    at.text_area(key="train_corpus_text").input("one").run()
    at.number_input(key="train_live_steps").set_value(10).run()
    at.button(key="train_live_go").click().run()
    assert any("at least two tokens" in e for e in texts(at.error))


def test_tied_and_untied_side_by_side():
    at = open_page("training")
    at.number_input(key="train_live_steps").set_value(30).run()
    at.button(key="train_live_go").click().run()
    assert_clean(at)
    run, twin = at.session_state["train_live_run"], at.session_state["train_live_twin"]
    assert run.config.tied != twin.config.tied and run.config.seed == twin.config.seed
    comparison = next(d.value for d in at.dataframe if "output layer" in d.value.columns)
    assert len(comparison) == 2 and "0" in set(comparison["extra parameters"])
