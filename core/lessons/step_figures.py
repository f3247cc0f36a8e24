"""Each tour step's figure for the learner's notes: a function of the same Views the questions read
(core.lessons.view_questions), so the notes draw what the step's table or model holds. A builder
here returns the figure; the tour names it on its step (TourStep.figure)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from core.attention import seed000_example
from core.figures.attention import head_figure
from core.figures.base import grouped_bars, matrix_heatmap, vector_bars
from core.figures.hidden import indicator_histogram
from core.figures.models.inside import next_token_by_layer
from core.figures.models.why import loss_rise_bars
from core.geometry import cosine
from core.lessons.view_questions import Views, position_before, word_row
from core.toy_tables import LAB_LEARNING_RATE, LAB_OUTPUT_TOKENS, LAB_OUTPUT_WEIGHT
from core.training.gradients import softmax_ce_step
from core.hidden.vocab_health import DEFAULT_PERCENTILE

StepFigure = Callable[[Views], object]      # Views -> go.Figure; ValueError when it cannot be drawn


def rows_of_text(name: str, text: str) -> StepFigure:
    """X: the rows the text's ids select, as a heatmap (T, d)."""
    def draw(views: Views):
        table = views.table(name)
        rows = table.rows_for_ids(table.tokenize(text))
        labels = [f"{p}: {table.tokens[r]}" for p, r in enumerate(rows)]
        return matrix_heatmap(np.asarray(table.weight[rows], dtype=np.float64), f"X = rows of E for '{text}'", labels)
    return draw


def cosines_of(name: str, words: tuple[str, ...]) -> StepFigure:
    """The cosine of every pair of the words' rows."""
    def draw(views: Views):
        table = views.table(name)
        vectors = [np.asarray(table.weight[word_row(table, w)], dtype=np.float64) for w in words]
        matrix = np.array([[cosine(a, b) for b in vectors] for a in vectors])
        return matrix_heatmap(matrix, "Cosine of each pair", list(words), list(words), digits=3)
    return draw


def seed000_weights() -> StepFigure:
    def draw(views: Views):
        return head_figure(seed000_example(), ["0", "1"], "A")
    return draw


def lab_step(word: str, name: str = "seed001-lab") -> StepFigure:
    """The lab's output probabilities before and after one step on `word`'s row."""
    def draw(views: Views):
        row = np.asarray(views.table(name).weight[word_row(views.table(name), word)], dtype=np.float64)
        step = softmax_ce_step(row, LAB_OUTPUT_WEIGHT, 0, LAB_LEARNING_RATE)
        return grouped_bars({"before": step.probs_before, "after": step.probs_after},
                            f"p after '{word}', one step with learning rate {LAB_LEARNING_RATE:g}", LAB_OUTPUT_TOKENS)
    return draw


def analogy_scores(name: str, a: str, b: str, c: str) -> StepFigure:
    """3CosAdd's best answers with the inputs allowed."""
    def draw(views: Views):
        table = views.table(name)
        result = views.analogy(name, *(word_row(table, w) for w in (a, b, c)))[0]
        rows = result.included.rows[:8]
        return vector_bars(result.included.scores[:8], f"{result.method}: {a} − {b} + {c}, inputs allowed",
                           [table.tokens[int(r)] for r in rows])
    return draw


def lens_of(name: str, text: str, word: str) -> StepFigure:
    def draw(views: Views):
        lens, ids = views.lens(name, text)
        position = position_before(ids, word, views.table(name).tokens)
        return next_token_by_layer(lens.target_probs[:, position], lens.target_ranks[:, position],
                                   f"p and rank of {word!r} after position {position}, per layer")
    return draw


def head_rises(name: str, text: str, heads: tuple[tuple[int, int], ...]) -> StepFigure:
    def draw(views: Views):
        rises = [ablated.loss - base.loss for base, ablated in (views.ablation(name, text, (h,)) for h in heads)]
        return vector_bars(np.array(rises), "Rise of the loss with one head off",
                           [f"L{layer} H{head}" for layer, head in heads])
    return draw


def under_trained_histogram(name: str) -> StepFigure:
    def draw(views: Views):
        scores, indicator = views.under_trained(name)
        return indicator_histogram(scores, float(np.percentile(scores, DEFAULT_PERCENTILE)), np.array([]),
                                   f"The indicator over all {len(scores):,} tokens", indicator)
    return draw


def mean_cosines(names: tuple[str, ...], labels: tuple[str, ...]) -> StepFigure:
    def draw(views: Views):
        return vector_bars(np.array([views.mean_cosine(n) for n in names]), "Mean cosine of every pair of rows",
                           list(labels))
    return draw


def attribution_by_layer(name: str, text: str) -> StepFigure:
    def draw(views: Views):
        result = views.attribution(name, text)
        per_layer = np.asarray(result.heads).sum(axis=1) + np.asarray(result.mlps)
        token = views.table(name).tokens[result.token]
        return vector_bars(per_layer, f"Each layer's part of the logit of {token!r}",
                           [f"L{layer}" for layer in range(len(per_layer))])
    return draw


def skip_rises(name: str, text: str) -> StepFigure:
    def draw(views: Views):
        rises = np.asarray(views.layer_skips(name, text).rises)
        return loss_rise_bars([f"L{layer}" for layer in range(len(rises))], rises,
                              "Rise of the text's loss when each layer is skipped")
    return draw
