"""What only the screen can tell: whether cell texts fit their cells, and whether a table fits its column.

No cell text printed over its neighbour, at any screen width.

A heatmap's cell numbers (or token names) are written when they fit its cells at the narrowest desktop
served (core.figures.base.numbers_fit); the server does not know the screen, and on a 390 px phone a 30 × 10
attribution grid's numbers and the logit lens's token names ran into each other. So the page measures: a
script of ours, run in the page itself (st.html with JavaScript; as a one-pixel iframe on every page it kept
Home's loading from ever settling), watches the page, and a plot whose cell
texts overlap, side by side or one above the other, or whose font Plotly shrank below SMALLEST_TEXT_PX to fit
its cells (4-8 px numbers in a phone's 11 × 11 grid), has them hidden (the hover, or a tap, keeps every value)
until it is drawn again wide enough for them.

Labels placed beside points (pairs on the id-gap plot, analogy words) are placed apart for a desktop plot;
on a phone the points draw closer and labels piled on each other: one that overlaps a label kept before it
is hidden, and a line under the plot says how many.

The phone's tour box scrolls inside itself: while it overflows it is marked so (lens-overflows), and the line
under it saying "more in the tour box" shows (ui.lessons.tours.PHONE_BAR_CSS).

A table grid wider than its column scrolls sideways inside its canvas, with no scroll bar in sight on a phone
(or before the pointer is on it): the line ui.render.show_frame writes above a grid that may not fit
(SWIPE_CLASS) shows only once the page has measured that this grid does not (WIDE_GRID_CLASS on its element)."""
from __future__ import annotations

import streamlit as st

CROWDED_CLASS = "lens-crowded"
SWIPE_CLASS, WIDE_GRID_CLASS = "lens-swipe", "lens-wide-grid"
SMALLEST_TEXT_PX = 9          # a cell text whose font Plotly shrank below this cannot be read on a phone (its box,
                              # a line's height, is ~1.3 of it: measured by box, 6-8 px numbers passed as readable)
LABEL_SLACK_PX = 4            # a point's label may reach this far past its plot area (its box's own padding)
MORE_BELOW_PX = 24            # the tour box's content past its fold that counts as more to read (a line); less is
                              # its own padding and the keys' one-pixel frame

