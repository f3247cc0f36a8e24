"""The learner's notes as a web page: every step's figure drawn from the step's own table, carried as
Plotly JSON next to plotly.js; texts escaped; the answers as in the Markdown notes."""
from __future__ import annotations

import datetime
import json
import re

import numpy as np
from helpers import plotly_array

from core.figures.base import vector_bars
from core.figures.notes import figure_json, plotly_script
from core.lessons.notes_page import StepFigure, notes_html
from core.lessons.questions import Reveal
from core.lessons.tours import SEED_TOURS
from core.tables import make_table
from core.toy_tables import toy_table

DAY = datetime.date(2026, 11, 30)


class TableViews:
    def __init__(self, changed: dict | None = None):
        self.changed = changed or {}

    def table(self, name):
        return self.changed.get(name) or toy_table(name)


def _figures(tour, views) -> list[StepFigure]:
    return [StepFigure(json=figure_json(step.figure(views))) for step in tour.steps]


def _page(name, views, answers=None, plotly_js="/* js */"):
    tour = SEED_TOURS[name]
    return notes_html(name, tour, answers or {}, views.table, lambda q: q.answer(views.table(q.table)),
                      lambda q, given: str(given), DAY, _figures(tour, views), plotly_js)


def _specs(page: str) -> list[dict]:
    return [json.loads(found) for found in
            re.findall(r"<script type='application/json' id='figure-\d+-data'>(.*?)</script>", page, re.S)]


def test_every_seed_step_has_its_figure_in_the_page():
    for name, tour in SEED_TOURS.items():
        page = _page(name, TableViews())
        specs = _specs(page)
        assert len(specs) == len(tour.steps) == page.count("<div class='figure'"), name
        assert all(spec["data"] for spec in specs), name
        assert page.count("<h2>") == len(tour.steps) and "Plotly.newPlot" in page


def test_a_changed_table_changes_the_figure():
    seed000 = toy_table("seed000")
    weight = np.array(seed000.weight)
    weight[2] = [7.0, 0.0, 0.0, 0.0]                               # γ's row, which "γ α" reads first
    first = plotly_array(_specs(_page("seed000", TableViews()))[0]["data"][0]["z"])
    changed = plotly_array(_specs(_page("seed000", TableViews({"seed000": seed000.with_weight(weight, "test")})))[0]
                           ["data"][0]["z"])
    assert first[0].tolist() == [0, 1, 0, 1] and changed[0].tolist() == [7, 0, 0, 0]     # X's row 0 is γ's


def test_strangers_text_is_escaped_and_answers_are_written():
    table = make_table("t", {"</script><b>x</b>": [1.0, 0.0], "y": [0.0, 1.0]}, "test")
    figure = StepFigure(json=figure_json(vector_bars(np.array([1.0, 2.0]), "bars", ["</script><b>x</b>", "y"])))
    tour = SEED_TOURS["seed003"]
    question = tour.steps[0].questions[0]
    page = notes_html("seed003", tour, {("seed003", question.key): 5.0}, lambda name: table,
                      lambda q: Reveal("5.00", 5.0, "cat · dog = 5.00.", "why"),
                      lambda q, g: str(g) if g is None else f"{g:.2f}", DAY,
                      [figure, StepFigure(missing="no figure <here>")], "/* js */")
    assert "</script><b>" not in page.split("<body>", 1)[1].replace("<\\/script>", "")
    assert "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in page                  # the table cell
    assert "no figure &lt;here&gt;" in page
    assert "Your answer: 5.00 (right)" in page and "<strong>5.00</strong>" in page
    assert _specs(page)[0]["data"][0]["x"][0] == "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;"   # Plotly shows it as text


def test_plotly_js_is_the_installed_library():
    script = plotly_script()
    assert len(script) > 1_000_000 and "newPlot" in script and "</script" not in script.lower()


def test_a_model_tables_step_names_its_table_without_opening_it():
    from core.lessons.notes import notes_markdown
    from core.lessons.tours import VIEW_TOURS

    tour = VIEW_TOURS["hidden"]
    opened = []

    def table_of(name):
        opened.append(name)
        return None
    not_yet = lambda question: "Answer it in the tour to see the computed answer."       # noqa: E731
    markdown = notes_markdown("hidden", tour, {}, table_of, not_yet, lambda q, g: str(g), DAY)
    page = notes_html("hidden", tour, {}, table_of, not_yet, lambda q, g: str(g), DAY,
                      [StepFigure(missing="Answer this step's question to have its figure here.")] * len(tour.steps), "")
    assert "Table: minilm (too large to copy here)" in markdown and "Table: smollm2 (too large" in page
    assert page.count("Answer this step&#x27;s question to have its figure here.") == len(tour.steps)
    assert opened == [step.view["keep_table"] for step in tour.steps] * 2
