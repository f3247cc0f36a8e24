"""The tour of the From-vectors-to-words page (SmolLM2): temperature, then the layer where a word
is decided. Answers are computed from the model's logit lens (core.lessons.view_questions.Views)."""
from __future__ import annotations

import numpy as np

from core.generate.sampling import apply_temperature
from core.lessons import view_questions as vq
from core.lessons.questions import Reveal
from core.models.layer_names import lens_row_name
from core.lessons.tour_steps import Tour, TourStep, _view

PROMPT = "The Eiffel Tower is located in the city of"
TEXT = "The Eiffel Tower is located in the city of Paris"
MOST_PROBABLE, ANOTHER = "the most probable one", "another token"


def cold_next_token(name: str, text: str, temperature: float = 0.1):
    """At a low temperature, which token comes next: the model's most probable one, or another?"""
    def answer(views) -> Reveal:
        lens, _ = views.lens(name, text)
        tokens = views.table(name).tokens
        ids, probs = lens.top_ids[-1, -1], lens.top_probs[-1, -1]                # (5,) the model's own output
        cold = apply_temperature(probs / probs.sum(), temperature)              # among its top 5
        chosen = int(ids[int(np.argmax(cold))])
        right = MOST_PROBABLE if chosen == int(ids[0]) else ANOTHER
        return Reveal(right, None,
                      f"The top token '{vq.piece_word(tokens[int(ids[0])])}' has p = {float(probs[0]):.2f} at T = 1; "
                      f"at T = {temperature:g} its share of the top 5 becomes {float(cold.max()):.1%}.",
                      "Dividing the logits by T keeps their order: a low temperature only sharpens the "
                      "distribution towards the token that was already on top.")
    return answer


def first_top3_layer(name: str, text: str, word: str):
    """At which layer is `word` (the real next token) first among the logit lens's top 3?"""
    def answer(views) -> Reveal:
        lens, ids = views.lens(name, text)
        tokens = views.table(name).tokens
        position = vq.position_before(ids, word, tokens)
        ranks = np.asarray(lens.target_ranks[:, position])                      # (L+1,)
        inside = np.flatnonzero(ranks <= 3)
        if not inside.size:
            raise ValueError(f"{word!r} is never in the lens's top 3 in this text")
        layer = int(inside[0])                                                   # the lens's row: 0 = emb
        return Reveal(str(layer - 1), float(layer - 1),        # typed as a number: 27 for L27
                      f"'{word}' has rank {int(ranks[layer])} after {lens_row_name(layer)}"
                      + (f" and rank {int(ranks[layer - 1])} after {lens_row_name(layer - 1)}." if layer else "."),
                      "A word enters the short list some layers before it wins it: the top-3 layer comes at or "
                      "before the top-1 layer.")
    return answer


def _build():
    return Tour("From vectors to words · sampling and the layer where a word is decided (SmolLM2)", (
        TourStep("generate", "Temperature, top-k, top-p, min-p",
                 "The model's next-token distribution after the prompt, then temperature, top-k, top-p and min-p "
                 "applied in turn. Set **T** low and watch the first bars.",
                 {"keep_table": "smollm2", "keep_gen_section": "sampling", "keep_gen_prompt": PROMPT},
                 questions=(_view("cold_next", "smollm2", "At temperature 0.1, which token comes next?",
                                  cold_next_token("smollm2", PROMPT), choices=(MOST_PROBABLE, ANOTHER)),)),
        TourStep("generate", "Where is Paris decided?",
                 "The commitment strip: for each token, the first layer whose residual stream, read through the "
                 "final norm and output layer, already predicts it. Under it, one token's curve follows it through "
                 "the layers: read off Paris's rank.",
                 {"keep_table": "smollm2", "keep_gen_section": "commitment", "keep_gen_commit_text": TEXT},
                 questions=(_view("paris_layer", "smollm2", "After which layer is 'Paris' first the top guess? (L0 is "
                                  "the first layer)",
                                  vq.lens_first_layer("smollm2", TEXT, "Paris"), holds_back=("commitment_layers",)),
                            _view("paris_top3", "smollm2", "And at which layer is it first in the top 3?",
                                  first_top3_layer("smollm2", TEXT, "Paris"), holds_back=("commitment_layers",)))),
    ))


TOUR = _build()
