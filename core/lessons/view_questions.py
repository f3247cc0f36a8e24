"""Predict, then reveal, for the views that read a model or a whole vocabulary: analogies, the logit
lens, head ablation, under-trained tokens, anisotropy, direct logit attribution, layer skipping.

Their answers need computations the pages cache (a model's run, a lens, an analogy over 400,000
rows), so an answer reads them through `Views`, which the app fills with its shared, cached results
(ui.lessons.question_views) and the tests with small tables and arrays of their own. Every answer is
computed from what `Views` returns: another text or another table gets its own answer.
"""
from __future__ import annotations

from typing import Callable, Protocol

import numpy as np

from core import order
from core.lessons.questions import FALLS, RISES, Reveal
from core.models.layer_names import lens_row_name
from core.tables import EmbeddingTable

YES, NO = "yes", "no"


class Views(Protocol):
    """The results a question reads (each raises ValueError when it cannot be computed)."""

    def table(self, name: str) -> EmbeddingTable: ...
    def analogy(self, name: str, a: int, b: int, c: int) -> list: ...             # core.directions.semantic.Analogy each
    def lens(self, name: str, text: str) -> tuple: ...                            # (LogitLens, token ids)
    def ablation(self, name: str, text: str, heads: tuple) -> tuple: ...          # (untouched, ablated) Ablation
    def mean_cosine(self, name: str) -> float: ...                                # core.hidden.anisotropy, exact
    def under_trained(self, name: str) -> tuple[np.ndarray, str]: ...             # ((V,) indicator, its name)
    def attribution(self, name: str, text: str) -> object: ...                    # Attribution of the top guess
    def layer_skips(self, name: str, text: str) -> object: ...                    # core.models.layers.LayerSkips
    def contextuality(self, name: str, word_set: str) -> object: ...              # core.context.contextuality, a built-in set
    def induction_ablation(self, name: str, k: int) -> object: ...                # core.models.induction_ablation, k heads
    def hub_lists(self, name: str) -> object: ...                                 # core.map_quality.hubness.NeighbourLists, every row


Answer = Callable[[Views], Reveal]


def word_row(table: EmbeddingTable, word: str) -> int:
    row = table.row_of_token(word)
    if row is None:
        raise ValueError(f"{word!r} is not in {table.name}")
    return int(row)


def _analogy(views: Views, name: str, a: str, b: str, c: str, method: str):
    table = views.table(name)
    results = {result.method: result for result in views.analogy(name, *(word_row(table, w) for w in (a, b, c)))}
    if method not in results:
        raise ValueError(f"{method} is not one of {', '.join(results)}")
    return table, results[method]


def analogy_input_on_top(name: str, a: str, b: str, c: str, method: str = "3CosAdd") -> Answer:
    """With the inputs allowed, is the method's best answer to a − b + c one of a, b, c?"""
    def answer(views: Views) -> Reveal:
        table, result = _analogy(views, name, a, b, c, method)
        inputs = {word_row(table, w) for w in (a, b, c)}
        top, usual = int(result.included.rows[0]), int(result.excluded.rows[0])
        right = YES if top in inputs else NO
        return Reveal(right, None,
                      f"Inputs included: {table.tokens[top]} ({result.included.scores[0]:.4f}); inputs excluded: "
                      f"{table.tokens[usual]} ({result.excluded.scores[0]:.4f}).",
                      "a − b + c stays close to a (and to c): unless the code bans the inputs, one of them often "
                      "wins, and the famous answers need the inputs excluded.")
    return answer


def analogy_rank(name: str, a: str, b: str, c: str, expected: str, method: str = "3CosAdd") -> Answer:
    """With the inputs excluded (the usual code), at which rank does `expected` come?"""
    def answer(views: Views) -> Reveal:
        table, result = _analogy(views, name, a, b, c, method)
        row = word_row(table, expected)
        rows = [int(r) for r in result.excluded.rows]
        if row not in rows:
            raise ValueError(f"{expected!r} is not among the {len(rows)} best answers here")
        rank = rows.index(row) + 1
        firsts = ", ".join(table.tokens[r] for r in rows[:3])
        return Reveal(str(rank), float(rank), f"{method}, inputs excluded: the first answers are {firsts}; "
                      f"{expected} is number {rank} (score {result.excluded.scores[rank - 1]:.4f}).",
                      "Each row is ranked by how well it matches a − b + c; only the rows nearest that point come "
                      "first, and a near-synonym can beat the expected word.")
    return answer


