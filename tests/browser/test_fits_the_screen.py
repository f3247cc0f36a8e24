"""Known defects, as a person sees them in Chromium (one server for the module): Home's comparison
without sideways scrolling and Lookup's counts on one line, at 1280 px and on a 390 × 844 phone,
normal and presentation mode; and a token search on Geometry that
leaves the big PCA and norm plots mounted (Streamlit mounts a chart anew when its spec changes)."""
from __future__ import annotations


import pytest
from browser_helpers import SCREENSHOTS, require_chromium, wait_until_idle

from ui.screen_fit import LABEL_SLACK_PX, SMALLEST_TEXT_PX

require_chromium()
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
# Every element of the main column whose content is wider than its box and may scroll sideways.
SIDEWAYS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX))
  .map(e => [e.getAttribute('data-testid') || e.className.toString().slice(0, 40), e.scrollWidth, e.clientWidth])"""
PAGE_WIDTH_JS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
# Each metric's value: its height in font sizes (one line is ~1.45 of them, two lines ~2.8: wrapped).
METRIC_LINES_JS = """() => [...document.querySelectorAll('[data-testid="stMetricValue"]')].map(v =>
  [v.innerText, v.getBoundingClientRect().height / parseFloat(getComputedStyle(v).fontSize)])"""
# Characters of scripts the test machine has no font for (Debian's chromium with DejaVu/Liberation).


def _draw_every_chart(tab) -> None:
    """Scroll the main column through: Streamlit draws a chart once it comes into view; then let the page
    measure what it drew (ui.screen_fit)."""
    height = tab.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    for y in range(0, height, 700):
        tab.evaluate(f"() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, {y})")
        tab.wait_for_timeout(200)
    tab.wait_for_timeout(800)


def _open(browser, url: str, size: dict, plots: int, wait_for: str):
    context = browser.new_context(viewport=size, is_mobile=size is PHONE, has_touch=size is PHONE)
    tab = context.new_page()
    tab.goto(url)
    tab.locator(wait_for).first.wait_for(timeout=240_000)
    wait_until_idle(tab, plots, timeout=240)
    return context, tab


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "phone"])
@pytest.mark.parametrize("present", [False, True], ids=["normal", "present"])
def test_home_table_and_lookup_counts_fit(server, browser, size, present):
    mode = "&present=1" if present else ""
    name = f"{size['width']}{'-present' if present else ''}"
    context, tab = _open(browser, f"{server}/?table=minilm{mode}", size, 0, '[data-testid="stTable"]')
    try:
        assert tab.evaluate(SIDEWAYS_JS) == []
        width, room = tab.evaluate(PAGE_WIDTH_JS)
        assert width <= room, (width, room)
        tab.locator('[data-testid="stTable"]').first.scroll_into_view_if_needed()
        tab.screenshot(path=str(SCREENSHOTS / f"fit-home-{name}.png"))
    finally:
        context.close()
    context, tab = _open(browser, f"{server}/lookup?table=minilm{mode}", size, 2, '[data-testid="stMetric"]')
    try:
        metrics = tab.evaluate(METRIC_LINES_JS)
        assert [text for text, _ in metrics][:2] == ["11,720,448", "3,456"], metrics
        assert all(height < 2 for _, height in metrics), metrics            # one line each
        said = tab.locator('[data-testid="stMain"]').inner_text()
        assert "now read the rows of ##" in said
        tab.locator('[data-testid="stMetric"]').first.scroll_into_view_if_needed()
        tab.screenshot(path=str(SCREENSHOTS / f"fit-lookup-{name}.png"))
    finally:
        context.close()


MARK_PLOTS_JS = "() => document.querySelectorAll('.js-plotly-plot').forEach(g => { g.__beforeSearch = true; })"
TITLES_KEPT_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(g =>
  [((g.layout && g.layout.title && g.layout.title.text) || '').replace(/<br>/g, ' ').replace(/<[^>]*>/g, ''), g.__beforeSearch === true])"""