_SCRIPT = """<script>
(function () {
  const host = window.parent, doc = host.document;        // in the page itself, its parent is the page
  if (!doc.getElementById('lens-fit-style')) {
    const style = doc.createElement('style');
    style.id = 'lens-fit-style';
    // the note is drawn under the plot: the chart's box is as tall as the figure (size-contained; let grow, the
    // plot resized itself to fill it, again and again) and its holder scrolled, so the note stood below a fold,
    // never seen. The holder makes room for two lines of it and lets it show.
    const noted = '[data-testid="stElementContainer"]:has(.js-plotly-plot[data-lens-note])';
    style.textContent = '.%(cls)s .heatmap-label { visibility: hidden; } .js-plotly-plot[data-lens-note]::after { ' +
      'display: block; content: attr(data-lens-note); font-size: 0.8rem; line-height: 1.3; opacity: 0.75; ' +
      'padding: 0.2rem 0.5rem 0; } ' + noted + ' { margin-bottom: 2.6rem; overflow: visible !important; } ' +
      noted + ' :has(.js-plotly-plot[data-lens-note]) { overflow: visible !important; }';
    doc.head.appendChild(style);
  }
  const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  // a point's label (an annotation with a leader line) placed for a desktop plot can land, on a phone's
  // narrow plot, over the axis ticks and titles or past the figure's edge: it must stay on the plot area
  const areas = (plot) => [...plot.querySelectorAll('.draglayer .nsewdrag')].map(r => r.getBoundingClientRect());
  const within = (box, area) => box.left >= area.left - %(slack)s && box.right <= area.right + %(slack)s &&
                                box.top >= area.top - %(slack)s && box.bottom <= area.bottom + %(slack)s;
  const thin = (plot) => {      // -> how many labels were hidden: each one meeting a label kept before it
    const kept = [], plotted = areas(plot);
    let hidden = 0;
    plot.querySelectorAll('g.annotation').forEach(label => {
      label.style.visibility = '';
      // an arrow is drawn as an annotation without text, its empty text at the arrow's tail: every arrow
      // from the origin met the first there, and all but one were hidden (Geometry's arrows)
      if (!label.textContent.trim()) return;
      const box = (label.querySelector('.annotation-text-g') || label).getBoundingClientRect();
      if (!box.width) return;
      const led = label.querySelector('.annotation-arrow-g path') !== null;
      const off = led && plotted.length && !plotted.some(area => within(box, area));
      if (off || kept.some(other => meet(box, other))) { label.style.visibility = 'hidden'; hidden += 1; }
      else kept.push(box);
    });
    return hidden;
  };
  const overlapping = (boxes, start, end) => {
    boxes.sort((a, b) => a[start] - b[start]);
    return boxes.some((box, i) => i > 0 && box[start] < boxes[i - 1][end] - 0.5);
  };
  const crowded = (plot) => {
    const rows = new Map(), columns = new Map(), heights = [];
    for (const text of plot.querySelectorAll('.heatmap-label text')) {
      if (!text.textContent) continue;
      const box = text.getBoundingClientRect();
      heights.push(parseFloat(host.getComputedStyle(text).fontSize) || box.height);
      const row = Math.round(box.top + box.height / 2), column = Math.round(box.left + box.width / 2);
      rows.set(row, (rows.get(row) || []).concat([box]));
      columns.set(column, (columns.get(column) || []).concat([box]));
    }
    heights.sort((a, b) => a - b);
    if (heights.length && heights[Math.floor(heights.length / 2)] < %(smallest)s) return true;
    return [...rows.values()].some(b => overlapping(b, 'left', 'right')) ||
           [...columns.values()].some(b => overlapping(b, 'top', 'bottom'));
  };
  const check = () => {
    host.__lensCrowdedTimer = null;
    doc.querySelectorAll('.js-plotly-plot').forEach(plot => {
      const cells = crowded(plot), thinned = thin(plot), said = [];
      plot.classList.toggle('%(cls)s', cells);
      if (cells) said.push('Cell labels hidden: too small or too close to read at this width.');
      if (thinned) said.push(thinned + (thinned > 1 ? ' labels' : ' label') + ' hidden where they overlapped others or left the plot.');
      if (said.length) plot.dataset.lensNote = said.join(' ') + ' Tap or hover to read them.';
      else delete plot.dataset.lensNote;
    });
    doc.querySelectorAll('.st-key-tour_bar').forEach(bar =>     // the phone's tour box: a line or more below its fold?
      bar.classList.toggle('lens-overflows', bar.scrollHeight > bar.clientHeight + %(line)s));
    doc.querySelectorAll('[data-testid="stDataFrame"]').forEach(grid => {
      const scroller = grid.querySelector('.dvn-scroller'), holder = grid.closest('[data-testid="stElementContainer"]');
      if (holder) holder.classList.toggle('%(wide)s', !!scroller && scroller.scrollWidth > scroller.clientWidth + 1);
    });
  };
  const soon = () => { if (!host.__lensCrowdedTimer) host.__lensCrowdedTimer = host.setTimeout(check, 200); };
  if (host.__lensCrowdedWatch) host.__lensCrowdedWatch.disconnect();      // this run's watcher replaces the last
  host.clearTimeout(host.__lensCrowdedTimer);
  host.__lensCrowdedTimer = null;
  host.__lensCrowdedWatch = new host.MutationObserver(soon);
  host.__lensCrowdedWatch.observe(doc.body, {childList: true, subtree: true});
  host.removeEventListener('resize', host.__lensCrowdedResize || soon);
  host.__lensCrowdedResize = soon;
  host.addEventListener('resize', soon);
  soon();
})();
</script>"""


def watch_screen_fit() -> None:
    """Install the watcher (once a run, at the sidebar's foot: the page's own column keeps its spacing). The
    script is this module's own text, never a visitor's."""
    st.sidebar.html(_SCRIPT % {"cls": CROWDED_CLASS, "smallest": SMALLEST_TEXT_PX, "wide": WIDE_GRID_CLASS,
                               "line": MORE_BELOW_PX, "slack": LABEL_SLACK_PX}, unsafe_allow_javascript=True)