def piece_word(piece) -> str:
    """A tokenizer piece without its leading space mark (byte-level Ġ, SentencePiece ▁)."""
    return str(piece).lstrip("Ġ▁ ")


def position_before(ids, word: str, tokens) -> int:
    """The last position whose next token reads `word` (pieces compared without their space mark)."""
    clean = [piece_word(tokens[i]) for i in ids]
    found = [t for t in range(len(ids) - 1) if clean[t + 1] == word]
    if not found:
        raise ValueError(f"{word!r} is not a token of this text")
    return found[-1]


def lens_first_layer(name: str, text: str, word: str) -> Answer:
    """After which layer does the logit lens first put `word` (the real next token) on top?"""
    def answer(views: Views) -> Reveal:
        lens, ids = views.lens(name, text)
        tokens = views.table(name).tokens
        position = position_before(ids, word, tokens)
        ranks = np.asarray(lens.target_ranks[:, position])                    # (L+1,)
        on_top = np.flatnonzero(ranks == 1)
        if not on_top.size:
            raise ValueError(f"{word!r} is never the lens's top guess in this text")
        layer = int(on_top[0])                                                 # the lens's row: 0 = emb
        before = f"rank {int(ranks[layer - 1])} after {lens_row_name(layer - 1)}" if layer > 1 else \
            f"rank {int(ranks[0])} from the embedding alone"
        return Reveal(str(layer - 1), float(layer - 1),        # typed as a number: 27 for L27
                      f"After '{piece_word(tokens[ids[position]])}', '{word}' is {before}, rank 1 from "
                      f"{lens_row_name(layer)} on "
                      f"(p = {float(lens.target_probs[layer, position]):.2f}); the model's own output gives it "
                      f"p = {float(lens.target_probs[-1, position]):.2f}.",
                      "The early layers' streams, read through the final norm and output layer, point at other "
                      "words; the answer appears only late, where the last layers write it.")
    return answer


def ablation_loss(name: str, text: str, heads: tuple) -> Answer:
    """With these heads switched off, does the text's loss rise or fall?"""
    def answer(views: Views) -> Reveal:
        base, ablated = views.ablation(name, text, tuple(heads))
        if ablated.loss == base.loss:
            raise ValueError("the loss does not move")
        right = RISES if ablated.loss > base.loss else FALLS
        return Reveal(right, None, f"Loss {base.loss:.3f} with every head, {ablated.loss:.3f} with "
                      f"{len(heads)} head{'s' if len(heads) > 1 else ''} off ({ablated.loss - base.loss:+.3f}).",
                      "A head the text needs leaves a hole when it is off: every later layer reads a stream without "
                      "its output, and the real next tokens get less probability.")
    return answer


def head_that_matters(name: str, text: str, heads: tuple[tuple[int, int], ...]) -> Answer:
    """Of these heads, which one alone raises the loss most when switched off? Choices: 'L{l} H{h}'."""
    def answer(views: Views) -> Reveal:
        results = [views.ablation(name, text, (head,)) for head in heads]
        rises = [ablated.loss - base.loss for base, ablated in results]
        best = order.argmax(np.asarray(rises), rel=order.LAYERWISE)      # tied losses: the first head listed
        labels = [f"L{layer} H{head}" for layer, head in heads]
        return Reveal(labels[best], None, "; ".join(f"{label} off: loss {rise:+.3f}" for label, rise in
                                                    zip(labels, rises)) + ".",
                      "Heads of one layer do different jobs; switching one off at a time shows which this text "
                      "relies on.")
    return answer


def under_trained_of(name: str, first: str, second: str) -> Answer:
    """Which of two tokens does the page's indicator find more under-trained (lower score)?"""
    def answer(views: Views) -> Reveal:
        table = views.table(name)
        scores, indicator = views.under_trained(name)
        rows = [word_row(table, first), word_row(table, second)]
        values = [float(scores[r]) for r in rows]
        if abs(values[0] - values[1]) <= order.tolerance(scores, order.FLOAT32):      # tied to float32 precision
            raise ValueError(f"{first!r} and {second!r} score the same")
        right = first if values[0] < values[1] else second
        rank = order.ranks(scores, rel=order.FLOAT32)                   # the Hidden page's ranks (ties by row)
        return Reveal(right, None, f"{indicator}: {first} {values[0]:.4g} (rank {int(rank[rows[0]]):,}), "
                      f"{second} {values[1]:.4g} (rank {int(rank[rows[1]]):,} of {len(scores):,}; 1 = most "
                      "suspicious).",
                      "A token the model hardly saw keeps a row that training barely moved: it scores low on the "
                      "indicator, like the rows known to be unused.")
    return answer


