"""No cell text printed over its neighbour, at any screen width.

A heatmap's cell numbers (or token names) are written when they fit its cells at the narrowest desktop
served (core.figures.base.numbers_fit); the server does not know the screen, and on a 390 px phone a 30 × 10
attribution grid's numbers and the logit lens's token names ran into each other. So the page measures: a
one-pixel st.iframe of the app's own origin (as ui.lessons.keyboard) watches the page, and a plot whose cell
texts overlap, side by side or one above the other, has them hidden (the hover keeps every value) until it
is drawn again wide enough for them."""
from __future__ import annotations

import streamlit as st

CROWDED_CLASS = "lens-crowded"

_SCRIPT = """<script>
(function () {
  const host = window.parent, doc = host.document;
  if (!doc.getElementById('lens-crowded-style')) {
    const style = doc.createElement('style');
    style.id = 'lens-crowded-style';
    style.textContent = '.%(cls)s .heatmap-label { visibility: hidden; } .%(cls)s::after { display: block; ' +
      'content: "Cell labels hidden: too narrow to print them apart here. Tap or hover a cell to read it."; ' +
      'font-size: 0.8rem; opacity: 0.75; padding: 0 0.5rem; }';
    doc.head.appendChild(style);
  }
  const overlapping = (boxes, start, end) => {
    boxes.sort((a, b) => a[start] - b[start]);
    return boxes.some((box, i) => i > 0 && box[start] < boxes[i - 1][end] - 0.5);
  };
  const crowded = (plot) => {
    const rows = new Map(), columns = new Map();
    for (const text of plot.querySelectorAll('.heatmap-label text')) {
      if (!text.textContent) continue;
      const box = text.getBoundingClientRect();
      const row = Math.round(box.top + box.height / 2), column = Math.round(box.left + box.width / 2);
      rows.set(row, (rows.get(row) || []).concat([box]));
      columns.set(column, (columns.get(column) || []).concat([box]));
    }
    return [...rows.values()].some(b => overlapping(b, 'left', 'right')) ||
           [...columns.values()].some(b => overlapping(b, 'top', 'bottom'));
  };
  const check = () => {
    host.__lensCrowdedTimer = null;
    doc.querySelectorAll('.js-plotly-plot').forEach(plot => plot.classList.toggle('%(cls)s', crowded(plot)));
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


def guard_crowded_labels() -> None:
    """Install the watcher (once a run, at the sidebar's foot: the page's own column keeps its spacing)."""
    with st.sidebar:
        st.iframe(_SCRIPT % {"cls": CROWDED_CLASS}, height=1)
