"""The tours of models and whole vocabularies on a 390 × 844 phone: each tour's last step opened from
its link (a student following the class link mid-lesson), checked as every step is (tests/tour_walk.py:
narration, held-back answers, no sideways scroll, the page on the first screen), then its held-back
questions answered."""
from __future__ import annotations

import pytest
from browser_helpers import require_chromium
from tour_walk import open_link, step_link

from core.lessons.tours import VIEW_TOURS

require_chromium()


@pytest.mark.parametrize("name", list(VIEW_TOURS))
def test_model_tour_last_step_phone(browser, server, name):
    last = len(VIEW_TOURS[name].steps) - 1
    open_link(browser, step_link(server, name, last), name, last, "phone", answer=True)