def higher_mean_cosine(first: str, second: str, labels: tuple[str, str]) -> Answer:
    """Which of two tables has the higher mean cosine of its rows? Choices: `labels`."""
    def answer(views: Views) -> Reveal:
        values = [views.mean_cosine(first), views.mean_cosine(second)]
        right = labels[0] if values[0] > values[1] else labels[1]
        return Reveal(right, None, f"Mean cosine of every pair of rows: {labels[0]} {values[0]:.4f}, "
                      f"{labels[1]} {values[1]:.4f}.",
                      "The higher the mean cosine, the more every row leans one common way, and the less a "
                      "cosine alone says about two particular words.")
    return answer


def mean_cosine_of(name: str, label: str) -> Answer:
    """The table's mean cosine of every pair of rows (a number)."""
    def answer(views: Views) -> Reveal:
        value = views.mean_cosine(name)
        return Reveal(f"{value:.2f}", value, f"{label}: mean cosine {value:.4f} over every pair of its rows.",
                      "Random directions in many dimensions are nearly orthogonal (mean cosine near 0); a trained "
                      "table is not random.")
    return answer


def attribution_layer(name: str, text: str) -> Answer:
    """Which layer (its heads and MLP together) writes most into the logit of the model's top guess?"""
    def answer(views: Views) -> Reveal:
        result = views.attribution(name, text)
        per_layer = np.asarray(result.heads).sum(axis=1) + np.asarray(result.mlps)        # (L,)
        by_size = order.ranked(per_layer, descending=True, rel=order.LAYERWISE)    # tied: the earlier layer
        layer = int(by_size[0])
        token = piece_word(views.table(name).tokens[result.token])
        second = int(by_size[1]) if per_layer.size > 1 else layer
        return Reveal(str(layer), float(layer),
                      f"The logit of '{token}' is {result.logit:.2f}; layer {layer} writes {per_layer[layer]:+.2f} "
                      f"of it (heads {float(np.sum(result.heads[layer])):+.2f}, MLP {float(result.mlps[layer]):+.2f}), "
                      f"the next largest layer {second} {per_layer[second]:+.2f}.",
                      "Each part writes a vector into the residual stream; its dot product with the token's output "
                      "direction, after the frozen final norm, is its share of the logit.")
    return answer


def attribution_kind(name: str, text: str) -> Answer:
    """Is the single largest part of the top guess's logit an attention head or an MLP?"""
    def answer(views: Views) -> Reveal:
        result = views.attribution(name, text)
        part, value = result.ranked()[0]
        right = "an MLP" if "MLP" in part else "an attention head" if " H" in part else "something else"
        return Reveal(right, None, f"The largest single part (by size) is {part}: {value:+.2f} of the logit "
                      f"{result.logit:.2f}.",
                      "A part can push the logit up or down; its size says how much this prediction depends on it, "
                      "whichever way it pushes.")
    return answer


def costliest_skip(name: str, text: str) -> Answer:
    """Skipping which layer raises the text's loss most?"""
    def answer(views: Views) -> Reveal:
        skips = views.layer_skips(name, text)
        rises = np.asarray(skips.rises)                                           # (L,)
        layer = order.argmax(rises, rel=order.LAYERWISE)               # tied rises: the earlier layer
        cheapest = order.argmin(rises, rel=order.LAYERWISE)
        return Reveal(str(layer), float(layer),
                      f"Loss {float(skips.losses[0]):.3f} with every layer; skipping layer {layer} adds "
                      f"{rises[layer]:+.3f}, skipping layer {cheapest} only {rises[cheapest]:+.3f}.",
                      "The residual connection carries a skipped layer's input on, so most layers can go at a "
                      "small cost; a few the text cannot do without.")
    return answer


def first_or_last_skip(name: str, text: str) -> Answer:
    """Does skipping the first layer or the last cost more?"""
    def answer(views: Views) -> Reveal:
        rises = np.asarray(views.layer_skips(name, text).rises)
        if rises[0] == rises[-1]:
            raise ValueError("the two cost the same")
        right = "the first" if rises[0] > rises[-1] else "the last"
        return Reveal(right, None, f"Skipping layer 0 adds {rises[0]:+.3f} to the loss; skipping layer "
                      f"{len(rises) - 1} adds {rises[-1]:+.3f}.",
                      "Every later layer reads what the first wrote; the last one's work reaches only the output.")
    return answer
