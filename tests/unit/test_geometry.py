"""core.geometry and core.hidden.id_gap against scikit-learn, brute force and seed 003/004 numbers."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.decomposition import PCA

from core.geometry import (
    compare_vectors,
    cosine,
    cosine_matrix,
    dot_product_formula,
    nearest,
    normalized_rows,
    pca,
)
from core.hidden.id_gap import id_gap_correlation, sample_pairs, spearman
from core.tokens.pieces import find_tokens, resolve_tokens, token_kind
from core.toy_tables import seed000_table, seed003_table, seed004_table


@pytest.mark.parametrize("shape", [(200, 12), (50, 3), (1000, 40)])
def test_pca_matches_sklearn(shape):
    weight = np.random.default_rng(0).standard_normal(shape) * np.linspace(3, 0.5, shape[1])
    ours = pca(weight, 3)
    theirs = PCA(3, svd_solver="full").fit(weight)
    agreement = np.abs(np.sum(ours.components * theirs.components_, axis=1))
    assert agreement.min() > 0.999
    np.testing.assert_allclose(ours.explained_variance_ratio, theirs.explained_variance_ratio_, rtol=1e-5)
    np.testing.assert_allclose(np.abs(ours.coords), np.abs(theirs.transform(weight)), atol=1e-4)
    np.testing.assert_allclose(ours.components @ ours.components.T, np.eye(3), atol=1e-10)


def test_pca_basis_is_fixed_between_calls():
    weight = np.random.default_rng(1).standard_normal((300, 8))
    np.testing.assert_array_equal(pca(weight, 2).components, pca(weight.copy(), 2).components)


def test_pca_on_tiny_tables_gives_what_is_possible():
    assert pca(seed003_table().weight, 3).components.shape == (1, 4)     # V = 2 -> 1 component
    assert pca(np.random.default_rng(0).standard_normal((10, 2)), 3).components.shape == (2, 2)


def test_seed004_cosines_and_gaps():
    table = seed004_table()
    cat, dog, is_ = (table.row_of_token(w) for w in ("cat", "dog", "is"))
    assert round(cosine(table.weight[cat], table.weight[dog]), 3) == 0.997
    assert round(cosine(table.weight[cat], table.weight[is_]), 3) == 0.0
    assert abs(int(table.ids[cat]) - int(table.ids[dog])) == 4734
    assert abs(int(table.ids[cat]) - int(table.ids[is_])) == 3479


def test_seed003_dot_product():
    h, w = np.array([2.0, 1.0]), np.array([3.0, -1.0])
    pair = compare_vectors(h, w)
    assert pair.dot == 5
    assert dot_product_formula(h, w) == "2(3) + 1(−1) = 5"
    assert pair.cosine == pytest.approx(5 / (np.sqrt(5) * np.sqrt(10)))
    assert pair.angle_degrees == pytest.approx(45.0)


def test_zero_vector_cosine_is_reported_not_crashing():
    with pytest.raises(ValueError, match="zero vector"):
        cosine(np.zeros(3), np.ones(3))
    assert compare_vectors(np.zeros(3), np.ones(3)).cosine is None
    assert np.isnan(cosine_matrix(np.array([[0.0, 0.0], [1.0, 0.0]]))[0, 1])


def brute_nearest(weight, row, k, metric):
    scores = []
    for other in range(len(weight)):
        if other == row:
            continue
        if metric == "cosine":
            scores.append((other, cosine(weight[row], weight[other])))
        else:
            scores.append((other, float(np.linalg.norm(weight[row] - weight[other]))))
    scores.sort(key=lambda pair: -pair[1] if metric == "cosine" else pair[1])
    return scores[:k]


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_nearest_matches_brute_force(metric):
    weight = np.random.default_rng(3).standard_normal((120, 9))
    ours = nearest(weight, 17, 6, metric)
    theirs = brute_nearest(weight, 17, 6, metric)
    assert [r for r, _ in ours] == [r for r, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)
    assert 17 not in [r for r, _ in ours]


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_neighbours_tied_to_float32_precision_are_listed_by_row(metric, dtype):
    """Rows equal to the query up to 1e-7 relative noise (another CPU's rounding of one untrained
    vector) are tied neighbours: listed by row (core.order's rule), whatever the noise, in the
    float32 scan and in the float16 scan with its float32 rescoring alike."""
    import torch  # noqa: F401  (loaded: a float16 table takes the half-precision scan)

    rng = np.random.default_rng(5)
    weight = rng.standard_normal((3000, 16)).astype(np.float32)
    copies = [2500, 40, 900, 1700]
    found = []
    for _ in range(5):
        noisy = weight.copy()
        noisy[copies] = weight[0] * (1 + rng.uniform(-1e-7, 1e-7, size=(len(copies), 16)))
        table = noisy.astype(dtype)
        found.append([row for row, _ in nearest(table, 0, 6, metric)])
    assert all(rows == found[0] for rows in found)
    assert found[0][:4] == sorted(copies)
    ids = 10_000 - np.arange(3000)                              # token ids that run against the rows
    assert [row for row, _ in nearest(table, 0, 4, metric, ids=ids)] == sorted(copies, reverse=True)


def test_nearest_k_larger_than_vocabulary():
    table = seed000_table()
    assert len(nearest(table.weight, 0, 50)) == 2


def test_nearest_of_zero_vector_is_a_clear_error():
    with pytest.raises(ValueError, match="zero"):
        nearest(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), 0, 1)


@pytest.mark.parametrize("size, k", [(5, 2), (1000, 3), (200_000, 10), (200_000, 100)])
def test_top_k_equals_a_full_stable_sort(size, k):
    from core.geometry import top_k

    rng = np.random.default_rng(size + k)
    scores = np.round(rng.standard_normal(size), 2)          # many ties
    scores[rng.choice(size, size // 10, replace=False)] = -np.inf
    expected = np.argsort(-scores, kind="stable")[:k]
    assert top_k(scores, k).tolist() == expected.tolist()


def brute_id_gap(weight, ids):
    cosines, gaps = [], []
    for i, j in itertools.combinations(range(len(weight)), 2):
        cosines.append(cosine(weight[i], weight[j]))
        gaps.append(abs(int(ids[i]) - int(ids[j])))
    return np.corrcoef(cosines, gaps)[0, 1]


@pytest.mark.parametrize("size", [5, 40, 9000])
def test_id_gap_correlation_is_exact(size):
    rng = np.random.default_rng(size)
    weight = rng.standard_normal((min(size, 300), 6)) + np.linspace(0, 2, min(size, 300))[:, None]
    ids = rng.permutation(size * 3)[: len(weight)]
    assert id_gap_correlation(weight, ids) == pytest.approx(brute_id_gap(weight, ids), abs=1e-6)


def test_id_gap_blocks_agree_with_brute_force_past_one_block():
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((9000, 4)) + np.linspace(-1, 1, 9000)[:, None]
    sample = np.sort(rng.choice(9000, 300, replace=False))
    ours = id_gap_correlation(weight[sample], sample)
    assert ours == pytest.approx(brute_id_gap(weight[sample], sample), abs=1e-6)
    full = id_gap_correlation(weight)  # 9000 rows: three chunks of the tree
    # id_gap_correlation computes in float32 (unit rows rounded to 2^-24 ≈ 6e-8, node sums added in
    # float32 over ~12 tree levels: up to ~7e-7 relative, ~1.4e-7 seen over 20 seeds) and only
    # accumulates in float64, so it meets this float64 reference at float32 precision, not at 1e-8
    # (abs=1e-8 failed on another CPU whose float32 kernels round in another order).
    assert full == pytest.approx(float64_prefix_id_gap(weight, np.arange(9000)), rel=1e-6)
    assert full < -0.1  # rows drift with the id: far ids point apart


def float64_prefix_id_gap(weight, ids):
    """The same sums in float64 by plain prefix sums in id order (a second derivation)."""
    order = np.argsort(ids, kind="stable")
    unit = weight[order] / np.linalg.norm(weight[order], axis=1, keepdims=True)
    a, n = np.asarray(ids, dtype=np.float64)[order], len(unit)
    total, gram = unit.sum(0), unit.T @ unit
    before = np.cumsum(unit, 0) - unit                          # Σ_{i<j} u_i for each j
    sum_cos_gap = 2 * (np.einsum("ij,ij->i", unit, before) @ a) - (a @ unit) @ total + a.sum()
    pairs = n * (n - 1) / 2
    mean_cos = (total @ total - n) / 2 / pairs
    mean_gap = np.sum(a * (2 * np.arange(n) - (n - 1))) / pairs
    var_cos = ((gram * gram).sum() - n) / 2 / pairs - mean_cos ** 2
    var_gap = (n * (a @ a) - a.sum() ** 2) / pairs - mean_gap ** 2
    return (sum_cos_gap / pairs - mean_cos * mean_gap) / np.sqrt(var_cos * var_gap)


def test_id_gap_stays_exact_on_400000_rows():
    """float32 sums over 400,000 rows drift in the fifth digit; chunked float64 sums do not."""
    rng = np.random.default_rng(7)
    weight = (rng.standard_normal((400_000, 12)) + np.linspace(-0.5, 0.5, 400_000)[:, None] + 0.8).astype(np.float32)
    ids = rng.permutation(400_000)
    expected = float64_prefix_id_gap(weight.astype(np.float64), ids)
    # r is near 0 here (~1.6e-4), so the bound is absolute: float32 products carry ~6e-8 relative
    # error into sums of order 1, i.e. ~1e-7 absolute in r in the worst case (7e-9 seen here); a
    # float32 accumulation would drift by ~1e-5. abs=1e-6 tells the two apart on any CPU.
    assert id_gap_correlation(weight, ids) == pytest.approx(expected, abs=1e-6)


def test_id_gap_on_seed004():
    table = seed004_table()
    assert id_gap_correlation(table.weight, table.ids) == pytest.approx(brute_id_gap(table.weight, table.ids))


def test_sample_pairs_and_spearman():
    weight = np.random.default_rng(0).standard_normal((50, 5))
    sample = sample_pairs(weight, np.arange(50), 100, seed=1)
    assert len(sample.gaps) == 100 and np.all(sample.rows_a != sample.rows_b)
    np.testing.assert_allclose(sample.cosines, [cosine(weight[a], weight[b]) for a, b in zip(sample.rows_a, sample.rows_b)], atol=1e-6)
    from scipy.stats import spearmanr
    assert spearman(sample.gaps, sample.cosines) == pytest.approx(spearmanr(sample.gaps, sample.cosines).statistic)


def test_normalized_rows_keep_zero_rows_zero():
    unit = normalized_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(unit, [[0.6, 0.8], [0, 0]])


@pytest.mark.parametrize("token, kind", [("[CLS]", "special"), ("<|endoftext|>", "special"), ("Ġcat", "word start (Ġ/▁)"),
                                         ("▁the", "word start (Ġ/▁)"), ("##ing", "continuation (##)"), ("42", "digits"),
                                         ("!", "punctuation"), ("cat", "word")])
def test_token_kinds(token, kind):
    assert token_kind(token) == kind


def test_find_and_resolve_tokens():
    tokens = ("Ġcat", "cat", "Ġdog", "##s")
    assert find_tokens(tokens, "cat")[:2] == [0, 1]
    rows, unknown = resolve_tokens(tokens, ["dog", "bird"])
    assert rows == [2] and unknown == ["bird"]


def test_id_gap_with_cached_norms_equals_without():
    from core.geometry import row_norms

    weight = np.random.default_rng(4).standard_normal((500, 7))
    weight[3] = 0.0
    ids = np.random.default_rng(5).permutation(5000)[:500]
    # Both sides run the same float32 sums; numpy's float32 kernels may take another path for
    # another array's alignment, so they agree at float32 precision (relative ~1e-6), not bit for bit.
    assert id_gap_correlation(weight, ids, norms=row_norms(weight)) == pytest.approx(
        id_gap_correlation(weight, ids), rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.float32])
def test_float32_blocks_cover_every_row_exactly(monkeypatch, dtype):
    import core.blocks as blocks

    monkeypatch.setattr(blocks, "_BLOCK_VALUES", 7 * 5)             # 7 rows of 5 per block
    weight = np.random.default_rng(1).standard_normal((30, 5)).astype(dtype)
    pieces = [(start, block.copy()) for start, block in blocks.float32_blocks(weight)]
    assert [start for start, _ in pieces] == ([0] if dtype == np.float32 else list(range(0, 30, 7)))
    np.testing.assert_array_equal(np.concatenate([b for _, b in pieces]), weight.astype(np.float32))
    assert all(b.dtype == np.float32 for _, b in pieces)


def test_ones_column_blocks_carry_the_column_sums_in_their_gram(monkeypatch):
    import torch  # noqa: F401  (loaded: float16 blocks go through torch into the strided buffer)

    import core.blocks as blocks
    from core.geometry import gram_and_column_sums

    monkeypatch.setattr(blocks, "_BLOCK_VALUES", 7 * 5)
    weight = np.random.default_rng(2).standard_normal((30, 5))
    pieces = [block.copy() for _, block in blocks.float32_blocks(weight, ones_column=True)]
    assert all(p.shape[1] == 6 and np.all(p[:, 5] == 1) for p in pieces)
    for table in (weight.astype(np.float16), weight.astype(np.float32), weight):
        gram, sums = gram_and_column_sums(table)
        exact = table.astype(np.float64)
        np.testing.assert_allclose(gram, exact.T @ exact, rtol=1e-6)
        np.testing.assert_allclose(sums, exact.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_every_float16_value_converts_exactly_through_torch():
    import torch  # noqa: F401  (loaded: float16 blocks are converted by torch)

    from core.blocks import as_float32, loaded_torch

    assert loaded_torch() is not None
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(-1, 64)   # incl. inf, NaN, subnormals
    converted, numpy_cast = as_float32(every), every.astype(np.float32)
    nan = np.isnan(numpy_cast)
    np.testing.assert_array_equal(np.isnan(converted), nan)             # NaN payloads may differ (quiet bit)
    np.testing.assert_array_equal(converted[~nan].view(np.uint32), numpy_cast[~nan].view(np.uint32))


@pytest.mark.parametrize("dims", [2, 3])
def test_pca_scatter_names_the_chosen_and_searched_tokens(dims):
    from core.figures.geometry import pca_scatter

    coords = np.arange(5 * dims, dtype=float).reshape(5, dims)
    tokens = ["a", "b", "c", "d", "e"]
    fig = pca_scatter(coords, tokens, np.arange(5), "t", colour_values=np.arange(5), labelled=[1, 3],
                      highlighted=[4])
    named = {trace.name: trace for trace in fig.data}
    assert list(named["chosen"].customdata) == [1, 3] and list(named["searched"].customdata) == [4]
    written = ([a.text for a in fig.layout.annotations] if dims == 2
               else list(named["chosen"].text) + list(named["searched"].text))
    assert written == ["b", "d", "e"]
    if dims == 2:  # each label sits on its point
        assert [(a.x, a.y) for a in fig.layout.annotations] == [(2.0, 3.0), (6.0, 7.0), (8.0, 9.0)]


@pytest.mark.parametrize("points, drawn_as", [(5, "scatter"), (999, "scatter"), (1000, "scattergl"), (40_000, "scattergl")])
def test_many_points_are_drawn_with_webgl_few_with_svg(points, drawn_as):
    from core.figures.geometry import id_gap_scatter, norm_by_id_figure

    values = np.linspace(0, 1, points)
    gaps = id_gap_scatter(np.arange(points), values, [3], [0.5], ["a–b"], "t")
    norms = norm_by_id_figure(np.arange(points), values, [f"t{i}" for i in range(points)], "t")
    assert gaps.data[0].type == drawn_as and gaps.data[1].type == "scatter"      # chosen pairs: labelled SVG
    assert {trace.type for trace in norms.data} == {drawn_as}


def test_a_token_both_chosen_and_searched_is_named_once():
    from core.figures.geometry import pca_scatter

    fig = pca_scatter(np.arange(10, dtype=float).reshape(5, 2), list("abcde"), np.arange(5), "t",
                      colour_values=np.arange(5), labelled=[1, 4], highlighted=[4])
    assert [a.text for a in fig.layout.annotations] == ["b", "e"]


def test_arrow_labels_step_aside_for_near_tips():
    from core.figures.geometry import ARROWS_HEIGHT, arrows_figure, scatter_plot_area
    from core.figures.labels import boxes_overlap, label_boxes, to_pixels

    close = np.array([[2.04, 0.69], [2.39, 0.9], [2.27, 2.38], [2.28, 1.06]])    # GloVe's cat, dog, king, queen
    names = ["★ cat", "dog", "king", "queen"]
    fig = arrows_figure(close, ["cat", "dog", "king", "queen"], "t", highlighted=0)
    notes = [a for a in fig.layout.annotations if a.text]
    assert [a.text for a in notes] == names
    x_range, y_range = fig.layout.xaxis.range, fig.layout.yaxis.range
    area = scatter_plot_area(x_range, y_range, ARROWS_HEIGHT - 10, equal_aspect=True)
    boxes = label_boxes(to_pixels(close, x_range, y_range, area), [(a.xshift, -a.yshift) for a in notes], names)
    assert boxes_overlap(boxes) == []
    fig = arrows_figure(np.array([[2.0, 1.0], [3.0, -1.0]]), ["h", "w"], "t")
    labels = [a for a in fig.layout.annotations if a.text]
    assert [a.text for a in labels] == ["h", "w"]
    assert [trace.name for trace in fig.data] == ["h (2, 1)", "w (3, −1)"]                # the legend
    assert [(a.x, a.y) for a in labels] == [(2.0, 1.0), (3.0, -1.0)]
    assert labels[0].yshift > 0 > labels[1].yshift                  # outward: h above its tip, w below


def test_the_searched_token_figure_is_small_and_marks_the_token_twice():
    """A search redraws this figure only: a few hundred SVG points (no WebGL context to create)."""
    from core.figures.searched import BACKGROUND_POINTS, SearchedPoint, background_rows, searched_token_figure

    rows = background_rows(20_000)
    assert len(rows) == BACKGROUND_POINTS and rows[0] == 0 and rows[-1] == 19_999
    assert np.array_equal(background_rows(3), [0, 1, 2]) and len(background_rows(0)) == 0
    rng = np.random.default_rng(0)
    fig = searched_token_figure(rng.standard_normal((len(rows), 2)), rows, rng.random(len(rows)),
                                SearchedPoint(np.array([0.5, -0.2]), 7, 1.5, "cat", "'cat' · id 7"),
                                [SearchedPoint(np.zeros(2), 3, 1.0, "dog", "'dog' · id 3")], "Where cat sits")
    assert {trace.type for trace in fig.data} == {"scatter"}
    marks = [trace for trace in fig.data if trace.name == "searched"]
    assert [(m.x[0], m.y[0]) for m in marks] == [(0.5, -0.2), (7, 1.5)]       # PCA plane, norm by id
    assert [a.text for a in fig.layout.annotations].count("cat") == 2
    assert sum(len(trace.x) for trace in fig.data) == 2 * len(rows) + 2 + 2
