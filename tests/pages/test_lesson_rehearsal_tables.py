"""The tours of whole vocabularies (GloVe's analogies, what hides in a table, hubs) rehearsed as a class lives
them (tests/rehearsal.py). A file of its own so that CI's two workers share the rehearsal."""
from __future__ import annotations

import pytest
from rehearsal import rehearse


@pytest.mark.parametrize("name", ["analogies", "hidden", "hubs"])
def test_table_tour_rehearsed(name):
    rehearse(name)
