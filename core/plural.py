"""Counts in sentences: "1 pair", "2 pairs", never "1 pairs" or "pair(s)"."""
from __future__ import annotations


def count(n: int, singular: str, plural: str | None = None) -> str:
    """'1 component', '3 components', '1,024 pairs' (the plural is singular + 's' unless given)."""
    word = singular if n == 1 else (plural or singular + "s")
    return f"{n:,} {word}"
