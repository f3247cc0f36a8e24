"""Why this prediction: direct logit attribution, activation patching and layer skipping on SmolLM2,
from deep links, with the values the figures show checked against core's results."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import APP, assert_clean, figure, open_page, plotly_array, texts

SLOW = 600   # s: a page that patches a model may take minutes on a loaded 2-core machine


def open_slow(page: str, **query):
    """open_page with room for a patching run (helpers.open_page allows 120 s)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=SLOW)
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    return at


def titles(at) -> list[str]:
    return [figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart")))]


def offered(at, key: str) -> None:
    """Click the heavy job's button when the result is not made yet (another test may have made it:
    then it shows at once, without a button)."""
    if any(button.key == key for button in at.button):
        at.button(key=key).click().run()
        assert_clean(at)


def test_attribution_of_the_top_guess_from_a_link():
    from core.models.attribution import direct_attribution
    from ui import cached

    at = open_page("why", table="smollm2", text="The capital of France is")
    assert_clean(at)
    assert any("'ĠParis'" in t for t in titles(at))
    model = cached.loaded_model("smollm2")
    expected = direct_attribution(model, model.encode("The capital of France is"))
    grid = plotly_array(figure(at, 1)["data"][0]["z"]).astype(float)          # (L, H + 1)
    # float32 parts of logits of size ~10: the page's run and this one may use different torch thread
    # counts (ablation sets its own thread's), so their sums are ordered differently: ~1e-6 absolute
    tolerance = dict(rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(grid[:, :-1], expected.heads, **tolerance)
    np.testing.assert_allclose(grid[:, -1], expected.mlps, **tolerance)
    # each layer's heads and MLP together: what the tour asks "which layer writes most" of (a sum of 10 cells)
    per_layer = plotly_array(figure(at, 2)["data"][0]["y"]).astype(float)
    np.testing.assert_allclose(per_layer, expected.heads.sum(axis=1) + expected.mlps, **tolerance)
    sums = {m.label: m.value for m in at.metric}
    assert float(sums["Sum of all parts"]) == round(expected.total, 3)
    assert any("frozen at this run's value" in t for t in texts(at.markdown))


def test_a_chosen_token_minus_another_is_kept_in_the_url():
    at = open_page("why", table="smollm2", text="The capital of France is", token="7042", versus="260")
    assert_clean(at)
    assert any("'ĠParis − Ġthe'" in t for t in titles(at))
    assert at.query_params["token"] == "7042" and at.query_params["versus"] == "260"
    at.text_input(key="why_text").set_value("The capital of Italy is").run()      # a new text: its own top guess
    assert_clean(at)
    assert at.selectbox(key="why_token").value == "top" and any("'ĠRome'" in t for t in titles(at))


def test_tampered_links_and_models_without_a_next_token():
    bad = open_page("why", table="smollm2", method="magic", token="99999999")
    assert_clean(bad)
    warnings = texts(bad.warning)
    assert any("'magic' is not one of" in w for w in warnings)
    assert any("99999999 is outside 0..49151" in w for w in warnings)
    encoder = open_page("why", table="minilm")
    assert_clean(encoder)
    assert any("no output layer" in i for i in texts(encoder.info))
    encoder.button(key="why_pick_smollm2").click().run()
    assert encoder.session_state["keep_table"] == "smollm2"


def test_patching_a_pair_from_a_link_shares_its_grid():
    pair = dict(clean="The capital of France is", corrupt="The capital of Italy is")
    at = open_slow("why", table="smollm2", method="patching", **pair)
    assert_clean(at)
    at.button(key="why_patch_run").click().run()
    assert_clean(at)
    at.button(key="why_patch_heads_run").click().run()       # choosing a layer never starts its heads' patching
    assert_clean(at)
    grid = figure(at, 0)
    assert "'ĠParis' vs 'ĠRome'" in grid["layout"]["title"]["text"].replace("<br>", " ")
    shown = plotly_array(grid["data"][0]["z"]).astype(float)
    assert shown.shape == (30, 5)                         # core's grid is checked in tests/unit/test_patching.py
    np.testing.assert_allclose(shown[:, :3], 0.0, atol=1e-4)           # the same tokens and past: nothing changes
    assert abs(shown[0, 3] - 1.0) < 1e-4                               # France at layer 0: the clean run
    heads = plotly_array(figure(at, 1)["data"][0]["z"]).astype(float)   # layer 29's heads by default
    assert heads.shape == (9, 5) and "Heads of layer 29" in figure(at, 1)["layout"]["title"]["text"].replace("<br>", " ")
    np.testing.assert_allclose(heads[:, :3], 0.0, atol=1e-4)
    again = open_slow("why", table="smollm2", method="patching", pcolour="probability", player="3", **pair)   # shared
    assert_clean(again)
    assert not again.get("plotly_chart")[1:] and again.button(key="why_patch_heads_run")      # layer 3: asked for
    again.button(key="why_patch_heads_run").click().run()
    assert "p(clean answer)" in figure(again, 0)["layout"]["title"]["text"].replace("<br>", " ")
    assert "Heads of layer 3" in figure(again, 1)["layout"]["title"]["text"].replace("<br>", " ")


def test_patching_refuses_texts_of_different_lengths():
    at = open_page("why", table="smollm2", method="patching", clean="The capital of France is",
                   corrupt="The capital city of Italy is")
    assert_clean(at)
    assert any("the same number of tokens" in e for e in texts(at.error))
    assert not at.get("plotly_chart")


def test_layer_skipping_from_a_link():
    at = open_page("why", table="smollm2", method="skipping", stext="The cat sat on the mat.", slayer="11")
    assert_clean(at)
    offered(at, "why_skip_run")
    rises = plotly_array(figure(at, 0)["data"][0]["y"]).astype(float)
    assert rises.shape == (30,) and rises[0] > 5                      # without layer 0 nothing works
    loss = next(m for m in at.metric if m.label == "Loss with layer 11 skipped")
    before, after = (float(v) for v in loss.value.split(" → "))
    assert after - before == pytest.approx(rises[11], abs=2e-3)
    assert "layer 11 skipped" in figure(at, 1)["layout"]["title"]["text"].replace("<br>", " ")
    assert at.query_params["slayer"] == "11"


def test_strangers_text_stays_text():
    payload = "**b** [x](http://127.0.0.1:9/)"
    at = open_page("why", table="smollm2", text=payload)
    assert_clean(at)
    bodies = [e.value for kind in ("markdown", "caption", "error", "warning", "info") for e in getattr(at, kind)]
    assert bodies and not any("[x](http" in body or "**b**" in body for body in bodies)   # escaped: \[x\]\(http
    assert any(figure(at, i)["layout"]["title"]["text"].replace("<br>", " ") for i in range(len(at.get("plotly_chart"))))


def test_patching_refuses_texts_with_the_same_answer():
    at = open_page("why", table="smollm2", method="patching", clean="The capital of France is",
                   corrupt="The capital of France was")
    assert_clean(at)
    assert any("top next token is ĠParis" in e for e in texts(at.error))


def test_massive_activations_and_the_intervention_from_a_link():
    from core.models.massive import intervene, massive_activations
    from ui import cached

    text = "The Eiffel Tower is located in the city of Paris, the capital of France."
    at = open_page("why", table="smollm2", method="massive", mtext=text)
    assert_clean(at)
    offered(at, "why_mass_run")
    fig = figure(at, 0)
    assert "sink share" in fig["layout"]["title"]["text"].replace("<br>", " ")
    model = cached.loaded_model("smollm2")
    run = model.run(model.encode(text))
    stats = massive_activations(run, model.layers)
    shown = plotly_array(fig["data"][0]["z"]).astype(float)                  # (L, T) log10 of the ratio
    np.testing.assert_allclose(shown, np.log10(np.maximum(stats.ratio, 1.0)), rtol=1e-6)
    sink = plotly_array(fig["data"][-1]["x"]).astype(float)
    np.testing.assert_allclose(sink, stats.sink, rtol=1e-6)
    losses = {m.label: float(m.value) for m in at.metric if m.label.startswith("Loss")}
    assert at.number_input(key="why_mass_layer").value == stats.appearing_layer() == 12
    # the page's numbers are core's (tests/unit/test_massive.py checks core against hooks)
    expected = intervene(model, run, 12, [(0, 507)], {"zero": np.zeros(1)})
    assert losses["Loss, untouched"] == pytest.approx(expected.losses[0], abs=1e-3)
    assert losses["Loss, set to zero"] == pytest.approx(expected.losses[1], abs=1e-3)
    assert losses["Loss, set to their mean"] == pytest.approx(losses["Loss, untouched"], abs=0.05)
    layer_3 = open_page("why", table="smollm2", method="massive", mtext=text, mlayer="3", mlevel="1000")
    assert_clean(layer_3)
    assert any("No value of the stream entering layer 3" in i for i in texts(layer_3.info))


def test_patching_answers_chosen_from_a_link():
    pair = dict(clean="The capital of France is", corrupt="The capital of Italy is")
    at = open_slow("why", table="smollm2", method="patching", good="7042", bad="260", **pair)   # ĠParis, Ġthe
    assert_clean(at)
    assert at.selectbox(key="why_good").value == 7042 and at.selectbox(key="why_bad").value == 260
    at.button(key="why_patch_run").click().run()
    assert_clean(at)
    grid = figure(at, 0)
    assert "'ĠParis' vs 'Ġthe'" in grid["layout"]["title"]["text"].replace("<br>", " ")
    shown = plotly_array(grid["data"][0]["z"]).astype(float)
    assert abs(shown[0, 3] - 1.0) < 1e-4                               # France at layer 0: the clean run, any answers
    assert at.query_params["good"] == "7042" and at.query_params["bad"] == "260"
    at.text_input(key="why_corrupt").set_value("The capital of Spain is").run()      # a new pair: top guesses again
    assert at.selectbox(key="why_bad").value == "top" and at.query_params["bad"] == "top"


class Calls:
    """Counts the calls of core functions the page imports when it uses them (a heavy job's work)."""

    def __init__(self, monkeypatch, *targets: tuple[object, str]):
        self.counts: dict[str, int] = {}
        for module, name in targets:
            original = getattr(module, name)

            def counted(*args, _original=original, _name=name, **kwargs):
                self.counts[_name] = self.counts.get(_name, 0) + 1
                return _original(*args, **kwargs)
            monkeypatch.setattr(module, name, counted)

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)


def test_choosing_a_method_starts_no_heavy_work_and_its_button_says_how_long(monkeypatch):
    """Issue 31 item 7: picking "Layer skipping" or "Massive activations" in the radio started
    20-45 s of work. Now choosing a method or a layer asks the heavy-job line for nothing; the
    button (with its cost) does; a result made by one visitor shows at once for the next."""
    from core.models import layers, massive, patching
    from ui.server.jobs import heavy_queue

    calls = Calls(monkeypatch, (layers, "skip_layers"), (massive, "intervene"),
                  (patching, "activation_patching"), (patching, "head_patching"))
    texts_of = {"skipping": {"why_skip_text": "A small dog ran home to eat."},   # texts no other test makes
                "massive": {"why_mass_text": "Snow fell on the quiet town all night."},
                "patching": {"why_clean": "The river flows into the", "why_corrupt": "The road leads into the"}}
    at = open_slow("why", table="smollm2")
    for method, button in (("skipping", "why_skip_run"), ("massive", "why_mass_run"), ("patching", "why_patch_run")):
        at.radio(key="why_method").set_value(method).run()
        for key, text in texts_of[method].items():
            at.text_input(key=key).set_value(text).run()
        assert_clean(at)
        assert calls.counts == {} and heavy_queue().snapshot() == {"running": [], "queued": []}, method
        label = at.button(key=button).label
        assert "(about " in label and label.rstrip(")").split()[-1] in ("s", "min"), label
    at.radio(key="why_method").set_value("massive").run()
    layer = at.number_input(key="why_mass_layer")
    layer.set_value(layer.value + 1).run()                  # choosing a layer is not asking either
    layer = at.number_input(key="why_mass_layer")
    layer.set_value(layer.value - 1).run()
    assert calls.counts == {}
    at.button(key="why_mass_run").click().run()
    assert_clean(at)
    assert calls["intervene"] == 1 and any(m.label == "Loss, set to zero" for m in at.metric)
    assert not any(b.key == "why_mass_run" for b in at.button)          # the button leaves once clicked
    at.radio(key="why_method").set_value("skipping").run()
    at.button(key="why_skip_run").click().run()
    assert_clean(at)
    assert calls["skip_layers"] == 1 and not any(b.key == "why_skip_run" for b in at.button)
    assert any("Loss with layer 0 skipped" == m.label for m in at.metric)
    other = open_slow("why", table="smollm2", method="skipping", stext=texts_of["skipping"]["why_skip_text"])
    assert_clean(other)                                     # another visitor: made already, shown at once
    assert not any(b.key == "why_skip_run" for b in other.button)
    assert any("Loss with layer 0 skipped" == m.label for m in other.metric) and calls["skip_layers"] == 1
    other = open_slow("why", table="smollm2", method="massive", mtext=texts_of["massive"]["why_mass_text"])
    assert_clean(other)
    assert any(m.label == "Loss, set to zero" for m in other.metric) and calls["intervene"] == 1
    assert calls["activation_patching"] == calls["head_patching"] == 0


def test_a_links_settings_below_the_button_survive_until_the_result_is_made():
    """The grid's colour and the heads' layer are drawn only once the grid is made: a link's values
    for them are kept through the run with the button, not reset to their defaults."""
    at = open_slow("why", table="smollm2", method="patching", clean="The lake lies near the",
                   corrupt="The farm lies near the", pcolour="probability", player="5")
    assert_clean(at)
    at.button(key="why_patch_run").click().run()
    assert_clean(at)
    assert at.radio(key="why_patch_colour").value == "probability"
    assert at.number_input(key="why_patch_layer").value == 5
    assert at.query_params["player"] == "5" and at.query_params["pcolour"] == "probability"
