"""Hidden in the table as a person uses it, in Chromium, on MiniLM: the under-trained candidates
with the [unused…] rows on top, the z-score toggle changing the numbers shown, the candidates'
CSV downloaded and read back, and the page readable in presentation mode (figure text ≥ 18 px,
nothing wider than its box). Screenshots of both are saved in tests/screenshots/."""
from __future__ import annotations

import csv
import re

from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle
from test_readable import FIGURE_FONTS_JS, PROJECTED_PX

require_chromium()
PAGE = "hidden?table=minilm&tokens=king%20queen%20cat"
PLOTS = 4                     # the indicator's histogram, the candidates' map, the rogue dimensions, the layers

# Each grid's rows as text (Streamlit's data grid keeps an accessible table of its cells in the page).
GRID_ROWS_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(g =>
  [...g.querySelectorAll('tr')].map(r => [...r.querySelectorAll('th, td')].map(c => c.textContent.trim())))"""
METRICS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid="stMetric"]')].map(m =>
  [m.querySelector('[data-testid="stMetricLabel"]').textContent.trim(),
   m.querySelector('[data-testid="stMetricValue"]').textContent.trim()]))"""
# The page's boxes whose content is wider than the box: a metric, a table or an alert cut or scrolled sideways.
OVERFLOWING_JS = """() => [...document.querySelector('[data-testid="stMain"]').querySelectorAll(`[data-testid="stMetricValue"], [data-testid="stTable"],
  [data-testid="stAlertContainer"], [data-testid="stCaptionContainer"]`)]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60))"""

# In presentation mode: the smallest text of the metrics' deltas, and the plain tables' cells.
PRESENTED_TEXT_JS = """() => {
  const smallest = sel => Math.min(...[...document.querySelectorAll(sel)]
    .filter(e => e.childNodes.length && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
    .map(e => parseFloat(getComputedStyle(e).fontSize)));
  return {deltas: smallest('[data-testid="stMetricDelta"] *'), cells: smallest('[data-testid="stTable"] td'),
          changes: [...document.querySelectorAll('[data-testid="stTable"]')].filter(t => t.textContent.includes('r(cosine'))
                   .map(t => [...t.querySelectorAll('td')].map(c => c.textContent.trim()))}; }"""


def open_hidden(page, server: str, query: str = "") -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{server}/{PAGE}{query}")
    page.get_by_text("Layer by layer").first.wait_for(timeout=400_000)      # MiniLM loads once per server
    wait_until_idle(page, PLOTS, timeout=400)


def test_candidates_toggle_and_csv_as_a_person_does(server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 6400}, accept_downloads=True)
    page = context.new_page()
    try:
        open_hidden(page, server)
        candidates = next(rows for rows in page.evaluate(GRID_ROWS_JS) if rows and "indicator" in rows[0])
        tokens = [row[candidates[0].index("token")] for row in candidates[1:11]]
        assert sum(t.startswith("[unused") for t in tokens) >= 7, tokens      # ranked by row length: [MASK], then [unused…]
        before = page.evaluate(METRICS_JS)
        page.get_by_text("Standardise the dimensions").click()
        page.wait_for_function(f"() => ({METRICS_JS})()['r(cosine, id gap), every pair'] !== "
                               f"{before['r(cosine, id gap), every pair']!r}", timeout=120_000)
        wait_until_idle(page, PLOTS, timeout=120)
        after = page.evaluate(METRICS_JS)
        assert "z=True" in page.url
        # the page's numbers, tested against numpy in tests/pages/test_page_hidden.py
        assert (before["Mean cosine, every pair (exact)"], after["Mean cosine, every pair (exact)"]) == ("0.0181", "0.0024")
        assert (before["r(cosine, id gap), every pair"], after["r(cosine, id gap), every pair"]) == ("+0.0058", "−0.0351")
        page.screenshot(path=str(SCREENSHOTS / "hidden-minilm-standardised.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_role("button", name=re.compile(r"undertrained-.*-minilm\.csv \(611 rows\)")).click()
        # named after what it holds: its indicator, its share and its table (ui.hidden.vocab_health.candidates_file_name)
        assert re.fullmatch(r"undertrained-[a-z0-9_-]+-lowest-2pct-minilm\.csv", download.value.suggested_filename)
        with open(download.value.path(), newline="", encoding="utf-8") as file:
            rows = list(csv.reader(file))
        assert rows[0][:4] == ["rank", "token", "id", "indicator"] and len(rows) == 612
        assert [row[1] for row in rows[1:11]] == tokens                        # the table's order, every candidate
        assert not [cell for row in rows for cell in row if cell.startswith(("=", "+", "@"))]
    finally:
        context.close()


def test_presentation_mode_is_readable(server, browser):
    context = browser.new_context(viewport={"width": 1366, "height": 7000})
    page = context.new_page()
    try:
        open_hidden(page, server, "&present=1&z=1")
        figures = page.evaluate(FIGURE_FONTS_JS)
        assert len(figures) >= PLOTS and all(f["smallest"] >= PROJECTED_PX for f in figures), \
            [(f["title"], f["smallest"]) for f in figures]
        assert not page.evaluate(OVERFLOWING_JS), page.evaluate(OVERFLOWING_JS)
        # the plain tables come after the figures counted: on a cold server one run had not drawn them yet
        page.locator('[data-testid="stTable"]').filter(has_text="r(cosine").first.wait_for(timeout=120_000)
        text = page.evaluate(PRESENTED_TEXT_JS)
        assert text["deltas"] >= PROJECTED_PX and text["cells"] >= PROJECTED_PX, text
        changes, = text["changes"]                     # small parts of a mean cosine keep their digits, not 0.000
        assert "+8.105e-05" in changes and not [c for c in changes if c in ("0.000", "-0.000", "+0.000")], changes
        page.screenshot(path=str(SCREENSHOTS / "hidden-minilm-present-1366.png"), full_page=True)
    finally:
        context.close()
