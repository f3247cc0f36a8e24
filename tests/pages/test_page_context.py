"""Context & position: the contextuality view on MiniLM (built-in set, layer slider, own sentences)."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, plotly_array, texts


def test_bank_on_minilm_shows_measures_map_and_best_layer():
    at = open_page("context")
    assert_clean(at)
    assert any("whole sentence" in i for i in texts(at.info))
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    assert any("per layer" in t for t in titles) and any("PCA" in t for t in titles)
    separation = plotly_array(figure(at, 1)["data"][0]["y"])
    best = int(np.nanargmax(separation))
    tied = np.flatnonzero(separation == separation[best])          # every layer as good is named
    name = lambda i: "emb" if i == 0 else f"L{i - 1}"      # noqa: E731 (streams named as on every page)
    said = ((f"after {name(best)}**" if best else "in the embeddings (emb)**") if len(tied) == 1
            else f"at {name(tied[0])}–{name(tied[-1])}**")
    assert any(f"The senses separate best **{said}" in m for m in texts(at.markdown)), said   # not "best at at L1"
    assert list(figure(at, 1)["data"][0]["x"])[:3] == ["emb", "L0", "L1"]
    assert at.select_slider(key="ctx_layer").value == best
    at.select_slider(key="ctx_layer").set_value(0).run()
    assert_clean(at)
    assert "'bank' in the embeddings (emb)" in figure(at, 2)["layout"]["title"]["text"].replace("<br>", " ")


def test_own_sentences_missing_the_word_give_a_message_not_a_traceback():
    at = open_page("context")
    at.radio(key="ctx_set").set_value("your own").run()
    assert_clean(at)
    at.text_area[0].input("river: the bank was wet\nmoney: no word here")
    at.button[0].click().run()
    assert_clean(at)
    assert any("does not contain" in e for e in texts(at.error))
    at.text_area[0].input("river: the bank was wet\nriver: a grassy bank\nmoney: the bank was shut\nmoney: a bank loan")
    at.button[0].click().run()
    assert_clean(at)
    assert any("PCA of its 4 vectors" in figure(at, i)["layout"]["title"]["text"].replace("<br>", " ")
               for i in range(len(at.get("plotly_chart"))))


def test_induction_says_causal_only_for_minilm_and_runs_on_smollm2_behind_a_button():
    at = open_page("context")
    assert any("causal models only" in i for i in texts(at.info))
    at.radio(key="ctx_model").set_value("smollm2").run()
    assert_clean(at)
    assert any("only the tokens **before**" in i or "before" in i for i in texts(at.info))
    if any(b.key == "ctx_induction_run" for b in at.button):      # not yet made in this process
        charts = len(at.get("plotly_chart"))
        at.button(key="ctx_induction_run").click().run()
        assert_clean(at)
        assert len(at.get("plotly_chart")) == charts + 3   # rotary chart was there before the click
    first, second = (float(m.value.split()[0]) for m in at.metric[:2])
    assert second < first
    assert any("Strongest induction heads" in m for m in texts(at.markdown))


def test_positions_show_minilms_learned_table_beside_the_sinusoidal_one():
    at = open_page("context")
    assert_clean(at)
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    assert "learned: PCA of the positions" in titles and "sinusoidal: PCA of the positions" in titles
    norms = figure(at, titles.index("Norm of each position's row"))
    assert len(plotly_array(norms["data"][0]["y"])) == 128
    # MiniLM's position 0 alone took PC 1 and squeezed the other 127 into a sliver: it is left out, and said
    learned = figure(at, titles.index("learned: PCA of the positions"))["data"][0]
    assert plotly_array(learned["customdata"]).tolist() == list(range(1, 128))
    assert len(plotly_array(figure(at, titles.index("sinusoidal: PCA of the positions"))["data"][0]["x"])) == 128
    assert any(c.startswith("Left out of this PCA: position 0,") for c in texts(at.caption))


def test_a_row_far_from_the_others_is_an_outlying_position():
    from core.context.positions import outlying_positions, sinusoidal_table

    table = sinusoidal_table(64, 32)
    assert outlying_positions(table).size == 0
    table[5] += 10.0
    assert outlying_positions(table).tolist() == [5]


def test_choosing_smollm2_starts_no_work_until_its_button_and_the_link_keeps_the_choice():
    """A radio button must not start SmolLM2's ~15 s of passes: the measures wait for their
    button (the heavy-job line), then show; the model and set are in the URL."""
    at = open_page("context", cmodel="smollm2", cset="bat")
    assert_clean(at)
    assert at.radio(key="ctx_model").value == "smollm2" and at.radio(key="ctx_set").value == "bat"
    assert at.query_params["cmodel"] == "smollm2" and at.query_params["cset"] == "bat"
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    assert not any("per layer" in t for t in titles)
    at.button(key="ctx_measure").click().run()
    assert_clean(at)
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    assert any("'bat'" in t and "per layer" in t for t in titles)
