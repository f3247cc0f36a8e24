"""Predict, then reveal, on the page itself: a sentence of a page that states what a pending tour
question asks for is held back until the learner has answered it (the tour bar asks it above).

A question names the page sentences that give its answer away (Question.holds_back, e.g. "ids": the
Lookup page's sentences listing the text's ids); the page calls `say(topic, draw)` around each such
sentence. The figures and tables stay: they are where the learner reads the answer off.

A later step's question holds its sentences too, on the earlier steps that ask nothing of that topic
(the teacher's rehearsal or another student may have made the result already); there, a figure that only
illustrates it may wait as well (`for_later`).
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from core.lessons.tours import TOURS

# The open tour step and the learner's answers, as ui.lessons.tours and ui.lessons.questions keep them in the session
# (read here by name: pages import this module, and ui.lessons.questions imports the pages' view modules).
TOUR, TOUR_STEP, ANSWERS = "keep_tour", "keep_tour_step", "tour_answers"

HELD_BACK = "Held back until you answer the tour's question above: {prompt}"
# a later step's question: its page may already show the answer (made by the teacher's rehearsal, another student)
ABOVE, LATER = "until you answer the tour's question above", "until step {step} of the tour asks"


def _holding(topic: str) -> tuple[str, int | None] | None:
    """(prompt, None) of the open step's unanswered question that `topic`'s sentence would answer; else
    (prompt, step number) of a later step's, unless the open step's own questions speak for `topic`
    (an answered question of this step shows its sentence, whatever a later step asks of another view);
    else None."""
    name = st.session_state.get(TOUR, "")
    if name not in TOURS:
        return None
    steps = TOURS[name].steps
    index = min(int(st.session_state.get(TOUR_STEP, 0)), len(steps) - 1)
    answered = st.session_state.get(ANSWERS, {})
    for number, step in enumerate(steps[index:], start=index + 1):
        speaks = [question for question in step.questions if topic in question.holds_back]
        for question in speaks:
            if answered.get((name, question.key)) is None:
                return question.prompt, (None if number == index + 1 else number)
        if speaks and number == index + 1:
            return None
    return None


def pending(topic: str) -> str | None:
    """The prompt of the unanswered tour question (this step's, or a later one's) that `topic`'s sentence
    would answer, else None."""
    holding = _holding(topic)
    return None if holding is None else holding[0]


def for_later(topic: str) -> bool:
    """Whether `topic` is held for a later step's question: then what only illustrates it (a figure the open
    step does not ask about) waits too."""
    holding = _holding(topic)
    return holding is not None and holding[1] is not None


def _said(template: str, topic: str) -> str:
    prompt, step = _holding(topic)
    text = template.format(prompt=prompt)
    return text if step is None else text.replace(ABOVE, LATER.format(step=step))


def say(topic: str, draw: Callable[[], object]) -> None:
    """Draw the sentence (`draw()`), or, while a question it would answer is pending, say where it went."""
    if _holding(topic) is None:
        draw()
    else:
        st.caption(_said(HELD_BACK, topic))


def held_frame(topics: tuple[str, ...], frame, keep: tuple[str, ...] = ("token", "id"),
               marks: tuple[str, ...] = (" (input)", " ✓"),        # an input on top; the expected word
               said: str | None = None):
    """A table whose numbers or marks answer a pending question (a rank, a score, "king (input)" on top):
    while one of `topics` is pending, only its `keep` columns in the table's own order, the `marks` taken
    off their cells, and a caption saying what waits (`said`: HELD_COLUMNS unless the table's order has
    another name). The order stays: a learner who looks can still read the answer off by counting, but the
    page does not state it."""
    topic = next((t for t in topics if _holding(t) is not None), None)
    if topic is None:
        return frame
    shown = frame[[column for column in keep if column in frame.columns]].copy()
    def unmarked(cell):
        for mark in marks:
            cell = cell.replace(mark, "") if isinstance(cell, str) else cell
        return cell
    for column in shown.columns:
        shown[column] = shown[column].map(unmarked)
    st.caption(_said(said or HELD_COLUMNS, topic))
    return shown


HELD_COLUMNS = "Listed best first; ranks, scores and marks held back until you answer the tour's question above: {prompt}"
HELD_SUSPICIOUS = ("Listed most suspicious first; indicator, rank and candidate held back until you answer the "
                   "tour's question above: {prompt}")
HELD_DOTS = ("Each dot product written out with its sum, cosine and angle held back until you answer the tour's "
             "question above: {prompt}")
HELD_TABLES = (HELD_COLUMNS, HELD_SUSPICIOUS, HELD_DOTS)
