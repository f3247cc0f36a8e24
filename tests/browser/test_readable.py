"""Readable at 1366 × 768 (issue 21), as a person sees it in Chromium: the sidebar's table picker
shows its whole label, wide heatmaps print no illegible cell numbers, and in presentation mode no
text of a figure or inline code is under 18 px (the logit lens's rank ticks were 13.5 px, the
renamed ids 15.6 px)."""
from __future__ import annotations

import re

import pytest
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle

require_chromium()
PROJECTED_PX = 18
SMALL_SCREEN = {"width": 1366, "height": 768}


# The picker's text measured in its own font against the room its input has.
PICKER_JS = """() => {
  const input = document.querySelector('[data-testid="stSidebar"] [data-testid="stSelectbox"] input');
  const style = getComputedStyle(input), context = document.createElement('canvas').getContext('2d');
  context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {text: input.value, width: context.measureText(input.value).width, room}; }"""
FIGURE_FONTS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(g => {
  const texts = [...g.querySelectorAll('text')].filter(t => t.textContent.trim());
  return {title: ((g.layout && g.layout.title && g.layout.title.text) || '').replace(/<br>/g, ' '),
          smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize))),
          cells: g.querySelectorAll('.heatmaplayer text').length,
          ticks: [...g.querySelectorAll('.y2tick text')].map(t => t.textContent)}; })"""
CODE_FONTS_JS = """() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] code')]
  .map(c => parseFloat(getComputedStyle(c).fontSize))"""


def test_sidebar_picker_shows_the_whole_label(server, page):
    page.set_viewport_size(SMALL_SCREEN)
    for table in ("minilm", "smollm2", "glove-50d"):
        page.goto(f"{server}/lookup?table={table}")
        wait_until_idle(page, 0, timeout=180)
        picker = page.evaluate(PICKER_JS)
        assert picker["width"] <= picker["room"], picker


def test_wide_heatmaps_and_inline_code_when_presenting(server, page):
    page.set_viewport_size(SMALL_SCREEN)
    page.goto(f"{server}/lookup?table=glove-50d&present=1")
    wait_until_idle(page, 4, timeout=180)
    figures = page.evaluate(FIGURE_FONTS_JS)
    wide = [f for f in figures if "× 50)" in f["title"]]
    assert wide and all(f["cells"] == 0 for f in wide), wide          # 50 columns: values in the hover only
    assert all(f["smallest"] >= PROJECTED_PX for f in figures), figures
    code = page.evaluate(CODE_FONTS_JS)
    assert code and min(code) >= PROJECTED_PX, code                   # "New ids for the same text: `[…]`"
    page.screenshot(path=str(SCREENSHOTS / "readable-lookup-present-1366.png"), full_page=True)


def test_logit_lens_ranks_written_in_full_when_presenting(server, page):
    page.set_viewport_size({"width": 1366, "height": 4000})
    page.goto(f"{server}/models?table=smollm2&present=1")
    page.get_by_text("p and rank of").first.wait_for(timeout=300_000)
    wait_until_idle(page, 5, timeout=300)
    figures = page.evaluate(FIGURE_FONTS_JS)
    lens, = [f for f in figures if f["title"].startswith("<b><b>p and rank of") or "p and rank of" in f["title"]]
    assert lens["ticks"] and all(re.fullmatch(r"1|[13]0*|[13]0{0,2},000|[13]0,000", t.replace("\u2212", ""))
                                 for t in lens["ticks"]), lens["ticks"]
    assert all(f["smallest"] >= PROJECTED_PX for f in figures), [(f["title"], f["smallest"]) for f in figures]
    page.screenshot(path=str(SCREENSHOTS / "readable-models-present-1366.png"), full_page=True)


# Each plot's annotation boxes (the token labels) as drawn, and the pairs of them that meet.
LABEL_OVERLAPS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(g => {
  const boxes = [...g.querySelectorAll('.annotation-text-g')].map(a => {
    const r = a.getBoundingClientRect(); return {text: a.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; })
    .filter(b => b.text.trim() && b.x1 > b.x0);
  const meet = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
    if (a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) meet.push([a.text, b.text]); }));
  return {title: ((g.layout && g.layout.title && g.layout.title.text) || '').replace(/<br>/g, ' '), labels: boxes.length, meet}; })"""


@pytest.mark.parametrize("path, plots", [
    ("geometry?table=glove-50d", 5), ("directions?table=glove-50d&present=1", 1),
    ("geometry?table=seed004&tokens=The%20cat%20is%20dog&query=sleeping&present=1", 5)])
def test_token_labels_do_not_overlap(server, page, path, plots):
    """GloVe's cat–queen / cat–king and seed 004's The–dog / is–dog printed over each other."""
    page.set_viewport_size(SMALL_SCREEN)
    page.goto(f"{server}/{path}")
    wait_until_idle(page, plots, timeout=180)
    plots = page.evaluate(LABEL_OVERLAPS_JS)
    assert sum(p["labels"] for p in plots) >= 4, plots
    assert all(not p["meet"] for p in plots), [p for p in plots if p["meet"]]
