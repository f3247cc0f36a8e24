"""A tour's parts: a step (a view of a page, its narration and questions) and a tour (ordered
steps). Apart from core.lessons.tours so that each tour's own module (core/lessons/tour_*.py) can
build its steps and tours.py can list it, with no import circle."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from core.lessons.questions import Question


@dataclass(frozen=True)
class TourStep:
    page: str                    # the page's url path ("" is Home)
    title: str
    narration: str               # Markdown, written here (never a visitor's text)
    # session values the step sets before its page opens: "keep_<key>" for URL-kept views,
    # a widget's own key otherwise
    view: dict = field(default_factory=dict)
    # a section the page shows first while this step is open (the example it narrates would
    # otherwise sit at the bottom of a long page); the page names its sections
    focus: str = ""
    # predict, then reveal: questions asked under the narration, answers computed from the table
    questions: tuple[Question, ...] = ()
    # the step's figure in the learner's notes (core.lessons.step_figures): Views -> go.Figure
    figure: Callable | None = None


@dataclass(frozen=True)
class Tour:
    title: str
    steps: tuple[TourStep, ...]


def _table(name: str, text: str | None = None, **extra) -> dict:
    view = {"keep_table": name, "keep_lookup_mode": "text"}
    if text is not None:
        view["keep_lookup_text"] = text
    view.update(extra)
    return view


def _view(question_key: str, table: str, prompt: str, answer, **how) -> Question:
    """A question that reads a model's or a whole vocabulary's results (answered, then computed)."""
    return Question(question_key, table, prompt, answer, reads="views", **how)
