"""The seed tours walked in Chromium at a 1400 × 900 desktop (tests/tour_walk.py): every step from the
sidebar's tour picker, by the → key and by its own link in a fresh browser. One file per share of the
rehearsal, so that CI's two workers (a file at a time) balance it."""
from __future__ import annotations

import pytest
from browser_helpers import require_chromium
from tour_walk import walk

from core.lessons.tours import SEED_TOURS

require_chromium()


@pytest.mark.parametrize("name", list(SEED_TOURS))
def test_seed_tour_every_step_desktop(browser, server, name):
    walk(browser, server, name, "desktop", len(SEED_TOURS[name].steps))
