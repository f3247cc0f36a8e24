"""The learner's notes as one self-contained web page: the Markdown notes' content (core.lessons.notes)
with each step's figure drawn by plotly.js, which is inlined once, so the file opens offline in any
browser, and prints to PDF from there. Every text from a table or the learner is HTML-escaped; the
narration's own **bold** and *italic* (written in core.lessons.tours) become tags."""
from __future__ import annotations

import datetime
import html
import re
from dataclasses import dataclass
from typing import Callable

from core.lessons.notes import MAX_NOTE_ROWS, attempt_texts
from core.lessons.questions import Question, Reveal
from core.lessons.tours import Tour
from core.tables import EmbeddingTable


@dataclass(frozen=True)
class StepFigure:
    """A step's figure as Plotly JSON (core.figures.notes.figure_json), or why there is none."""

    json: str = ""
    missing: str = ""


_STYLE = """body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:54rem;margin:0 auto;
padding:1rem;line-height:1.45;color:#1f2937}h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;
border-top:1px solid #ddd;padding-top:1rem}.figure{width:100%;min-height:2rem}.missing{color:#6b7280;
font-style:italic}table{border-collapse:collapse;font-size:.9rem;overflow-x:auto;display:block}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}.question{background:#f3f4f6;padding:.5rem 1rem;
border-radius:6px}"""

_DRAW = """<script>document.querySelectorAll('div.figure').forEach(function (div) {
  var spec = JSON.parse(document.getElementById(div.id + '-data').textContent);
  Plotly.newPlot(div, spec.data, spec.layout, {responsive: true, displaylogo: false});
});</script>"""


def _narration(markdown: str) -> str:
    """The tour's own Markdown (bold, italic) as HTML; everything else escaped."""
    text = html.escape(markdown)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"\*(.+?)\*", r"<em>\1</em>", text)


def _table_html(table: EmbeddingTable) -> str:
    if table.vocab_size > MAX_NOTE_ROWS:
        return f"<p class='missing'>(a {table.vocab_size:,} × {table.width} table: too large to copy here)</p>"
    head = "".join(f"<th>x{j}</th>" for j in range(table.width))
    rows = "".join(f"<tr><td>{html.escape(str(token))}</td><td>{int(token_id)}</td>"
                   + "".join(f"<td>{v:g}</td>" for v in vector) + "</tr>"
                   for token, token_id, vector in zip(table.tokens, table.ids, table.weight))
    return f"<table><tr><th>token</th><th>id</th>{head}</tr>{rows}</table>"


def _question_html(question: Question, reveal: Reveal | str, given, shown: Callable[[Question, object], str]) -> str:
    parts = [f"<p><strong>Question.</strong> {html.escape(question.prompt)}</p>"]
    if isinstance(reveal, str):
        parts.append(f"<p class='missing'>{html.escape(reveal)}</p>")
    else:
        tries = attempt_texts(question, reveal, given, shown)
        if not tries:
            parts.append("<p>Your answer: <em>(not answered)</em></p>")
        elif len(tries) == 1:
            parts.append(f"<p>Your answer: {html.escape(tries[0])}</p>")
        else:
            parts.append("<p>Your answers, in order:</p><ol>"
                         + "".join(f"<li>{html.escape(t)}</li>" for t in tries) + "</ol>")
        parts.append(f"<p>The answer: <strong>{html.escape(reveal.right)}</strong></p>"
                     f"<p>{html.escape(reveal.numbers)} {html.escape(reveal.why)}</p>")
    return "<div class='question'>" + "".join(parts) + "</div>"


def _figure_html(number: int, figure: StepFigure | None) -> str:
    if figure is None:
        return ""
    if not figure.json:
        return f"<p class='missing'>{html.escape(figure.missing)}</p>"
    return (f"<div class='figure' id='figure-{number}'></div>"
            f"<script type='application/json' id='figure-{number}-data'>{figure.json}</script>")


def notes_html(tour_name: str, tour: Tour, answers: dict, table_of: Callable[[str], EmbeddingTable | None],
               reveal_of: Callable[[Question], Reveal | str], shown: Callable[[Question, object], str],
               day: datetime.date, figures: list[StepFigure | None], plotly_js: str) -> str:
    """The notes page. figures: one per step (None: the step has no figure); plotly_js: the script."""
    body = [f"<h1>{html.escape(tour.title)}</h1>",
            f"<p>Notes from Embedding Lens, {day.isoformat()}: each step's figure, table, questions and answers."
            " To keep a PDF, print this page to PDF from the browser.</p>"]
    for number, (step, figure) in enumerate(zip(tour.steps, figures), start=1):
        body += [f"<h2>Step {number}. {html.escape(step.title)}</h2>", f"<p>{_narration(step.narration)}</p>",
                 _figure_html(number, figure)]
        table_name = step.view.get("keep_table")
        if table_name:
            try:
                table = table_of(table_name)
                body += [f"<p>Table: {html.escape(table_name)} (too large to copy here)</p>"] if table is None else \
                    [f"<p>Table: {html.escape(table.name)}</p>", _table_html(table)]
            except ValueError as error:
                body.append(f"<p class='missing'>(table {html.escape(table_name)} could not be opened: "
                            f"{html.escape(str(error))})</p>")
        for question in step.questions:
            body.append(_question_html(question, reveal_of(question), answers.get((tour_name, question.key)), shown))
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(tour.title)}</title><style>{_STYLE}</style>"
            f"<script>{plotly_js}</script></head><body>" + "\n".join(body) + _DRAW + "</body></html>\n")
