"""Approximate neighbours of a large table (issue 38, GloVe): their recall against brute force, and the
recall the page states (measured on a subset) against the recall over every row."""
from __future__ import annotations

import numpy as np
import pytest

from core.map_quality import approximate
from core.map_quality.hubness import NeighbourLists


def brute_lists(weight: np.ndarray, k: int) -> np.ndarray:
    """(V, d) -> (V, k): the whole cosine matrix in float64, each row's k largest (ties by row)."""
    unit = weight / np.linalg.norm(weight, axis=1, keepdims=True)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    return np.array([np.lexsort((np.arange(len(s)), -s))[:k] for s in sims])


def clustered(rows: int, width: int, centres: int, seed: int) -> np.ndarray:
    """Rows around random centres (a table with neighbourhoods, as embeddings have), float32."""
    rng = np.random.default_rng(seed)
    middle = rng.normal(size=(centres, width))
    return (middle[rng.integers(0, centres, rows)] + 0.6 * rng.normal(size=(rows, width))).astype(np.float32)


def recall_of(found: np.ndarray, exact: np.ndarray, k: int) -> np.ndarray:
    return np.array([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(found, exact)])


def test_recall_against_brute_force_and_the_stated_estimate():
    weight = clustered(3000, 16, 40, seed=0)
    settings = approximate.PartitionSettings(probes=4, train_rows=3000)
    lists = approximate.approximate_neighbour_lists(weight, 20, settings)
    exact = brute_lists(weight.astype(np.float64), 20)
    whole = {k: recall_of(lists.indices, exact, k).mean() for k in (5, 20)}
    assert 0.5 < whole[20] < 1.0              # approximate (some missed), and not useless
    measured = approximate.measured_recall(weight, lists, (5, 20), rows=600, seed=1)
    subset = np.sort(np.random.default_rng(1).choice(3000, 600, replace=False))
    for k, stated in zip(measured.k, measured.recall):
        # the stated recall is exactly the subset's recall against brute force...
        assert stated == pytest.approx(recall_of(lists.indices[subset], exact[subset], k).mean(), abs=1e-9)
        # ... and estimates the whole table's within its sampling error (600 of 3,000 rows)
        assert abs(stated - whole[k]) < 0.03
    assert measured.rows == 600


def test_lists_are_nearest_first_without_self_and_true_cosines():
    weight = clustered(2000, 12, 30, seed=2)
    lists = approximate.approximate_neighbour_lists(weight, 10, approximate.PartitionSettings(probes=3))
    unit = weight.astype(np.float64) / np.linalg.norm(weight.astype(np.float64), axis=1, keepdims=True)
    assert isinstance(lists, NeighbourLists) and lists.indices.shape == (2000, 10)
    assert not (lists.indices == np.arange(2000)[:, None]).any()
    assert all(len(set(row)) == 10 for row in lists.indices)
    cosines = np.einsum("vd,vkd->vk", unit, unit[lists.indices])
    assert np.allclose(lists.similarities, cosines, atol=1e-5)
    assert (np.diff(lists.similarities, axis=1) <= 1e-6).all()


def test_probing_every_cell_is_exact():
    weight = clustered(800, 10, 10, seed=3)
    settings = approximate.PartitionSettings(cells=8, probes=8)
    lists = approximate.approximate_neighbour_lists(weight, 10, settings)
    assert approximate.measured_recall(weight, lists, (10,), rows=800).recall == (1.0,)
    assert np.array_equal(np.sort(lists.indices, axis=1), np.sort(brute_lists(weight.astype(np.float64), 10), axis=1))


def test_more_probes_find_more():
    weight = clustered(3000, 16, 40, seed=4)
    exact = brute_lists(weight.astype(np.float64), 10)
    recalls = [recall_of(approximate.approximate_neighbour_lists(weight, 10, approximate.PartitionSettings(probes=p))
                         .indices, exact, 10).mean() for p in (1, 6)]
    assert recalls[0] < recalls[1]
