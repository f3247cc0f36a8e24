"""Strangers' text is text: Markdown, HTML and LaTeX in a token, a URL or a name render literally.

The reference renderer is markdown-it-py (CommonMark, as Streamlit's renderer follows it),
independent of the escaping code under test; figures are read back from their JSON."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from helpers import open_page, visible
from markdown_it import MarkdownIt

from core.text import WORD_JOINER, html_literal, markdown_literal, shorten

PAYLOADS = [
    "[x](http://127.0.0.1:9/)",
    "![x](http://127.0.0.1:9/i.png)",
    '<img src=x onerror="alert(1)">',
    "**b**",
    "$x$",
    ":red[x]",
    "[l](javascript:alert(1))",
    "<a href=\"http://127.0.0.1:9/\">click</a>",
    "# heading\n- item",
    "`code` _em_ ~~s~~ | a | b |",
    "http://127.0.0.1:9/plain www.example.com",
    "\\*already escaped\\*",
]
RENDER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def rendered(markdown: str) -> str:
    return RENDER.render(markdown)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_literal_renders_as_the_same_text(payload):
    html = rendered(markdown_literal(payload))
    assert not re.search(r"<(a|img|strong|em|code|h\d|ul|li|table|del)\b", html), html
    # the text a reader sees is the payload itself (line breaks folded into spaces)
    shown = re.sub(r"</?p>\n?", "", html).strip().replace(WORD_JOINER, "")
    expected = payload.replace("\n", " ")
    assert shown == html_literal(expected).replace('"', "&quot;"), (shown, expected)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_literal_keeps_latex_and_directives_closed(payload):
    escaped = markdown_literal(payload)
    assert re.search(r"(?<!\\)[$:\[\]<>]", escaped) is None, escaped


def test_html_literal_and_shorten():
    assert html_literal('<a href="x">&amp;</a>') == '&lt;a href="x"&gt;&amp;amp;&lt;/a&gt;'
    assert shorten("abcdef", 4) == "abc…" and shorten("abc", 4) == "abc"


def test_figures_show_tokens_as_text():
    """Tick labels, hover texts, annotations and trace names of a figure keep no tag but the
    figure builders' own line breaks."""
    from core.figures.base import matrix_heatmap
    from core.figures.sending import plain_text_figure
    from core.figures.geometry import pca_scatter

    evil = '<a href="http://127.0.0.1:9/">click</a>'
    heat = plain_text_figure(matrix_heatmap(np.eye(2), "X", [evil, "b<br>"], [evil, "y"]))
    scatter = plain_text_figure(pca_scatter(np.eye(3)[:, :2], [evil, "b", "c"], np.arange(3), "t",
                                            labelled=[0], highlighted=[1]))
    for fig in (heat, scatter):
        spec = fig.to_json()
        assert "<a href" not in spec and "\\u003ca href" not in spec.lower()
        assert "&lt;a href" in spec
    assert json.loads(scatter.to_json())["layout"]["annotations"][0]["text"].startswith("&lt;a")


def test_url_payloads_are_shown_as_text_on_every_page():
    """AppTest: every message body on the page renders (with the reference renderer) to no link,
    no image, no bold of the payload; where the page quotes the payload, it quotes it whole."""
    payload = "**b** [x](http://127.0.0.1:9/) ![i](http://127.0.0.1:9/i.png) $x$ <img src=x onerror=1>"
    for page, query, quotes in [("lookup", {"table": f"hub:{payload}"}, True),
                                ("lookup", {"table": "hub:**b**"}, True),
                                ("lookup", {"text": payload}, True),
                                ("geometry", {"tokens": payload, "query": payload}, True),
                                ("attention", {"text": payload}, True),
                                ("maps", {"tokens": payload, "query": payload}, True),
                                ("directions", {"x_from": payload, "a": payload, "expected": payload}, True),
                                ("compare", {"cwords": payload}, True),
                                ("home", {"text": payload}, True)]:
        at = open_page(page, **query)
        assert not at.exception, [e.value for e in at.exception]
        bodies = [e.value for kind in ("error", "warning", "info", "markdown", "caption", "success")
                  for e in getattr(at, kind)]
        for body in bodies:
            html = rendered(body)
            assert "<a " not in html and "<img" not in html and "<strong>b</strong>" not in html, (page, body)
        quoted = [b for b in bodies if "**b**" in visible(b)]
        assert bool(quoted) == quotes, (page, query, bodies)
        assert all("\\*\\*b\\*\\*" in b for b in quoted)


def test_animation_frames_show_tokens_as_text():
    from core.figures.sending import plain_text_figure
    from core.figures.training import moving_points_animation

    frames = np.random.default_rng(0).standard_normal((3, 2, 2))          # (snapshots, V, 2)
    fig = plain_text_figure(moving_points_animation(frames, [0, 5, 10], ["<b>x</b>", "cat"], "moving"))
    spec = fig.to_json()
    assert "<b>x" not in spec and "&lt;b&gt;x" in spec


def test_figures_without_markup_are_passed_through_unchanged():
    from core.figures.sending import plain_text_figure
    from core.figures.geometry import pca_scatter

    fig = pca_scatter(np.eye(3)[:, :2], ["a", "b", "c"], np.arange(3), "plain")
    assert plain_text_figure(fig) is fig


def test_piece_marks_are_explained_only_when_present():
    from core.text import piece_marks_note

    note = piece_marks_note(iter(["The", "Ġcat", "##s"]))
    assert "Ġ = a space before" in note and "## = the piece continues" in note and "▁" not in note
    assert piece_marks_note(["plain", "words"]) is None


