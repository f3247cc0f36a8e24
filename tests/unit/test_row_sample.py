"""The one row sampler (core.geometry.sample_rows): every page that draws or maps a sample of a
table's rows (Geometry, Lookup, Directions, Hidden, Compare, Maps) takes it from there, and it
keeps one rule: min(size, V) rows, seeded, the chosen rows among them, sorted."""
from __future__ import annotations

import ast

import numpy as np
import pytest
from helpers import ROOT

from core.geometry import sample_rows
from core.limits import MAX_PLOT_POINTS

SAMPLING_PAGES = ["app_pages/geometry.py", "app_pages/lookup.py", "app_pages/directions.py",
                  "app_pages/compare.py", "ui/maps/points.py", "ui/hidden/vocab_health.py"]


def reference_sample(vocab_size: int, size: int, seed: int, must_include) -> list[int]:
    """The rule written the long way: the chosen rows, then the seeded permutation's other rows in
    its order until there are `size`, sorted."""
    if size >= vocab_size:
        return list(range(vocab_size))
    rows = sorted({r for r in must_include if 0 <= r < vocab_size})
    for row in np.random.default_rng(seed).permutation(vocab_size).tolist():
        if len(rows) >= size:
            break
        if row not in rows:
            rows.append(row)
    return sorted(rows)


@pytest.mark.parametrize("vocab_size, size, seed, chosen", [
    (100_000, MAX_PLOT_POINTS, 0, [99_999, 5, 5]),        # the Geometry page: its chosen tokens drawn
    (10_000, 100, 3, [7, 9_999]),                         # the Maps page: N points, the marked among them
    (1_000, 400, 1, []),                                  # Compare's alignment figure
    (300, 10, 2, [-1, 300, 299]),                         # rows outside the table are left out
])
def test_the_sample_follows_the_rule(vocab_size, size, seed, chosen):
    rows = sample_rows(vocab_size, size, seed, must_include=chosen)
    assert rows.tolist() == reference_sample(vocab_size, size, seed, chosen)
    assert len(rows) == min(size, vocab_size)
    assert set(r for r in chosen if 0 <= r < vocab_size) <= set(rows.tolist())
    assert np.all(np.diff(rows) > 0)                                         # sorted, no row twice
    assert np.array_equal(rows, sample_rows(vocab_size, size, seed, must_include=chosen))   # seeded
    assert not np.array_equal(rows, sample_rows(vocab_size, size, seed + 1, must_include=chosen))


def test_a_small_table_is_drawn_whole():
    assert sample_rows(50, 100, seed=0).tolist() == list(range(50))
    assert sample_rows(50, 50, seed=4, must_include=[3]).tolist() == list(range(50))


def test_more_chosen_rows_than_the_size_are_all_kept():
    """Hidden's map marks every candidate (up to 10 % of a large table): none may be dropped."""
    chosen = list(range(0, 2_000, 2))
    rows = sample_rows(10_000, 100, seed=0, must_include=chosen)
    assert rows.tolist() == chosen


def sampler_calls(path) -> set[str]:
    """Where each call of sample_rows (or the old plot_sample) in a file is imported from, and its calls
    of cached.sampled_rows (the one sampler's answer kept for every session)."""
    tree = ast.parse((ROOT / path).read_text())
    imported = {alias.asname or alias.name: node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    called = {node.func.id for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("sample_rows", "plot_sample")}
    kept = {"ui.cached.sampled_rows" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sampled_rows"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "cached"}
    return {f"{imported.get(name)}.{name}" for name in called} | kept


@pytest.mark.parametrize("path", SAMPLING_PAGES)
def test_every_page_samples_rows_with_the_one_sampler(path):
    assert sampler_calls(path) in ({"core.geometry.sample_rows"}, {"ui.cached.sampled_rows"},
                                   {"core.geometry.sample_rows", "ui.cached.sampled_rows"})


def test_the_kept_sample_is_the_one_samplers():
    assert sampler_calls("ui/cached.py") == {"core.geometry.sample_rows"}


def test_no_second_sampler_is_defined():
    defined = [f"{path.relative_to(ROOT)}:{node.name}" for folder in ("core", "ui", "app_pages")
               for path in sorted((ROOT / folder).rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.FunctionDef) and node.name in ("sample_rows", "plot_sample")]
    assert defined == ["core/geometry.py:sample_rows"]
