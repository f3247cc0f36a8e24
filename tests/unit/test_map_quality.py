"""Map quality (issue 38) against independent references: brute-force numpy, scipy, scikit-learn."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.map_quality import csls, hubness


def brute_neighbours(weight: np.ndarray, k: int) -> np.ndarray:
    """(V, d) -> (V, k): the whole cosine matrix in float64, each row sorted (ties by row index)."""
    unit = weight / np.linalg.norm(weight, axis=1, keepdims=True)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    return np.array([np.lexsort((np.arange(len(s)), -s))[:k] for s in sims])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_k_occurrence_and_skewness_vs_brute_force(dtype):
    rng = np.random.default_rng(0)
    weight = rng.normal(size=(700, 40)).astype(dtype)
    lists = hubness.exact_neighbour_lists(weight, 50)
    reference = brute_neighbours(weight.astype(np.float64), 50)
    unit = weight.astype(np.float64) / np.linalg.norm(weight.astype(np.float64), axis=1, keepdims=True)
    sims = np.sort(np.where(np.eye(len(unit), dtype=bool), -np.inf, unit @ unit.T), axis=1)[:, ::-1]
    for k in (5, 10, 50):
        found = hubness.hubness(lists, k)
        # a row whose k-th and (k+1)-th cosines are equal to float32 precision may list either:
        # such rows' slots are left out of both counts (a handful of 700)
        clean = sims[:, k - 1] - sims[:, k] > 1e-5
        assert clean.mean() > 0.95
        counts = np.zeros(len(weight), dtype=np.int64)
        for x in np.flatnonzero(clean):
            for y in reference[x, :k]:
                counts[y] += 1
        assert np.array_equal(np.bincount(lists.indices[clean, :k].ravel(), minlength=len(weight)), counts)
        full = np.bincount(reference[:, :k].ravel(), minlength=len(weight))
        assert found.skewness == pytest.approx(stats.skew(found.counts), rel=1e-9)
        assert found.skewness == pytest.approx(stats.skew(full), abs=0.02)
        assert found.counts.sum() == len(weight) * k
        top = np.sort(found.counts)[::-1][:7]                # 1 % of 700 rows -> 7
        assert found.top_rows == 7 and found.top_share == pytest.approx(top.sum() / (700 * k))


def test_blocks_do_not_change_the_lists(monkeypatch):
    rng = np.random.default_rng(1)
    weight = rng.normal(size=(300, 16)).astype(np.float32)
    whole = hubness.exact_neighbour_lists(weight, 10)
    monkeypatch.setattr(hubness, "_BLOCK_CELLS", 300 * 7)       # 7 rows a block
    blocked = hubness.exact_neighbour_lists(weight, 10)
    assert np.array_equal(whole.indices, blocked.indices)


def test_sampled_lists_are_the_sub_tables():
    rng = np.random.default_rng(2)
    weight = rng.normal(size=(500, 12)).astype(np.float32)
    rows = np.sort(np.random.default_rng(3).choice(500, size=120, replace=False))
    lists = hubness.exact_neighbour_lists(weight, 5, rows=rows)
    assert np.array_equal(lists.indices, brute_neighbours(weight[rows].astype(np.float64), 5))


def test_skewness_of_a_hub_table_is_positive():
    rng = np.random.default_rng(3)
    weight = rng.normal(size=(800, 200)).astype(np.float32)   # high dimension: hubs appear
    found = hubness.hubness(hubness.exact_neighbour_lists(weight, 10), 10)
    assert found.skewness > 0.3


def test_csls_against_its_definition():
    rng = np.random.default_rng(4)
    weight = rng.normal(size=(400, 30)).astype(np.float32)
    lists = hubness.exact_neighbour_lists(weight, 10)
    r = csls.mean_similarity(lists, 10)
    unit64 = weight.astype(np.float64) / np.linalg.norm(weight.astype(np.float64), axis=1, keepdims=True)
    cos = unit64 @ unit64.T
    np.fill_diagonal(cos, -np.inf)
    r_reference = np.sort(cos, axis=1)[:, ::-1][:, :10].mean(axis=1)   # mean cosine to own 10 nearest
    assert np.allclose(r, r_reference, atol=1e-6)
    hubs = csls.hub_mask(hubness.hubness(lists, 10).counts)
    for row in (0, 17, 399):
        got = csls.rerank(csls.cosines_to(weight, row), row, r, 8, hubs)
        scores = 2 * cos[row] - r_reference[row] - r_reference          # CSLS(x, y) = 2cos − r(x) − r(y)
        scores[row] = -np.inf
        assert list(got.after) == list(np.argsort(-scores, kind="stable")[:8])
        assert list(got.before) == list(np.argsort(-cos[row], kind="stable")[:8])
        assert got.hubs_after == hubs[got.after].sum()


def test_k_occurrence_over_the_whole_of_minilm():
    """Every one of MiniLM's 30,522 rows, once: float64 brute force, 500 rows at a time (the
    reference's own blocks, argpartition + sort). A row whose 10th and 11th cosines are within
    float32 precision may list either: its slots are left out of both counts."""
    from core.models.loading.pretrained import load_model

    table = load_model("minilm").table
    weight = np.asarray(table.weight, dtype=np.float64)
    unit = weight / np.maximum(np.linalg.norm(weight, axis=1, keepdims=True), 1e-300)
    k, n = 10, len(unit)
    reference = np.empty((n, k + 1), dtype=np.int64)
    gap = np.empty(n)
    for start in range(0, n, 500):
        sims = unit[start:start + 500] @ unit.T
        sims[np.arange(len(sims)), np.arange(start, start + len(sims))] = -np.inf
        near = np.argpartition(-sims, k + 1, axis=1)[:, :k + 2]
        near_sims = np.take_along_axis(sims, near, axis=1)
        by = np.argsort(-near_sims, axis=1, kind="stable")
        reference[start:start + len(sims)] = np.take_along_axis(near, by, axis=1)[:, :k + 1]
        ordered = np.take_along_axis(near_sims, by, axis=1)
        gap[start:start + len(sims)] = ordered[:, k - 1] - ordered[:, k]
    lists = hubness.exact_neighbour_lists(table.weight, k)
    found = hubness.hubness(lists, k)
    clean = gap > 1e-5
    assert clean.mean() > 0.9
    ours = np.bincount(lists.indices[clean, :k].ravel(), minlength=n)
    theirs = np.bincount(reference[clean, :k].ravel(), minlength=n)
    assert np.array_equal(ours, theirs)
    # every row's set of 10 agrees where the boundary is clean
    assert all(set(a) == set(b) for a, b in zip(lists.indices[clean, :k], reference[clean, :k]))
    assert found.skewness == pytest.approx(stats.skew(found.counts), rel=1e-9)
    full = np.bincount(reference[:, :k].ravel(), minlength=n)
    assert found.skewness == pytest.approx(stats.skew(full), abs=0.05)


def test_per_point_recall_vs_brute_force():
    from core.map_quality import faithfulness

    rng = np.random.default_rng(5)
    weight = rng.normal(size=(400, 20)).astype(np.float32)
    points = np.sort(rng.choice(400, 150, replace=False))
    embedded = rng.normal(size=(150, 2))
    k = 7
    for whole in (False, True):
        got = faithfulness.faithfulness(weight, points, embedded, k, whole_table=whole)
        candidates = np.arange(400) if whole else points
        unit = weight.astype(np.float64) / np.linalg.norm(weight.astype(np.float64), axis=1, keepdims=True)
        for i, row in enumerate(points):
            sims = unit[candidates] @ unit[row]
            sims[candidates == row] = -np.inf
            true = set(candidates[np.argsort(-sims, kind="stable")[:k]])
            distances = np.linalg.norm(embedded - embedded[i], axis=1)
            distances[i] = np.inf
            on_map = set(points[np.argsort(distances, kind="stable")[:k]])
            assert got.kept[i] == pytest.approx(len(true & on_map) / k)
            assert got.on_map[i] == pytest.approx(len(true & set(points)) / k)
        if not whole:
            assert np.all(got.on_map == 1.0)


def test_mean_kept_and_sklearn_trustworthiness_agree():
    """Both are 1 on a perfect map and fall together as more of the map is shuffled."""
    from sklearn.manifold import trustworthiness

    from core.map_quality import faithfulness

    rng = np.random.default_rng(6)
    steps = rng.uniform(0.5, 1.5, 120)             # spaced points: no cosine ties at float32 precision
    angles = 2 * np.pi * np.cumsum(steps) / steps.sum()
    plane = np.stack([np.cos(angles), np.sin(angles)], axis=1)          # unit vectors: cosine = map order
    weight = np.concatenate([plane, np.zeros((120, 3))], axis=1).astype(np.float32)
    points, k = np.arange(120), 8
    means, trusts = [], []
    for shuffled in (0, 12, 40, 120):
        embedded = plane.copy()
        moved = rng.choice(120, shuffled, replace=False)
        embedded[moved] = embedded[rng.permutation(moved)]
        got = faithfulness.faithfulness(weight, points, embedded, k, whole_table=True)
        means.append(got.kept.mean())
        trusts.append(trustworthiness(weight, embedded, n_neighbors=k, metric="cosine"))
    # the perfect map: 1 for both, up to one neighbour slot in 960 whose 8th and 9th cosines tie at float32
    assert means[0] == pytest.approx(1.0, abs=2 / 960) and trusts[0] == pytest.approx(1.0, abs=1e-3)
    assert all(a > b for a, b in zip(means, means[1:])) and all(a > b for a, b in zip(trusts, trusts[1:]))
    assert means[-1] < 0.25 and trusts[-1] < 0.65                         # a random map: ~k/n and ~0.5


def test_adjusted_rand_vs_sklearn():
    from sklearn.metrics import adjusted_rand_score

    from core.map_quality.stability import adjusted_rand

    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(2, 300))
        a, b = rng.integers(-1, 6, n), rng.integers(-1, 4, n)
        assert adjusted_rand(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)
        assert adjusted_rand(a, a) == pytest.approx(1.0)
        assert adjusted_rand(a, (a + 3) * 7) == pytest.approx(adjusted_rand_score(a, (a + 3) * 7))
    for a, b in (([0, 0, 0], [1, 1, 1]), ([0, 1, 2], [5, 6, 7]), ([0, 0, 1], [0, 1, 2])):
        assert adjusted_rand(a, b) == pytest.approx(adjusted_rand_score(a, b))


def test_true_neighbours_of_a_wide_table_wait_for_their_button():
    """Heavy work behind a button (issue 31): the cost is points × rows × width, not points × rows alone —
    SmolLM2's 576 dimensions made its default map's search seconds of a page run."""
    from ui.map_quality.faithfulness import searched_at_once

    assert searched_at_once(2_000, 30_522, 384)            # MiniLM's default sample: in the run
    assert searched_at_once(500, 49_152, 576)              # a small SmolLM2 map too
    assert not searched_at_once(2_000, 49_152, 576)        # SmolLM2's default sample: a button
    assert not searched_at_once(3_000, 49_152, 576)        # the hidden tour's islands map
    assert not searched_at_once(1_500, 400_000, 50)        # GloVe's whole table: too many cells
    assert searched_at_once(2_000, 2_000, 576)             # among the mapped points only
