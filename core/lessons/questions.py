"""Predict, then reveal: questions a tour step asks, whose right answers are computed here from the
table on screen (never written by hand), so an edited table gets its own right answer.

A question names the toy table it is about; `answer(table)` returns a Reveal: the right choice or
number, the numbers behind it and a sentence on why. The wording around the numbers is written
here; token strings come from the table and are plain text (the page escapes them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from core.attention import seed000_example
from core.geometry import cosine
from core.lessons.context_demo import compare_contexts, permutation_check
from core.tables import EmbeddingTable
from core.toy_tables import LAB_LEARNING_RATE, LAB_OUTPUT_TOKENS, LAB_OUTPUT_WEIGHT
from core.training.gradients import softmax_ce_step


@dataclass(frozen=True)
class Reveal:
    right: str                 # the right choice, or the right number as the page shows it
    value: float | None        # the right number (None for a choice question)
    numbers: str               # the numbers behind the answer (plain text)
    why: str                   # one sentence on why (plain text)


@dataclass(frozen=True)
class Question:
    key: str                                   # unique within its tour: where the session keeps the answer
    table: str                                 # the toy table (URL name) the answer is computed from
    prompt: str                                # plain text written here
    answer: Callable[..., Reveal]              # (table or views) -> Reveal; ValueError when it cannot answer
    choices: tuple[str, ...] = ()              # empty: the learner types a number
    tolerance: float = 0.0                     # a typed number within this of the value is right
    decimals: int = 0                          # how the typed number is asked for (0: a whole number)
    # what `answer` reads: "table" (the EmbeddingTable named by `table`, on screen) or "views" (a model's
    # or a whole vocabulary's cached results, core.lessons.view_questions.Views: computed once answered)
    reads: str = "table"
    # the page sentences (ui.lessons.asking topics) that state this answer: held back until it is answered
    holds_back: tuple[str, ...] = ()


def is_right(question: Question, reveal: Reveal, given) -> bool:
    """The learner's answer (a choice, or a number) against the computed one."""
    if question.choices:
        return given == reveal.right
    try:
        return abs(float(given) - float(reveal.value)) <= question.tolerance + 1e-9
    except (TypeError, ValueError):
        return False


def _row(table: EmbeddingTable, word: str) -> np.ndarray:
    row = table.row_of_token(word)
    if row is None:
        raise ValueError(f"{word!r} is not in this table any more")
    return table.weight[row]


def _word_id(table: EmbeddingTable, word: str) -> int:
    row = table.row_of_token(word)
    if row is None:
        raise ValueError(f"{word!r} is not in this table any more")
    return int(table.ids[row])


def token_id(word: str) -> Callable[[EmbeddingTable], Reveal]:
    """Which id does `word` get? The id stored with its row."""
    def answer(table: EmbeddingTable) -> Reveal:
        row, token = table.row_of_token(word), _word_id(table, word)
        return Reveal(str(token), float(token), f"'{word}' is row {row} of the table; that row's id is {token}.",
                      "The tokenizer looks the word up and returns the address of its row: the id says where "
                      "the vector is, not what it means.")
    return answer


def closer(anchor: str, first: str, second: str, measure: str) -> Callable[[EmbeddingTable], Reveal]:
    """Which of two words is closer to `anchor`: by squared distance, cosine or id gap."""
    def nearness(table: EmbeddingTable, word: str) -> float:
        if measure == "distance":
            difference = _row(table, anchor) - _row(table, word)                 # (d,)
            return float(difference @ difference)
        if measure == "cosine":
            return cosine(_row(table, anchor), _row(table, word))
        return float(abs(_word_id(table, anchor) - _word_id(table, word)))

    def answer(table: EmbeddingTable) -> Reveal:
        a, b = nearness(table, first), nearness(table, second)
        larger_is_closer = measure == "cosine"
        if a == b:
            raise ValueError(f"'{first}' and '{second}' are equally close to '{anchor}' in this table")
        right = first if (a > b) == larger_is_closer else second
        label = {"distance": "‖{x} − {y}‖²", "cosine": "cos({x}, {y})", "id": "|id {x} − id {y}|"}[measure]
        shown = (lambda v: f"{v:g}") if measure == "id" else (lambda v: f"{v:.3f}")
        numbers = f"{label.format(x=anchor, y=first)} = {shown(a)}; {label.format(x=anchor, y=second)} = {shown(b)}."
        why = {"distance": "A smaller squared distance means the rows are closer.",
               "cosine": "A larger cosine means the two vectors point in more nearly the same direction.",
               "id": "A smaller gap between ids only means nearer addresses, not similar words."}[measure]
        return Reveal(right, None, numbers, why)
    return answer


RISES, FALLS = "rises", "falls"


def probability_after_step(word: str, target: str, lr: float = LAB_LEARNING_RATE) -> Callable[[EmbeddingTable], Reveal]:
    """Does p(target) rise or fall after one gradient step on `word`'s row (the seed 001 lab)?"""
    def answer(table: EmbeddingTable) -> Reveal:
        if target not in LAB_OUTPUT_TOKENS:
            raise ValueError(f"the lab scores only {', '.join(LAB_OUTPUT_TOKENS)}")
        step = softmax_ce_step(_row(table, word), LAB_OUTPUT_WEIGHT, LAB_OUTPUT_TOKENS.index(target), lr)
        if step.prob_after == step.prob_before:
            raise ValueError(f"p({target}) does not move in this table")
        right = RISES if step.prob_after > step.prob_before else FALLS
        return Reveal(right, None,
                      f"p({target}) = {100 * step.prob_before:.1f} % before, {100 * step.prob_after:.1f} % after "
                      f"(loss {step.loss_before:.3f} → {step.loss_after:.3f}, learning rate {lr:g}).",
                      f"The step moves the row of '{word}' against the gradient of the loss −ln p({target}), "
                      "so with a small enough positive learning rate the loss falls and p(" + target + ") rises.")
    return answer


