"""The tours that run a model (inside the model, why this prediction, context, vectors to words) rehearsed as a class lives them
(tests/rehearsal.py). A file of its own so that CI's two workers share the rehearsal."""
from __future__ import annotations

import pytest
from rehearsal import rehearse


@pytest.mark.parametrize("name", ["inside", "why", "context", "generate"])
def test_model_tour_rehearsed(name):
    rehearse(name)
