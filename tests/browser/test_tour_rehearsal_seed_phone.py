"""The seed tours walked in Chromium on a 390 × 844 phone (tests/tour_walk.py): every step from the
sidebar's tour picker, by the → key and by its own link; on each, no sideways scroll and a tour bar
that leaves the first screen to the step's page (tour_walk.PHONE_FIT_JS)."""
from __future__ import annotations

import pytest
from browser_helpers import require_chromium
from tour_walk import walk

from core.lessons.tours import SEED_TOURS

require_chromium()


@pytest.mark.parametrize("name", list(SEED_TOURS))
def test_seed_tour_every_step_phone(browser, server, name):
    walk(browser, server, name, "phone", len(SEED_TOURS[name].steps))
