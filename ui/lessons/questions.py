"""Predict, then reveal, in the tour bar: a step's questions (core.lessons.questions) asked with choices
or a number; the right answer hidden until the learner answers, then shown with its numbers and why.
Answers live in this session only (ANSWERS), never in the URL or on the server."""
from __future__ import annotations

import logging

import streamlit as st

from core.lessons.questions import Question, Reveal, is_right
from core.tables import EmbeddingTable
from core.text import codepoints_note, markdown_literal as md
from ui import tables
from ui.lessons.question_views import AppViews

LOG = logging.getLogger("embedding_lens.questions")
ANSWERS = "tour_answers"        # (tour, question key) -> the learner's answer, this session only
UNANSWERED = "_tour_unanswered"  # the question whose Check was pressed with nothing chosen
ATTEMPTS = "tour_attempts"      # (tour, question key) -> every answer checked, in order (for the notes)


def answers() -> dict:
    return st.session_state.setdefault(ANSWERS, {})


def noted_answers() -> dict:
    """For the notes: (tour, question key) -> every answer checked, in order; an answer set without a
    check (none in the app) counts as one attempt. Asking again keeps the earlier attempts."""
    noted = {key: list(tries) for key, tries in st.session_state.get(ATTEMPTS, {}).items()}
    for key, given in answers().items():
        tries = noted.setdefault(key, [])
        if not tries or tries[-1] != given:
            tries.append(given)
    return noted


def table_for(name: str) -> EmbeddingTable:
    """The table a question is about, as on screen: this session's edited copy when it is the
    sidebar's table, else the shared one."""
    return tables.active_table() if tables.current_table_name() == name else tables.base_table(name)


def noted_table(name: str) -> EmbeddingTable | None:
    """A step's table for the notes: a toy table or an upload as on screen; None for a model's or
    GloVe's (too large to copy, and opening it for a file would load a model the page has not)."""
    return table_for(name) if name in tables.own_table_names() else None


NOT_YET = "Answer it in the tour to see the computed answer."


class ScreenViews(AppViews):
    """The views as this session sees them: a toy table with this session's edits."""

    def table(self, name: str) -> EmbeddingTable:
        return table_for(name)


def reveal_of(question: Question) -> Reveal | str:
    """The computed answer, or why it cannot be computed here (plain text)."""
    if question.reads == "views":
        try:
            return question.answer(AppViews())
        except ValueError as error:
            return f"This question cannot be answered here: {error}"
        except Exception:
            LOG.exception("computing the answer of %r failed", question.key)
            return "This question's answer could not be computed on this server (the server's log says why)."
    try:
        return question.answer(table_for(question.table))
    except ValueError as error:
        return f"This question is about the seed's table and cannot be answered from the one on screen: {error}"


def noted_reveal(tour: str, question: Question) -> Reveal | str:
    """For the notes: a view question's answer only once answered (its results are then cached; an
    unanswered one would load a model for a file)."""
    if question.reads == "views" and answers().get((tour, question.key)) is None:
        return NOT_YET
    return reveal_of(question)


def _widget_key(tour: str, question: Question) -> str:
    return f"tourq_{tour}_{question.key}"


def _check(tour: str, question: Question) -> None:
    """The form's submit: read the widget's value now (the args were built a run before)."""
    given = st.session_state.get(_widget_key(tour, question))
    if given is None:
        st.session_state[UNANSWERED] = (tour, question.key)
        return
    answers()[(tour, question.key)] = given
    st.session_state.setdefault(ATTEMPTS, {}).setdefault((tour, question.key), []).append(given)


def _ask_again(tour: str, question: Question) -> None:
    answers().pop((tour, question.key), None)
    st.session_state.pop(_widget_key(tour, question), None)


def ask(tour: str, question: Question) -> None:
    """One question: the form until answered, then the verdict, the numbers and why. A table's answer
    is computed first (a table that cannot answer gets no form); a view's once answered (it may run
    a model, which only the learner's answer should cost)."""
    given = answers().get((tour, question.key))
    reveal = reveal_of(question) if question.reads == "table" or given is not None else None
    if isinstance(reveal, str):
        st.caption(md(reveal))
        if given is not None:
            _again_button(tour, question)
        return
    if given is None:
        _form(tour, question)
        return
    _verdict(tour, question, reveal, given)


def _form(tour: str, question: Question) -> None:
    key = _widget_key(tour, question)
    with st.form(f"{key}_form", border=False):
        if question.choices:
            st.radio(f"❓ {md(question.prompt)}", question.choices, index=None, key=key, horizontal=True,
                     # token strings among the choices are text; a character a phone's font may lack is named
                     format_func=lambda choice: md(choice + codepoints_note(choice)))
        else:
            step = 1.0 / 10 ** question.decimals
            st.number_input(f"❓ {md(question.prompt)}", value=None, key=key, step=step if question.decimals else 1,
                            format=f"%.{question.decimals}f" if question.decimals else "%d",
                            placeholder="Type your guess")
        st.form_submit_button("Check my answer", on_click=_check, args=(tour, question))
    if st.session_state.get(UNANSWERED) == (tour, question.key):
        st.session_state.pop(UNANSWERED)
        st.caption("Choose or type an answer first, then check it.")


def shown_answer(question: Question, given) -> str:
    if question.choices or given is None:
        return str(given)
    return f"{float(given):.{question.decimals}f}"


def _verdict(tour: str, question: Question, reveal: Reveal, given) -> None:
    st.markdown(f"❓ {md(question.prompt)}")
    if is_right(question, reveal, given):
        st.success(f"✅ Right: {md(reveal.right)}.")
    else:
        st.info(f"Not quite: you said {md(shown_answer(question, given))}; the answer is **{md(reveal.right)}**.")
    st.caption(f"{md(reveal.numbers)} {md(reveal.why)}")
    _again_button(tour, question)


def _again_button(tour: str, question: Question) -> None:
    st.button("Ask me again", key=f"{_widget_key(tour, question)}_again", on_click=_ask_again,
              args=(tour, question))
