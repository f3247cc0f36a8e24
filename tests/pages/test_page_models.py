"""Model attention: every layer and head from one forward pass per text, shared with Home."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, plotly_array, scoped, texts

TEXT = "Counting forward passes of this sentence"


def counting_runs(monkeypatch) -> list[tuple[int, ...]]:
    """Every forward pass the app makes, by token ids."""
    import core.models.loading.pretrained as pretrained
    from ui import cached

    cached.model_run.clear()
    cached.model_divergence.clear()      # its two sentences are runs too, maybe cached by an earlier test
    calls: list[tuple[int, ...]] = []
    original = pretrained.run_model

    def counted(module, ids, with_logits):
        calls.append(tuple(ids))
        return original(module, ids, with_logits)

    monkeypatch.setattr(pretrained, "run_model", counted)
    return calls


def test_one_forward_pass_per_text(monkeypatch):
    calls = counting_runs(monkeypatch)
    at = open_page("models", table="smollm2", text=TEXT)
    assert_clean(at)
    at.number_input(key="attn_layer").set_value(3).run()        # another map of the same run
    assert_clean(at)
    home = open_page("home", table="smollm2", text=TEXT)        # another page, the same text
    assert_clean(home)
    main_text = [ids for ids in calls if len(ids) == len(calls[0])]
    assert len(main_text) == 1 and calls.count(calls[0]) == 1, calls
    # the two sentences of the static-vs-contextual section are their own texts: one pass each
    assert len(calls) == 3


def test_grid_and_chosen_map_are_the_model_s_attentions():
    from ui import cached

    at = open_page("models", table="minilm", text="The river bank", layer="2", head="5")
    assert_clean(at)
    model = cached.loaded_model("minilm")
    attentions = model.run(model.encode("The river bank")).attentions       # (L, H, T, T)
    shown = plotly_array(figure(at, 1)["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(shown, attentions[2, 5], atol=1e-6)
    assert any("bidirectional" in text for text in texts(at.markdown))


def test_output_scores_say_which_position():
    at = open_page("models", table="smollm2", text="The capital of France is")
    assert_clean(at)
    assert any("last position" in caption and "is" in caption for caption in texts(at.caption))
    scores = next(frame.value for frame in at.dataframe if "logit h·w" in frame.value.columns)
    assert len(scores) == 10


def test_a_table_without_layers_offers_the_models():
    at = open_page("models", table="seed000")
    assert_clean(at)
    assert [button.label for button in at.button][:2] == ["MiniLM-L6 (BERT WordPiece, 30522 × 384)",
                                                        "SmolLM2-135M (Llama, causal, 49152 × 576)"]
    at.button[0].click().run()
    assert at.session_state["keep_table"] == "minilm"


def test_a_layer_range_from_the_url_and_the_sink_left_out():
    at = open_page("models", table="smollm2", text="The cat sat on the mat", layers="20-29", sinkless="True")
    assert_clean(at)
    grid = figure(at, 0)
    assert grid["layout"]["yaxis"]["ticktext"] == [f"L{layer}" for layer in range(20, 30)]
    assert "first key left out" in grid["layout"]["title"]["text"].replace("<br>", " ")
    heads = figure(at, 2)
    assert heads["data"][0]["y"] == [f"L{layer}" for layer in range(20, 30)]
    assert at.slider(key="models_layers").value == (20, 29)


def test_head_summaries_can_be_coloured_by_each_metric():
    from core.models.heads import HEAD_METRICS

    at = open_page("models", table="minilm", text="The river bank was muddy")
    for metric in HEAD_METRICS:
        at.radio(key="models_metric").set_value(metric).run()
        assert_clean(at)
        assert any(HEAD_METRICS[metric] in str(frame.value.columns[-1]) for frame in at.dataframe)


def test_lens_and_ablation_on_a_causal_model():
    at = open_page("models", table="smollm2", text="The capital of France is Paris")
    assert_clean(at)
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    assert any(t.startswith("Top-1 next token after each layer") for t in titles)
    assert any("after position 4" in t and "Paris" in t for t in titles)
    at.number_input(key="models_ablate_layer").set_value(0).run()
    loss = next(m for m in at.metric if m.label.startswith("Loss, "))
    before, after = (float(v) for v in loss.value.split(" → "))
    assert after > before                                   # every head of layer 0 off hurts
    scoped(at, "selectbox", "models_ablate_head").set_value(3).run()
    assert any("layer 0, head 3 off" in m.label for m in at.metric)


def test_a_later_steps_ablation_waits_with_its_bars():
    """Inside SmolLM2, step 1 (the lens): its page also switches layer 0's heads off; step 2 asks whether the
    loss rises. The loss and the bars that show it wait, said, until step 2's question is answered."""
    at = open_page("models", tour="inside", tstep="0")
    assert_clean(at)
    titles = lambda: [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ")  # noqa: E731
                      for i in range(len(at.get("plotly_chart")))]
    assert not any(m.label.startswith("Loss, ") for m in at.metric)
    assert not any("every head off" in t for t in titles()), titles()
    assert any("until step 2 of the tour asks: With every head of layer 0 off" in c for c in texts(at.caption))
    at.session_state["tour_answers"] = {("inside", "ablate_layer0"): "rises"}
    at.run()
    assert any(m.label.startswith("Loss, ") for m in at.metric)
    assert any("every head off" in t for t in titles())


def test_ranking_every_head_shows_a_grid_once_computed():
    at = open_page("models", table="smollm2", text="A short text to rank")
    at.button(key="models_rank_heads").click().run()
    assert_clean(at)
    titles = [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]
    assert any(t.startswith("Rise of the text's loss") for t in titles)
    grid = figure(at, next(i for i, t in enumerate(titles) if t.startswith("Rise of the text's loss")))
    rises = plotly_array(grid["data"][0]["z"])                                  # (L, H) as drawn
    table = next(d.value for d in at.dataframe if "loss rise" in d.value.columns)
    assert list(table.columns) == ["layer", "head", "loss rise", "rank"]
    assert list(table["rank"]) == list(range(1, 16))
    order = np.argsort(-rises, axis=None, kind="stable")[:15]                  # the grid's 15 largest, in order
    assert list(zip(table["layer"], table["head"])) == [tuple(map(int, np.unravel_index(i, rises.shape)))
                                                         for i in order]
    np.testing.assert_array_equal(table["loss rise"].to_numpy(), rises.ravel()[order])   # the same numbers
    assert np.all(np.diff(table["loss rise"].to_numpy()) <= 0)
    again = open_page("models", table="smollm2", text="A short text to rank")   # another session: shared
    assert any(figure(again, i)["layout"]["title"]["text"].startswith("Rise of the text's loss")
               for i in range(len(again.get("plotly_chart"))))


def test_an_encoder_says_why_it_has_no_lens_and_no_ablation():
    at = open_page("models", table="minilm", text="The river bank")
    assert_clean(at)
    infos = texts(at.info)
    assert any("nothing to read after each layer" in i for i in infos)
    assert any("no loss to compare" in i for i in infos)


def test_the_url_keeps_the_inside_view():
    at = open_page("models", table="smollm2", text="The capital of France is Paris", alayer="3", ahead="5", lpos="2")
    assert_clean(at)
    assert any("layer 3, head 5 off" in m.label for m in at.metric)
    assert scoped(at, "selectbox", "models_lens_position").value == 2
    assert at.query_params["alayer"] == "3" and at.query_params["ahead"] == "5"
    bad = open_page("models", table="smollm2", text="The capital of France is Paris", ahead="12")
    assert_clean(bad)
    assert any("'12' is not one of" in w for w in texts(bad.warning))
