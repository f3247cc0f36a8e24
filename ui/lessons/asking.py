"""Predict, then reveal, on the page itself: a sentence of a page that states what a pending tour
question asks for is held back until the learner has answered it (the tour bar asks it above).

A question names the page sentences that give its answer away (Question.holds_back, e.g. "ids": the
Lookup page's sentences listing the text's ids); the page calls `say(topic, draw)` around each such
sentence. The figures and tables stay: they are where the learner reads the answer off.
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from core.lessons.tours import TOURS

# The open tour step and the learner's answers, as ui.lessons.tours and ui.lessons.questions keep them in the session
# (read here by name: pages import this module, and ui.lessons.questions imports the pages' view modules).
TOUR, TOUR_STEP, ANSWERS = "keep_tour", "keep_tour_step", "tour_answers"

HELD_BACK = "Held back until you answer the tour's question above: {prompt}"


def pending(topic: str) -> str | None:
    """The prompt of the open step's unanswered question that `topic`'s sentence would answer, else None."""
    name = st.session_state.get(TOUR, "")
    if name not in TOURS:
        return None
    index = min(int(st.session_state.get(TOUR_STEP, 0)), len(TOURS[name].steps) - 1)
    answered = st.session_state.get(ANSWERS, {})
    for question in TOURS[name].steps[index].questions:
        if topic in question.holds_back and answered.get((name, question.key)) is None:
            return question.prompt
    return None


def say(topic: str, draw: Callable[[], object]) -> None:
    """Draw the sentence (`draw()`), or, while a question it would answer is pending, say where it went."""
    prompt = pending(topic)
    if prompt is None:
        draw()
    else:
        st.caption(HELD_BACK.format(prompt=prompt))


def held_frame(topics: tuple[str, ...], frame, keep: tuple[str, ...] = ("token", "id"), marks: tuple[str, ...] = (" (input)",),
               said: str | None = None):
    """A table whose numbers or marks answer a pending question (a rank, a score, "king (input)" on top):
    while one of `topics` is pending, only its `keep` columns in the table's own order, the `marks` taken
    off their cells, and a caption saying what waits (`said`: HELD_COLUMNS unless the table's order has
    another name). The order stays: a learner who looks can still read the answer off by counting, but the
    page does not state it."""
    prompt = next((p for p in map(pending, topics) if p is not None), None)
    if prompt is None:
        return frame
    shown = frame[[column for column in keep if column in frame.columns]].copy()
    def unmarked(cell):
        for mark in marks:
            cell = cell.replace(mark, "") if isinstance(cell, str) else cell
        return cell
    for column in shown.columns:
        shown[column] = shown[column].map(unmarked)
    st.caption((said or HELD_COLUMNS).format(prompt=prompt))
    return shown


HELD_COLUMNS = "Listed best first; ranks, scores and marks held back until you answer the tour's question above: {prompt}"
HELD_SUSPICIOUS = ("Listed most suspicious first; indicator, rank and candidate held back until you answer the "
                   "tour's question above: {prompt}")
HELD_TABLES = (HELD_COLUMNS, HELD_SUSPICIOUS)
