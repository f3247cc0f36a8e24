"""The seed tours rehearsed as a class lives them (tests/pages/rehearsal.py): every step from every way
in shows its own view, and no question's answer is written before it is asked."""
from __future__ import annotations

import pytest
from rehearsal import rehearse

from core.lessons.tours import SEED_TOURS


@pytest.mark.parametrize("name", list(SEED_TOURS))
def test_seed_tour_rehearsed(name):
    rehearse(name)


def test_every_tour_is_rehearsed():
    """A new tour joins one of the rehearsal's files (this one, _tables, _models)."""
    from test_lesson_rehearsal_models import test_model_tour_rehearsed
    from test_lesson_rehearsal_tables import test_table_tour_rehearsed

    from core.lessons.tours import TOURS

    def names(test):
        return next(mark.args[1] for mark in test.pytestmark if mark.name == "parametrize")
    assert sorted([*SEED_TOURS, *names(test_table_tour_rehearsed), *names(test_model_tour_rehearsed)]) == sorted(TOURS)