def test_masked_cells_have_their_own_colour():
    from core.attention import attention_head
    from core.figures.attention import head_figure

    result = attention_head(np.eye(3), None, np.eye(3), np.eye(3), np.eye(3), causal=True)
    fig = head_figure(result, ["a", "b", "c"], "M")
    masked = fig.data[1].z                                          # the −∞ layer: upper triangle only
    assert np.array_equal(~np.isnan(np.asarray(masked, dtype=float)), np.triu(np.ones((3, 3)), 1) == 1)
    assert fig.data[0].showscale is False                           # no meaningless colour bar


def test_no_figure_builder_puts_a_token_in_a_template():
    """Templates are passed through as markup: a token must reach a figure through text, hover
    text or customdata (escaped), never inside a template."""
    from core.attention import attention_head
    from core.figures.attention import attention_map, head_figure
    from core.figures.base import grouped_bars, line_chart, matrix_heatmap, vector_bars
    from core.figures.geometry import (
        arrows_figure,
        id_gap_scatter,
        norm_by_id_figure,
        pca_scatter,
    )
    from core.figures.compare import alignment_figure, overlap_histogram
    from core.figures.searched import SearchedPoint, searched_token_figure
    from core.figures.training import moving_points_animation

    evil = "<b>EVIL</b>"
    tokens = [evil, "b", "c"]
    result = attention_head(np.eye(3), None, np.eye(3), np.eye(3), np.eye(3))
    built = [matrix_heatmap(np.eye(3), evil, tokens, tokens), vector_bars(np.ones(3), evil, tokens, name=evil),
             grouped_bars({evil: np.ones(3)}, evil, tokens), line_chart([0, 1], {evil: np.ones(2)}, evil, evil, evil),
             pca_scatter(np.eye(3)[:, :2], tokens, np.arange(3), evil, labelled=[0], highlighted=[1]),
             pca_scatter(np.eye(3), tokens, np.arange(3), evil, labelled=[0]),
             arrows_figure(np.eye(3)[:, :2], tokens, evil), id_gap_scatter([1.0], [0.5], [2], [0.1], [evil], evil),
             norm_by_id_figure(np.arange(3), np.ones(3), tokens, evil, highlighted=[0]),
             attention_map(np.eye(3), tokens, evil),
             id_gap_scatter([1.0], [0.5], [], [], [], evil, searched=([2], [0.1], [evil])),
             arrows_figure(np.eye(3)[:, :2], tokens, evil, highlighted=0),
             pca_scatter(np.eye(3), tokens, np.arange(3), evil, highlighted=[0], axis_titles=(evil,) * 3),
             alignment_figure(np.eye(3), np.eye(3), np.eye(3), tokens, [0]), overlap_histogram(np.ones(3), 2),
             head_figure(result, tokens, "A"),
             moving_points_animation(np.zeros((2, 3, 2)), [0, 1], tokens, evil),
             searched_token_figure(np.eye(3)[:, :2], np.arange(3), np.ones(3), SearchedPoint(np.zeros(2), 0, 1.0, evil, evil),
                                   [SearchedPoint(np.ones(2), 1, 2.0, evil, evil)], evil)]

    def templates(node, key=""):
        if isinstance(node, dict):
            return [t for k, v in node.items() for t in templates(v, k)]
        if isinstance(node, list):
            return [t for item in node for t in templates(item, key)]
        return [node] if key in ("hovertemplate", "texttemplate") and isinstance(node, str) else []

    for fig in built:
        assert not [t for t in templates(fig.to_plotly_json()) if "EVIL" in t]


NOTE_PAYLOADS = PAYLOADS + ["a|b", "x\n# heading", "1. list", "> quote", "---", "<https://127.0.0.1:9/>",
                            "[ref]: http://127.0.0.1:9/", "&amp; &#60;", "    indented", "\\", "*", "__u__",
                            "<!-- c -->", "x@example.com"]


def test_notes_show_hostile_tokens_names_and_answers_as_text():
    """Issue 32 "also seen": the Markdown notes escaped only |, backtick and backslash. With every
    stranger's text in them (the table's tokens and name, the learner's answers, the answers' words)
    the notes render, in the reference renderer, to exactly the structure they have with plain words
    in those places: no link, image, HTML, emphasis, heading or list of a token's making, the table
    keeping its columns; and each payload reads as itself."""
    import datetime

    from core.lessons.notes import notes_markdown
    from core.lessons.questions import Reveal
    from core.lessons.tours import TOURS
    from core.tables import EmbeddingTable

    def notes(words):
        table = EmbeddingTable(words[0], np.eye(len(words), 2, dtype=np.float32), tuple(words), np.arange(len(words)))
        tour = TOURS["seed004"]
        answers = {("seed004", question.key): words[i % len(words)]
                   for i, question in enumerate(q for step in tour.steps for q in step.questions)}
        return notes_markdown("seed004", tour, answers, lambda name: table,
                              lambda question: Reveal(words[1], None, words[2], words[3]),
                              lambda question, given: str(given), datetime.date(2026, 12, 2))

    def structure(markdown):
        return [(token.type, token.tag) for token in RENDER.parse(markdown)] + \
            [(child.type, child.tag) for token in RENDER.parse(markdown) for child in token.children or []
             if child.type != "text"]

    for start in range(0, len(NOTE_PAYLOADS), 10):     # tables of 10 rows: the notes copy tables of up to 12
        payloads = NOTE_PAYLOADS[start:start + 10]
        hostile = notes(payloads)
        assert structure(hostile) == structure(notes([f"word{i}" for i in range(len(payloads))]))
        html = RENDER.render(hostile)
        assert "<table>" in html and not re.search(r"<(a|img|code|del|blockquote|ol|hr|script)\b|<!--", html), html
        shown = html.replace(WORD_JOINER, "")
        for payload in payloads:
            assert html_literal(payload.replace("\n", " ")).replace('"', "&quot;") in shown, payload
