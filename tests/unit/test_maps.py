"""t-SNE and UMAP maps: reproducible, progress reported, bad settings said in words."""
from __future__ import annotations

import numpy as np
import pytest

from core.geometry import nearest, row_norms
from core.knn import trustworthiness
from core.maps.layouts import (
    MapSettings,
    check_settings,
    make_map,
    map_with_trust,
    neighbourhood_rows,
)


def clusters(n: int = 240, d: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=6, size=(3, d))
    return np.concatenate([c + rng.normal(size=(n // 3, d)) for c in centres]).astype(np.float32)


@pytest.mark.parametrize("method", ["t-SNE", "UMAP"])
@pytest.mark.parametrize("dims", [2, 3])
def test_same_seed_same_map_other_seed_other_map(method, dims):
    points = clusters()
    settings = MapSettings(method=method, dims=dims, perplexity=20, iterations=200)
    first, again = make_map(points, settings), make_map(points, settings)
    assert first.shape == (len(points), dims)
    assert np.array_equal(first, again)
    other = make_map(points, MapSettings(method=method, dims=dims, perplexity=20, iterations=200, seed=1))
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("method", ["t-SNE", "UMAP"])
def test_maps_keep_clusters_and_report_progress(method):
    points = clusters()
    heard = []
    result = map_with_trust(points, MapSettings(method=method, iterations=200, perplexity=20),
                            lambda done, what: heard.append((done, what)))
    assert result.trust > 0.9                  # three separated clusters: neighbours kept
    assert result.trust == pytest.approx(trustworthiness(points, result.embedded, 10, "cosine"))
    fractions = [done for done, _ in heard]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("epoch" in what or "iteration" in what for _, what in heard)
    if method == "t-SNE":   # the main phase counts to the Iterations box's 200, not to 250 + 200
        counted = [what for _, what in heard if what.startswith("main phase")]
        assert counted and all(what.split("iteration ")[1].split(" ")[0].endswith("/200") for what in counted)
        assert all(int(what.split("iteration ")[1].split("/")[0]) <= 200 for what in counted)
    assert not result.embedded.flags.writeable


def test_the_given_neighbour_lists_are_not_edited():
    from core.knn import exact_neighbours

    points = clusters()
    neighbours = exact_neighbours(points, 14, "cosine")
    before = neighbours.indices.copy(), neighbours.distances.copy()
    make_map(points, MapSettings(method="UMAP", iterations=50), neighbours=neighbours)
    assert np.array_equal(neighbours.indices, before[0]) and np.array_equal(neighbours.distances, before[1])


@pytest.mark.parametrize("settings, points, message", [
    (MapSettings(perplexity=30), 6, "perplexity 30 is not below the number of other points"),
    (MapSettings(method="UMAP", neighbours=15), 10, "15 neighbours need more than 15 points"),
    (MapSettings(), 1, "at least 4 points"),
    (MapSettings(iterations=10), 100, "iterations must be between"),
    (MapSettings(metric="manhattan"), 100, "unknown metric"),
    (MapSettings(), 60_000, "at most 50,000 points"),
])
def test_bad_settings_are_said(settings, points, message):
    with pytest.raises(ValueError, match=message):
        check_settings(settings, points)


def test_a_table_of_zeros_has_nothing_to_map():
    with pytest.raises(ValueError, match="nothing to map"):
        make_map(np.zeros((20, 4)), MapSettings(perplexity=3))


def test_neighbourhoods_are_the_centres_and_their_nearest_rows():
    weight = clusters(300)
    norms = row_norms(weight)
    rows = neighbourhood_rows(weight, norms, [0, 150], 12)
    expected = {0, 150} | {r for c in (0, 150) for r, _ in nearest(weight, c, 12, norms=norms)}
    assert set(rows.tolist()) == expected


@pytest.mark.parametrize("method", ["t-SNE", "UMAP"])
def test_a_six_row_table_is_spread_out_not_collapsed(method):
    from core.toy_tables import toy_table

    weight = np.asarray(toy_table("seed001-lab").weight, dtype=np.float32)
    embedded = make_map(weight, MapSettings(method=method, perplexity=2, neighbours=4))
    assert np.ptp(embedded, axis=0).min() > 0.5          # openTSNE's own rate gave a map ~1e-52 wide


def test_sampled_trustworthiness_estimates_the_full_one():
    """Trustworthiness scored on a seeded sample of the points (as maps above TRUST_SAMPLE points
    are) against the exact value; the sample's own sum equals a loop over those points."""
    from core.knn import trustworthiness

    rng = np.random.default_rng(5)
    points = rng.normal(size=(600, 6))
    embedded = points[:, :2] + rng.normal(scale=0.3, size=(600, 2))
    full = trustworthiness(points, embedded, 10, "euclidean")
    queries = np.sort(rng.choice(600, 300, replace=False))
    # 300 of 600 points: over 20 seeds the estimate had a standard deviation of 0.005 (measured); 0.02 is 4 of them
    assert trustworthiness(points, embedded, 10, "euclidean", queries) == pytest.approx(full, abs=0.02)
    assert trustworthiness(points, embedded, 10, "euclidean", np.arange(600)) == pytest.approx(full, abs=1e-12)


def test_large_sets_use_nn_descent_and_report_progress_that_only_grows():
    from core.maps.layouts import EXACT_SEARCH_FLOPS, find_neighbours

    heard = []
    points = np.random.default_rng(0).normal(size=(400, 8)).astype(np.float32)
    exact = find_neighbours(points, 5, MapSettings(), lambda done, what: heard.append((done, what)))
    assert heard[-1][0] == 1.0 and [d for d, _ in heard] == sorted(d for d, _ in heard)
    import core.maps.layouts as maps

    original = maps.EXACT_SEARCH_FLOPS
    maps.EXACT_SEARCH_FLOPS = 0          # force NN-descent on a small set: it must find nearly the same lists
    try:
        approximate = find_neighbours(points, 5, MapSettings(), lambda done, what: None)
    finally:
        maps.EXACT_SEARCH_FLOPS = original
    assert EXACT_SEARCH_FLOPS == original
    recall = np.mean([len(set(a) & set(e)) / 5 for a, e in zip(approximate.indices, exact.indices)])
    assert recall > 0.9 and approximate.indices.shape == (400, 5)
    assert not (approximate.indices == np.arange(400)[:, None]).any()     # a point is not its own neighbour