def distinct_rows(text: str) -> Callable[[EmbeddingTable], Reveal]:
    """How many different rows does `text` read?"""
    def answer(table: EmbeddingTable) -> Reveal:
        ids = table.tokenize(text)
        count = len(set(ids))
        return Reveal(str(count), float(count), f"'{text}' is ids {ids}: {count} different rows of {len(ids)} positions.",
                      "A repeated id reads the same row: both positions get the same vector.")
    return answer


def one_hot_length(word: str) -> Callable[[EmbeddingTable], Reveal]:
    """How many entries has the one-hot vector of `word`? V, the vocabulary size."""
    def answer(table: EmbeddingTable) -> Reveal:
        _word_id(table, word)
        size = table.vocab_size
        return Reveal(str(size), float(size), f"The table has V = {size} rows, so the one-hot vector of '{word}' "
                      f"has {size} entries, one of them 1.",
                      "A one-hot vector has one entry per token of the vocabulary: its length is V, not d.")
    return answer


def attention_weight(query: int, key: int) -> Callable[[EmbeddingTable], Reveal]:
    """Seed 000 §4's head: how much weight position `query` puts on position `key` (its own example, not the table)."""
    def answer(table: EmbeddingTable) -> Reveal:
        weights = seed000_example().weights                                       # (T, T)
        value = float(weights[query, key])
        row = ", ".join(f"{w:.2f}" for w in weights[query])
        return Reveal(f"{value:.2f}", value, f"Row {query} of A is [{row}]: A[{query}, {key}] = {value:.2f}.",
                      "Every unmasked score is 0, so softmax spreads the weight evenly over the positions "
                      "the mask lets a position see: itself and those before it.")
    return answer


def dot_product(first: str, second: str) -> Callable[[EmbeddingTable], Reveal]:
    def answer(table: EmbeddingTable) -> Reveal:
        a, b = _row(table, first), _row(table, second)
        value = float(a @ b)                                                      # (d,) @ (d,) -> ()
        terms = " + ".join(f"{x:g}·{y:g}" for x, y in zip(a, b))
        return Reveal(f"{value:.2f}", value, f"{first} · {second} = {terms} = {value:.4f}.",
                      "A dot product multiplies matching coordinates and adds them up: one number, "
                      "which grows with both lengths and with how aligned the vectors are.")
    return answer


def larger_dot(anchor: str, first: str, second: str) -> Callable[[EmbeddingTable], Reveal]:
    """Which word has the larger dot product with `anchor`?"""
    def answer(table: EmbeddingTable) -> Reveal:
        x = _row(table, anchor)
        a, b = float(x @ _row(table, first)), float(x @ _row(table, second))
        if a == b:
            raise ValueError(f"both dot products are {a:.3f} in this table")
        return Reveal(first if a > b else second, None,
                      f"{anchor} · {first} = {a:.3f}; {anchor} · {second} = {b:.3f}.",
                      "The dot product depends on length as well as direction: a word need not score "
                      "highest with itself.")
    return answer


SAME_MOVED, CHANGED = "the same numbers, moved to the other position", "different numbers"


def swap_without_positions(text: str) -> Callable[[EmbeddingTable], Reveal]:
    """Swap the first two tokens, no positions, no mask: are the output rows only permuted?"""
    def answer(table: EmbeddingTable) -> Reveal:
        ids = table.tokenize(text)
        if len(ids) < 2:
            raise ValueError("the question needs two tokens")
        check = permutation_check(table, ids, 0, 1, positions=False)
        right = SAME_MOVED if check.rows_permuted else CHANGED
        before = ", ".join(f"{v:.3f}" for v in check.original.output[0])
        after = ", ".join(f"{v:.3f}" for v in check.swapped.output[1])
        return Reveal(right, None, f"Output of the first token before the swap: [{before}]; after it, at "
                      f"position 1: [{after}].",
                      "Without position vectors attention sees a set of tokens, not a sequence: swapping "
                      "the inputs only swaps the output rows.")
    return answer


SAME_OUTPUT, OTHER_OUTPUT = "the same output", "a different output"


def context_changes(first: str, second: str) -> Callable[[EmbeddingTable], Reveal]:
    """The same token at the same last position of two sentences (seed's head, positions, causal mask):
    does its attention output change with its neighbours? The context demo's ‖O₁ − O₂‖."""
    def answer(table: EmbeddingTable) -> Reveal:
        first_ids, second_ids = table.tokenize(first), table.tokenize(second)
        comparison = compare_contexts(table, first_ids, second_ids)
        right = SAME_OUTPUT if comparison.difference_norm == 0 else OTHER_OUTPUT
        return Reveal(right, None, f"At position {comparison.position} the inputs (row + position vector) are equal: "
                      f"{comparison.same_input}; ‖O₁ − O₂‖ = {comparison.difference_norm:.3f}.",
                      "Attention mixes each position's value with its neighbours': the same row in a new "
                      "sentence reads other rows, so its output changes — context enters here.")
    return answer
