"""From vectors to words on SmolLM2: the sampling section from a deep link, its bars and chosen
tokens checked against core's generation; stepping; a non-causal table gets a message."""
from __future__ import annotations

import numpy as np
from helpers import assert_clean, figure, open_page, plotly_array, texts

PROMPT = "The capital of France is"


def test_sampling_from_a_link_shows_the_rules_and_the_greedy_tokens():
    from core.generate import decoding
    from core.generate.sampling import SamplingConfig
    from ui import cached

    at = open_page("generate", table="smollm2", prompt=PROMPT, temp="0", steps="5", show="4")
    assert_clean(at)
    model = cached.loaded_model("smollm2")
    expected = decoding.generate(model, model.encode(PROMPT), 5, SamplingConfig(temperature=0.0))
    assert at.code[0].value == model.tokenizer.decode(model.encode(PROMPT) + list(expected.tokens))
    bars = figure(at, 4)                                     # min-p's bars at step 4 (after the tokens' strip)
    after = plotly_array(bars["data"][1]["y"]).astype(float)
    assert after[0] == 1.0 and not after[1:].any()           # T = 0: all mass on the top token
    assert at.query_params["steps"] == "5"


def test_the_step_button_adds_one_token_and_keeps_it_in_the_url():
    at = open_page("generate", table="smollm2", prompt=PROMPT, temp="0.7", topk="20", seed="3")
    assert_clean(at)
    at.button(key="gen_step").click().run()
    assert_clean(at)
    assert at.query_params["steps"] == "1"
    at.button(key="gen_twenty").click().run()
    assert_clean(at)
    assert at.query_params["steps"] == "21"


def test_a_table_that_is_not_a_model_gets_a_message():
    at = open_page("generate", table="glove-50d")
    assert_clean(at)
    assert any("causal language model" in t for t in texts(at.info))


def test_the_commitment_strip_shows_the_lens_first_layers():
    from core.generate.commitment import commitment
    from ui import cached

    text = "The capital of France is Paris"
    at = open_page("generate", table="smollm2", section="commitment", ctext=text)
    assert_clean(at)
    model = cached.loaded_model("smollm2")
    ids = tuple(model.encode(text))
    strip = commitment(cached.model_lens("smollm2", ids), ids)
    frame = at.dataframe[0].value
    assert list(frame["top-1 from layer"]) == ["—" if v < 0 else "emb" if v == 0 else f"L{v - 1}" for v in strip.top1]


def test_steering_behind_a_button_then_side_by_side():
    from core.generate import decoding, steering
    from core.generate.sampling import SamplingConfig
    from ui import cached
    from ui.generate.common import one_line

    at = open_page("generate", table="smollm2", section="steering", coefs="0, 6", steer_layer="6")
    assert_clean(at)
    if any(button.key == "gen_steer_run" for button in at.button):
        at.button(key="gen_steer_run").click().run(timeout=600)
        assert_clean(at)
    model = cached.loaded_model("smollm2")
    prompt = model.encode("I think that you are")
    shown = [code.value for code in at.main.code]              # one block per coefficient
    assert len(shown) == 2
    plain = decoding.generate(model, prompt, 30, SamplingConfig(temperature=0.0))
    assert shown[0] == one_line(model.tokenizer.decode(list(plain.tokens)))     # coefficient 0
    direction = steering.steering_direction(model, model.encode(" Love"), model.encode(" Hate"), 6)
    pushed = steering.steered_generation(model, prompt, 30, SamplingConfig(temperature=0.0), direction, 6.0, 6)
    assert shown[1] == one_line(model.tokenizer.decode(list(pushed.tokens)))
    assert at.get("plotly_chart")


def test_branching_marks_the_first_difference_and_forces_a_branch():
    from core.generate import decoding, sampling
    from core.generate.sampling import SamplingConfig
    from ui import cached

    at = open_page("generate", table="smollm2", section="branching", prompt=PROMPT, seed="2", bstep="1", brank="2")
    assert_clean(at)
    model = cached.loaded_model("smollm2")
    ids = model.encode(PROMPT)
    runs = [decoding.generate(model, ids, 12, SamplingConfig(temperature=t, seed=2)) for t in (0.0, 0.7, 1.5)]
    first = min(d for d in (decoding.first_difference(runs[0].tokens, r.tokens) for r in runs[1:]) if d is not None)
    table = at.dataframe[0].value
    assert "◀" in table.iloc[first, 0] and not any("◀" in c for c in table.iloc[:first, 0])   # a row a step
    second = int(sampling.descending(runs[0].probs(1))[1])
    branch = decoding.generate(model, ids, 12, SamplingConfig(temperature=0.0), forced={1: second})
    assert at.code[1].value == model.tokenizer.decode(ids + list(branch.tokens))


def test_the_generate_tour_from_its_link_reveals_the_lens_answers():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_view_tour_questions import take_the_tour

    from core.lessons import tour_generate
    from core.models.lens import logit_lens
    from ui import cached

    revealed = take_the_tour("generate")
    assert revealed["cold_next"] == tour_generate.MOST_PROBABLE
    model = cached.loaded_model("smollm2")
    ids = model.encode(tour_generate.TEXT)
    ranks = logit_lens(model, model.run(ids)).target_ranks[:, len(ids) - 2]
    assert int(revealed["paris_layer"]) == int(np.flatnonzero(ranks == 1)[0]) - 1        # row i: after layer L{i-1}
    assert int(revealed["paris_top3"]) == int(np.flatnonzero(ranks <= 3)[0]) - 1


def test_tampered_link_values_are_said_not_crashed():
    at = open_page("generate", table="smollm2", temp="hot", steps="999", topp="7", seed="-1", section="nope")
    assert_clean(at)
    said = " ".join(texts(at.warning))
    for name in ("temp", "steps", "topp", "seed", "section"):
        assert f"'{name}'" in said, (name, said)
    at = open_page("generate", table="smollm2", section="steering", coefs="1, 2, x")
    assert_clean(at)
    assert any("not a list of numbers" in t for t in texts(at.error))
    at = open_page("generate", table="smollm2", prompt="word " * 200)
    assert_clean(at)
    assert any("at most 64" in t for t in texts(at.error))


def test_the_strip_held_by_the_tour_leaves_its_layers_readable_on_a_curve():
    """Generate step 2 holds the strip back (it states the layers asked for); the curve of 'Paris' after
    every layer stays, and its rank first reaches 1 at the layer the question's answer names."""
    from core.lessons.tours import TOURS
    from ui.lessons.question_views import AppViews

    at = open_page("generate", tour="generate", tstep="1")
    assert_clean(at)
    assert not at.dataframe or "top-1 from layer" not in at.dataframe[0].value.columns      # the strip waits
    curve = next(figure(at, i) for i in range(len(at.get("plotly_chart")))
                 if "after position" in figure(at, i)["layout"]["title"]["text"])
    assert "Paris" in curve["layout"]["title"]["text"]
    ranks = plotly_array(curve["data"][1]["y"]).astype(float)             # (L+1,) emb, L0 … L29
    layers = list(curve["data"][1]["x"])
    question = next(q for q in TOURS["generate"].steps[1].questions if q.key == "paris_layer")
    answer = question.answer(AppViews()).value
    assert layers[int(np.flatnonzero(ranks <= 1)[0])] == f"L{int(answer)}"
    top3 = next(q for q in TOURS["generate"].steps[1].questions if q.key == "paris_top3")
    assert layers[int(np.flatnonzero(ranks <= 3)[0])] == f"L{int(top3.answer(AppViews()).value)}"
