"""The new views' questions (core.lessons.view_questions): each answer is computed from what the
views return — a toy table for analogies, under-trained tokens and anisotropy, small arrays for a
lens, an ablation, an attribution and a layer skipping — so changed data gets another answer."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.hidden.anisotropy import anisotropy
from core.lessons import view_questions as vq
from core.lessons.questions import FALLS, RISES, is_right
from core.lessons.tours import SEED_TOURS, TOURS, VIEW_TOURS
from core.models.ablation import Ablation
from core.models.attribution import Attribution
from core.models.layers import LayerSkips
from core.models.lens import LogitLens
from core.directions.semantic import analogy, inverse_norms
from core.tables import make_table
from core.hidden.vocab_health import indicator

WORDS = {"king": [0.9, 0.8, 0.1], "man": [0.9, 0.1, 0.0], "woman": [0.1, 0.1, 0.9], "queen": [0.1, 0.8, 1.0],
         "prince": [0.8, 0.9, 0.3], "rare": [0.01, 0.02, 0.0], "the": [1.0, -1.0, 0.5]}


class ToyViews:
    """Views over small tables and given arrays (the app's are ui.lessons.question_views.AppViews)."""

    def __init__(self, tables: dict, lens=None, ablations=None, attribution=None, skips=None):
        self.tables, self.lens_result, self.ablations = tables, lens, ablations or {}
        self.attribution_result, self.skips = attribution, skips

    def table(self, name):
        return self.tables[name]

    def analogy(self, name, a, b, c):
        table = self.tables[name]
        return analogy(table.weight, inverse_norms(np.linalg.norm(table.weight, axis=1)), a, b, c, 5)

    def lens(self, name, text):
        return self.lens_result, tuple(self.tables[name].tokenize(text))

    def ablation(self, name, text, heads):
        return Ablation((), 2.0, np.zeros(1)), Ablation(tuple(heads), self.ablations[tuple(heads)], np.zeros(1))

    def mean_cosine(self, name):
        return anisotropy(self.tables[name].weight).mean_cosine

    def under_trained(self, name):
        return indicator(self.tables[name].weight, "norm"), "row length"

    def attribution(self, name, text):
        return self.attribution_result

    def layer_skips(self, name, text):
        return self.skips


def _table(rows=WORDS, name="toy"):
    return make_table(name, rows, "test")


def test_analogy_answers_follow_the_table():
    views = ToyViews({"toy": _table()})
    on_top = vq.analogy_input_on_top("toy", "king", "man", "woman")(views)
    assert on_top.right in (vq.YES, vq.NO) and "Inputs included" in on_top.numbers
    rank = vq.analogy_rank("toy", "king", "man", "woman", "queen")(views)
    expected = analogy(views.tables["toy"].weight, inverse_norms(np.linalg.norm(views.tables["toy"].weight, axis=1)),
                       0, 1, 2, 5)[0].excluded.rows.tolist().index(3) + 1
    assert rank.value == expected
    prince = vq.analogy_rank("toy", "king", "man", "woman", "prince")(views).value
    moved = dict(WORDS, prince=[0.1, 0.8, 1.0])                 # prince now where queen is: they tie, prince first
    moved["queen"] = [0.9, 0.1, 0.5]                            # and queen next to man
    moved_views = ToyViews({"toy": _table(moved)})
    assert prince != 1 and vq.analogy_rank("toy", "king", "man", "woman", "prince")(moved_views).value == 1


def test_an_analogy_whose_input_wins_says_yes_and_one_that_does_not_says_no():
    near_king = dict(WORDS, woman=[0.9, 0.1, 0.01])      # woman ≈ man, so a − b + c ≈ a: king wins
    assert vq.analogy_input_on_top("toy", "king", "man", "woman")(ToyViews({"toy": _table(near_king)})).right == vq.YES
    far = dict(WORDS, queen=list(np.array(WORDS["king"]) / np.linalg.norm(WORDS["king"]) -
                                 np.array(WORDS["man"]) / np.linalg.norm(WORDS["man"]) +
                                 np.array(WORDS["woman"]) / np.linalg.norm(WORDS["woman"])))
    assert vq.analogy_input_on_top("toy", "king", "man", "woman")(ToyViews({"toy": _table(far)})).right == vq.NO


def _lens(ranks_of_last):
    layers = len(ranks_of_last)
    ranks = np.full((layers, 2), 50)
    ranks[:, 1] = ranks_of_last
    probs = np.where(ranks == 1, 0.6, 0.01)
    return LogitLens(np.zeros((layers, 3, 1), int), np.zeros((layers, 3, 1)), probs, ranks)


def test_the_lens_question_reads_the_first_layer_with_rank_one():
    tables = {"m": _table({"a": [1, 0], "b": [0, 1], "Paris": [1, 1]})}
    reveal = vq.lens_first_layer("m", "a b Paris", "Paris")(ToyViews(tables, lens=_lens([9, 4, 1, 2, 1])))
    # the lens's rows emb, L0, L1, …: its row 2 comes after the second layer, L1, as every page numbers layers
    assert reveal.value == 1 and reveal.right == "1" and "rank 4 after L0" in reveal.numbers
    assert vq.lens_first_layer("m", "a b Paris", "Paris")(ToyViews(tables, lens=_lens([9, 1, 1, 1, 1]))).value == 0
    with pytest.raises(ValueError, match="never the lens's top guess"):
        vq.lens_first_layer("m", "a b Paris", "Paris")(ToyViews(tables, lens=_lens([9, 4, 3, 2, 2])))
    with pytest.raises(ValueError, match="not a token of this text"):
        vq.lens_first_layer("m", "a b", "Paris")(ToyViews(tables, lens=_lens([1, 1, 1])))


def test_ablation_questions_follow_the_losses():
    heads = ((0, 0), (0, 1), (0, 2))
    rises = ToyViews({}, ablations={((0, 0),): 2.1, ((0, 1),): 2.5, ((0, 2),): 1.9, heads: 3.0})
    assert vq.ablation_loss("m", "t", heads)(rises).right == RISES
    assert vq.head_that_matters("m", "t", heads)(rises).right == "L0 H1"
    falls = ToyViews({}, ablations={((0, 0),): 2.9, ((0, 1),): 2.5, ((0, 2),): 1.9, heads: 1.5})
    assert vq.ablation_loss("m", "t", heads)(falls).right == FALLS
    assert vq.head_that_matters("m", "t", heads)(falls).right == "L0 H0"


def test_under_trained_and_anisotropy_follow_the_table():
    views = ToyViews({"toy": _table()})
    assert vq.under_trained_of("toy", "rare", "the")(views).right == "rare"
    grown = ToyViews({"toy": _table(dict(WORDS, rare=[5.0, 5.0, 5.0]))})
    assert vq.under_trained_of("toy", "rare", "the")(grown).right == "the"
    leaning = _table({f"w{i}": [5.0, 0.1 * i, -0.1 * i] for i in range(6)}, "leaning")
    spread = _table({f"w{i}": list(np.eye(3)[i % 3] * (1 if i < 3 else -1)) for i in range(6)}, "spread")
    views = ToyViews({"leaning": leaning, "spread": spread})
    assert vq.higher_mean_cosine("leaning", "spread", ("L", "S"))(views).right == "L"
    assert vq.higher_mean_cosine("spread", "leaning", ("S", "L"))(views).right == "L"
    number = vq.mean_cosine_of("spread", "spread")(views)
    assert number.value == pytest.approx(anisotropy(spread.weight).mean_cosine) and number.value < 0


def _attribution(heads, mlps):
    heads, mlps = np.asarray(heads, float), np.asarray(mlps, float)
    return Attribution(token=0, versus=None, embedding=0.1, heads=heads, mlps=mlps,
                       attention_biases=np.zeros(len(mlps)),
                       norm_bias=0.0, output_bias=0.0, logit=float(heads.sum() + mlps.sum() + 0.1), model_logit=0.0,
                       norm_scale=1.0)


def test_attribution_questions_follow_the_parts():
    tables = {"m": _table({"Paris": [1, 0]})}
    first = _attribution([[0.5, 0.2], [1.0, -0.1], [0.1, 0.1]], [0.1, 0.3, 2.0])
    views = ToyViews(tables, attribution=first)
    assert vq.attribution_layer("m", "t")(views).value == 2 and vq.attribution_kind("m", "t")(views).right == "an MLP"
    second = replace(first, heads=np.array([[0.5, 0.2], [4.0, -0.1], [0.1, 0.1]]))
    views = ToyViews(tables, attribution=second)
    assert vq.attribution_layer("m", "t")(views).value == 1
    assert vq.attribution_kind("m", "t")(views).right == "an attention head"


def test_layer_skipping_questions_follow_the_losses():
    skips = LayerSkips(np.array([2.0, 2.1, 5.0, 2.3]), np.zeros((4, 1)), np.zeros((4, 1), int), np.zeros((4, 1)))
    views = ToyViews({}, skips=skips)
    assert vq.costliest_skip("m", "t")(views).value == 1 and vq.first_or_last_skip("m", "t")(views).right == "the last"
    views = ToyViews({}, skips=replace(skips, losses=np.array([2.0, 9.0, 5.0, 2.05])))
    assert vq.costliest_skip("m", "t")(views).value == 0 and vq.first_or_last_skip("m", "t")(views).right == "the first"


def test_every_view_tour_asks_three_questions_read_from_views():
    assert set(TOURS) == set(SEED_TOURS) | set(VIEW_TOURS)
    for name, tour in VIEW_TOURS.items():
        asked = [question for step in tour.steps for question in step.questions]
        assert len(asked) >= 3, name
        assert len({question.key for question in asked}) == len(asked), name
        assert all(question.reads == "views" for question in asked), name
        numbers = [question for question in asked if not question.choices]
        assert all(is_right(question, vq.Reveal("1", 1.0, "", ""), 1.0 + question.tolerance) for question in numbers)
