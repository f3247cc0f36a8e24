"""Keys for the tour: ← / → previous and next step, Esc ends the tour, P toggles presentation mode.

Streamlit has no key events, so a one-pixel st.iframe (an iframe of the app's own origin) listens
on the page's document and clicks the tour bar's buttons, found by their keys' st-key-* classes.
Keys typed into a text box, a number box or a select are the learner's, not the tour's."""
from __future__ import annotations

import json

import streamlit as st

# The key -> the tour button's widget key (ui.lessons.tours); one handler per page, replaced when the
# component is drawn again (an old iframe's handler would otherwise click twice).
KEYS = {"ArrowLeft": "tour_back", "ArrowRight": "tour_next", "Escape": "tour_end", "p": "tour_present",
        "P": "tour_present"}

_SCRIPT = """<script>
(function () {
  const host = window.parent, doc = host.document, keys = %s;
  const typing = (el) => el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)
                                || el.getAttribute('role') === 'combobox' || el.getAttribute('role') === 'textbox');
  if (host.__lensTourKeys) doc.removeEventListener('keydown', host.__lensTourKeys, true);
  host.__lensTourKeys = function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    const key = keys[event.key];
    if (!key) return;
    const button = doc.querySelector('.st-key-' + key + ' button');
    if (!button || button.disabled) return;
    event.preventDefault();
    button.click();
  };
  doc.addEventListener('keydown', host.__lensTourKeys, true);
})();
</script>"""


def tour_keys() -> None:
    """Install the key handler on the page (drawn in the tour bar: keys work while a tour is open)."""
    st.iframe(_SCRIPT % json.dumps(KEYS), height=1)