def test_a_token_search_leaves_the_big_plots_mounted(server, page):
    page.goto(f"{server}/geometry?table=seed004&query=cat")
    wait_until_idle(page, 6)
    page.evaluate(MARK_PLOTS_JS)
    box = page.get_by_label("Find a token")
    box.fill("sleeping")
    box.press("Enter")
    page.wait_for_function("() => location.search.includes('query=sleeping')", timeout=30_000)
    wait_until_idle(page, 6)
    kept = dict(page.evaluate(TITLES_KEPT_JS))
    assert kept[next(t for t in kept if t.startswith("PCA"))] and kept[next(t for t in kept if t.startswith("Norm by id"))]
    assert not kept["Where “sleeping” sits"]                                 # the search's own figure is new
    page.get_by_text("Where “sleeping” sits").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / "fit-geometry-search.png"))


SWIPE_CUE = "The table scrolls sideways"
# Each plot's title: (its text, its right edge, the plot's right edge), in px.
TITLE_ROOM_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].map(g => {
  const t = g.querySelector('.gtitle'); if (!t) return null;
  return [t.textContent, t.getBoundingClientRect().right, g.getBoundingClientRect().right]; }).filter(x => x)"""
# Each grid: (does its canvas scroll sideways, is the line above it saying so shown).
GRIDS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]')].map(grid => {
  const scroller = grid.querySelector('.dvn-scroller'), holder = grid.closest('[data-testid="stElementContainer"]');
  const before = holder.previousElementSibling, cue = before && before.querySelector('.lens-swipe');
  return [scroller.scrollWidth > scroller.clientWidth + 1, !!cue && cue.getBoundingClientRect().height > 0]; })"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "phone"])
def test_a_wide_table_says_it_scrolls_on_a_phone_only_and_titles_stay_in_their_plot(server, browser, size):
    """Geometry's pair table ("a·b written out", 7 columns) scrolls sideways inside a phone's grid with no
    scroll bar in sight: there, and only there, a line above it says so (the page measures each grid; a
    2-column grid that fits had the line from the server's estimate alone). And no figure title runs past its
    plot's right edge (titles are sized for a desktop plot; a phone draws them smaller)."""
    context, tab = _open(browser, f"{server}/geometry?table=seed004", size, 3, '[data-testid="stDataFrame"]')
    try:
        tab.wait_for_timeout(800)                               # the page measures its grids
        cue = tab.get_by_text(SWIPE_CUE).first
        assert cue.count() == 1 and cue.is_visible() == (size is PHONE)
        grids = tab.evaluate(GRIDS_JS)                          # said exactly where a grid scrolls sideways
        assert grids and all(scrolls for scrolls, said in grids if said), grids     # never above a grid that fits
        assert any(said for _, said in grids) == (size is PHONE), grids
        _draw_every_chart(tab)
        titles = tab.evaluate(TITLE_ROOM_JS)
        assert titles and all(right <= plot + 1 for _, right, plot in titles), titles
        if size is PHONE:
            cue.scroll_into_view_if_needed()
            tab.screenshot(path=str(SCREENSHOTS / "fit-geometry-swipe-phone.png"))
    finally:
        context.close()


# Per heatmap with cell texts: (title, its texts overlap one another or are too small to read, they are hidden,
# the note under it is drawn).
CELL_TEXTS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .filter(p => p.querySelector('.heatmap-label text')).map(p => {
    const boxes = [...p.querySelectorAll('.heatmap-label text')].filter(t => t.textContent).map(t => t.getBoundingClientRect());
    const overlap = boxes.some((a, i) => boxes.some((b, j) => j > i && a.left < b.right - 0.5 && b.left < a.right - 0.5
                                                          && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5));
    const label = p.querySelector('.heatmap-label');
    const sizes = [...p.querySelectorAll('.heatmap-label text')].filter(t => t.textContent)
      .map(t => parseFloat(getComputedStyle(t).fontSize)).sort((a, b) => a - b);
    const small = sizes.length > 0 && sizes[Math.floor(sizes.length / 2)] < %d;
    const holder = p.closest('[data-testid="stElementContainer"]'), next = holder.nextElementSibling;
    // the note (the plot's last line) shows: its holder no longer scrolls it out of sight below the figure's
    // height, and what follows starts below it
    const seen = getComputedStyle(holder).overflowY === 'visible' &&
                 (!next || next.getBoundingClientRect().top >= p.getBoundingClientRect().bottom - 1);
    return [(p.querySelector('.gtitle') || {}).textContent, overlap || small, getComputedStyle(label).visibility === 'hidden',
            getComputedStyle(p, '::after').content.includes('Cell labels hidden') && seen]; })""" % SMALLEST_TEXT_PX


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "phone"])
def test_cell_texts_that_would_overprint_are_hidden_and_said_so(server, browser, size):
    """Model attention on MiniLM: one head's 9 × 9 map prints its numbers apart at 1280 px; on a phone they
    would run into each other, so they are hidden, with a line saying so. Every heatmap whose texts overlap
    has them hidden; none whose texts stand apart has. The sink-share grid (6 layers × 12 heads) keeps its
    numbers on a phone too since its colour bar lies under it (beside it, it took ~70 px of the phone's
    column and the numbers ran into each other)."""
    context, tab = _open(browser, f"{server}/models?table=minilm", size, 2, '.js-plotly-plot')
    try:
        _draw_every_chart(tab)
        grids = tab.evaluate(CELL_TEXTS_JS)
        assert grids and all(overlap == hidden == noted for _, overlap, hidden, noted in grids), grids
        one_head = next(grid for grid in grids if grid[0].startswith("Layer 0, head 0"))
        assert one_head[2] == (size is PHONE), grids
        sink = next(grid for grid in grids if grid[0].startswith("attention to the first token"))
        assert not sink[1] and not sink[2], grids
    finally:
        context.close()


# Per plot with labels beside points: (title, visible labels overlapping each other, labels hidden, note says so).
POINT_LABELS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .filter(p => p.querySelector('g.annotation')).map(p => {
    const labels = [...p.querySelectorAll('g.annotation')].filter(l => l.textContent.trim());
    const visible = labels.filter(l => getComputedStyle(l).visibility !== 'hidden');
    const shown = visible.map(l => (l.querySelector('.annotation-text-g') || l).getBoundingClientRect()).filter(b => b.width);
    const areas = [...p.querySelectorAll('.draglayer .nsewdrag')].map(r => r.getBoundingClientRect());
    const off = visible.filter(l => l.querySelector('.annotation-arrow-g path')).map(l =>
      (l.querySelector('.annotation-text-g') || l).getBoundingClientRect()).filter(b => !areas.some(a =>
        b.left >= a.left - SLACK && b.right <= a.right + SLACK && b.top >= a.top - SLACK && b.bottom <= a.bottom + SLACK)).length;
    const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    const overlaps = shown.filter((a, i) => shown.some((b, j) => j > i && meet(a, b))).length;
    const hidden = labels.length - labels.filter(l => getComputedStyle(l).visibility !== 'hidden').length;
    return [(p.querySelector('.gtitle') || {}).textContent, overlaps + off, hidden,
            getComputedStyle(p, '::after').content.includes('hidden where they overlapped')]; })""".replace(
    "SLACK", str(LABEL_SLACK_PX))
# The arrows plot: each arrow is an annotation without text; [drawn, shown].
ARROWS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
  .filter(p => ((p.querySelector('.gtitle') || {}).textContent || '').startsWith('Arrows from the origin'))
  .map(p => { const arrows = [...p.querySelectorAll('g.annotation')].filter(a => !a.textContent.trim());
              return [arrows.length, arrows.filter(a => getComputedStyle(a).visibility !== 'hidden').length]; })"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "phone"])
def test_labels_beside_points_never_pile_up(server, browser, size):
    """Hubs step 1's view (MiniLM, the chosen pairs on the id-gap plot): placed apart for a desktop plot, the
    pair labels piled near gap 0 on a phone, over the axis ticks and past the figure's left edge. Visible
    labels never overlap and a point's label stays on its plot area; a hidden one is said."""
    context, tab = _open(browser, f"{server}/geometry?table=minilm", size, 3, '.js-plotly-plot')
    try:
        _draw_every_chart(tab)
        plots = tab.evaluate(POINT_LABELS_JS)
        assert plots and all(overlaps == 0 for _, overlaps, _, _ in plots), plots
        assert all((hidden > 0) == noted for _, _, hidden, noted in plots), plots
        # every chosen vector keeps its arrow (all but the first were hidden as "labels" meeting at the origin)
        (drawn, shown), = tab.evaluate(ARROWS_JS)
        assert drawn >= 3 and shown == drawn, (drawn, shown)
    finally:
        context.close()
