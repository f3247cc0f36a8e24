"""The tours of models and whole vocabularies (GloVe's analogies, inside SmolLM2, hidden in the table,
why this prediction, context, generation) walked in Chromium at a 1400 × 900 desktop, every step: from
the sidebar, by →, then each step's own link in a fresh browser, where each question whose page holds
something back is answered and what it held appears (tests/tour_walk.py). Heavy work behind a button
(a map's Draw, patching, massive activations) is not pressed: the step must stand before it."""
from __future__ import annotations

import pytest
from browser_helpers import require_chromium
from tour_walk import walk

from core.lessons.tours import VIEW_TOURS

require_chromium()


@pytest.mark.parametrize("name", list(VIEW_TOURS))
def test_model_tour_every_step_desktop(browser, server, name):
    walk(browser, server, name, "desktop", len(VIEW_TOURS[name].steps), answer=True)
