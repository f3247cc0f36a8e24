"""Model attention: every layer and head from one forward pass per text, shared with Home."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, plotly_array, texts

TEXT = "Counting forward passes of this sentence"


def counting_runs(monkeypatch) -> list[tuple[int, ...]]:
    """Every forward pass the app makes, by token ids."""
    import core.models.pretrained as pretrained
    from ui import cached

    cached.model_run.clear()
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
