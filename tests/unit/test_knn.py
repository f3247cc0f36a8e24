"""Exact neighbours and trustworthiness against scikit-learn."""
from __future__ import annotations

import numpy as np
import pytest
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
    assert np.array_equal(ours.indices, indices[:, 1:])
    np.testing.assert_allclose(ours.distances, distances[:, 1:], rtol=1e-5, atol=1e-5)   # float32 products


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


def test_duplicate_points_never_list_themselves():
    embedded = np.zeros((6, 2))
    found = map_neighbours(embedded, 3)
    assert all(i not in row for i, row in enumerate(found))


def test_bad_k_is_said():
    with pytest.raises(ValueError, match="needs at least 5 points"):
        exact_neighbours(np.eye(3), 4)
    with pytest.raises(ValueError, match="more than 20 points"):
        trustworthiness(np.eye(10), np.eye(10)[:, :2], 10)
