"""The learner's notes: a tour as a Markdown file — each step's title and narration, the table it
shows as numbers, each question, the learner's answer and the right one — and as a web page that
also draws each step's figure (plotly.js inlined once, each figure's JSON beside it): images would
need kaleido and a Chrome, which a Community Cloud server does not have."""
from __future__ import annotations

import datetime
from typing import Callable

from core.lessons.questions import Question, Reveal, is_right
from core.lessons.tours import Tour
from core.tables import EmbeddingTable
from core.text import markdown_literal

MAX_NOTE_ROWS = 12      # a step's table is written out when it is this small (the seeds' are)


def notes_file_name(tour_name: str, day: datetime.date, extension: str = "md") -> str:
    """'seed004-notes-2026-11-30.md' (or .html)."""
    return f"{tour_name}-notes-{day.isoformat()}.{extension}"


# Text in the notes (a token, a table's name, an answer) shows as it is, in a table cell or a line:
# the escaping of every page's messages (each ASCII punctuation mark escaped, so no link, image,
# emphasis, HTML, heading, list, code or pipe; line breaks folded; bare addresses broken).
_cell = markdown_literal


def table_markdown(table: EmbeddingTable) -> str:
    """The table's rows as a Markdown table: token, id, the vector's coordinates."""
    if table.vocab_size > MAX_NOTE_ROWS:
        return f"*(a {table.vocab_size:,} × {table.width} table: too large to copy here)*"
    header = "| token | id | " + " | ".join(f"x{j}" for j in range(table.width)) + " |"
    rule = "|" + "---|" * (table.width + 2)
    rows = [f"| {_cell(token)} | {int(token_id)} | " + " | ".join(f"{v:g}" for v in vector) + " |"
            for token, token_id, vector in zip(table.tokens, table.ids, table.weight)]
    return "\n".join([header, rule, *rows])


def attempts_of(given) -> list:
    """A question's answers in the order given: `answers` maps a question to its one answer, or to
    the list of every attempt (a wrong first try stays in the notes beside the right one)."""
    if given is None:
        return []
    return list(given) if isinstance(given, (list, tuple)) else [given]


def attempt_texts(question: Question, reveal: Reveal, given, shown: Callable[[Question, object], str],
                  escape: Callable[[object], str] = str) -> list[str]:
    """'dog (not right)', 'is (right)': each attempt with its verdict, in order; `escape` applies to
    the learner's answer alone (it may be a token's text), not to our verdict."""
    return [f"{escape(shown(question, attempt))} ({'right' if is_right(question, reveal, attempt) else 'not right'})"
            for attempt in attempts_of(given)]


def _question_lines(question: Question, reveal: Reveal | str, given,
                    shown: Callable[[Question, object], str]) -> list[str]:
    lines = [f"**Question.** {question.prompt}", ""]
    if isinstance(reveal, str):
        return lines + [f"*{reveal}*", ""]
    tries = attempt_texts(question, reveal, given, shown, escape=_cell)
    if not tries:
        lines.append("- Your answer: *(not answered)*")
    elif len(tries) == 1:
        lines.append(f"- Your answer: {tries[0]}")
    else:
        lines.append("- Your answers, in order: " + "; ".join(f"{n}. {t}" for n, t in enumerate(tries, 1)))
    lines += [f"- The answer: **{_cell(reveal.right)}**", f"- {_cell(reveal.numbers)} {_cell(reveal.why)}", ""]
    return lines


def notes_markdown(tour_name: str, tour: Tour, answers: dict, table_of: Callable[[str], EmbeddingTable | None],
                   reveal_of: Callable[[Question], Reveal | str], shown: Callable[[Question, object], str],
                   day: datetime.date) -> str:
    """The whole tour as Markdown. answers: (tour_name, question key) -> the learner's answer, or
    every answer tried, in order (attempts_of);
    table_of(name) gives a step's table (None: a model's or a whole vocabulary's, named but not opened
    for a file); reveal_of(question) the computed answer or why there is none."""
    lines = [f"# {tour.title}", "", f"Notes from Embedding Lens, {day.isoformat()}. "
             f"Each step's figure is in the web page of these notes ({notes_file_name(tour_name, day, 'html')}); "
             "here each step's table is copied as numbers.", ""]
    for number, step in enumerate(tour.steps, start=1):
        lines += [f"## Step {number}. {step.title}", "", step.narration, ""]
        table_name = step.view.get("keep_table")
        if table_name:
            try:
                table = table_of(table_name)
                lines += [f"Table: {_cell(table_name)} (too large to copy here)", ""] if table is None else \
                    [f"Table: {_cell(table.name)}", "", table_markdown(table), ""]
            except ValueError as error:
                lines += [f"*(table {_cell(table_name)} could not be opened: {_cell(error)})*", ""]
        for question in step.questions:
            lines += _question_lines(question, reveal_of(question), answers.get((tour_name, question.key)), shown)
    return "\n".join(lines).rstrip() + "\n"
