"""The seed tours rehearsed as a class lives them (tests/pages/rehearsal.py): every step from every way
in shows its own view, and no question's answer is written before it is asked."""
from __future__ import annotations

import pytest
from rehearsal import rehearse

from core.lessons.tours import SEED_TOURS


@pytest.mark.parametrize("name", list(SEED_TOURS))
def test_seed_tour_rehearsed(name):
    rehearse(name)
