"""Counts in the pages' sentences read as words (issue 31): seed 003's two rows make "the only pair",
never "all 1 pairs"; core.text.count against the plain rule."""
from __future__ import annotations

from helpers import assert_clean, open_page, texts

from core.text import count


def test_count_says_one_and_many():
    for n in (0, 1, 2, 1000):
        assert count(n, "pair") == f"{n:,} {'pair' if n == 1 else 'pairs'}"
    assert count(1, "component") == "1 component" and count(3, "index", "indices") == "3 indices"


def test_geometry_on_two_rows_says_the_only_pair():
    at = open_page("geometry", table="seed003")
    assert_clean(at)
    said = " ".join([m.label for m in at.metric] + texts(at.markdown) + texts(at.caption) + texts(at.info)
                    + texts(at.warning))
    assert "1 pairs" not in said and "(s)" not in said, said
    assert "Spearman ρ, the only pair" in [m.label for m in at.metric]
