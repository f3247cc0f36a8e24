"""Exact neighbours and trustworthiness against scikit-learn."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.manifold import trustworthiness as sklearn_trustworthiness
from sklearn.neighbors import NearestNeighbors

from core.knn import exact_neighbours, map_neighbours, trustworthiness


def clusters(n: int = 300, d: int = 20, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4, size=(3, d))
    return np.concatenate([c + rng.normal(size=(n // 3, d)) for c in centres])


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_exact_neighbours_equal_sklearn_brute_force(metric):
    points = clusters()
    ours = exact_neighbours(points, 7, metric)
    reference = NearestNeighbors(n_neighbors=8, metric=metric, algorithm="brute").fit(points)
    distances, indices = reference.kneighbors(points)
    np.testing.assert_allclose(ours.distances, distances[:, 1:], rtol=1e-5, atol=1e-5)   # float32 products
    # the order: by float64 distance, except values within float32 precision (core.order's tolerance:
    # of the largest possible distance, squared for euclidean as computed), tied and listed by index
    every = cdist(points, points, metric)                                      # (n, n) float64
    np.fill_diagonal(every, np.inf)
    keys = every if metric == "cosine" else every ** 2
    tol = 2e-6 if metric == "cosine" else 1e-6 * 4.0 * (np.linalg.norm(points, axis=1) ** 2).max()
    slack = 2 * tol                                # float32 vs float64 moves a gap near tol either way
    for row, found in enumerate(ours.indices):
        got = keys[row, found]                                                 # (k,)
        assert (np.diff(got) >= -slack).all()
        swapped = np.flatnonzero(np.diff(got) < 0)
        assert (found[swapped + 1] > found[swapped]).all()                   # a tie listed by index
        assert got.max() <= np.sort(keys[row])[6] + slack                     # the k nearest, up to ties
    assert (ours.indices != indices[:, 1:]).any(axis=1).mean() < 0.2          # few rows have a tie at all


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("k", [1, 5, 12])
def test_trustworthiness_equals_sklearn(metric, k):
    points = clusters(seed=k)
    rng = np.random.default_rng(k)
    for embedded in (points[:, :2], points[:, :3] + rng.normal(size=(len(points), 3)), rng.normal(size=(len(points), 2))):
        expected = sklearn_trustworthiness(points, embedded, n_neighbors=k, metric=metric)
        assert trustworthiness(points, embedded, k, metric) == pytest.approx(expected, abs=1e-12)


def test_trustworthiness_of_a_perfect_and_a_random_map():
    points = clusters()
    assert trustworthiness(points, points, 10, "euclidean") == pytest.approx(1.0)
    shuffled = np.random.default_rng(0).normal(size=(len(points), 2))
    assert 0.4 < trustworthiness(points, shuffled, 10, "euclidean") < 0.6


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_neighbours_tied_to_float32_precision_are_listed_by_index(metric):
    """Copies of one point up to 1e-7 relative noise (one untrained row, rounded by another CPU) are
    tied neighbours: listed by index whatever the noise (core.order's rule)."""
    rng = np.random.default_rng(2)
    points = clusters()
    copies = [250, 12, 140, 77]
    found = []
    for _ in range(5):
        noisy = points.copy()
        noisy[copies] = points[3] * (1 + rng.uniform(-1e-7, 1e-7, size=(len(copies), points.shape[1])))
        found.append(exact_neighbours(noisy, 5, metric).indices[3].tolist())
    assert all(rows == found[0] for rows in found)
    assert found[0][:4] == sorted(copies)


def test_duplicate_points_never_list_themselves():
    embedded = np.zeros((6, 2))
    found = map_neighbours(embedded, 3)
    assert all(i not in row for i, row in enumerate(found))


def test_bad_k_is_said():
    with pytest.raises(ValueError, match="needs at least 5 points"):
        exact_neighbours(np.eye(3), 4)
    with pytest.raises(ValueError, match="more than 20 points"):
        trustworthiness(np.eye(10), np.eye(10)[:, :2], 10)
