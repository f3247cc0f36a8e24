"""core.geometry against scikit-learn, brute force and seed 000/003/004 numbers; token kinds (core.tokens.pieces)."""
from __future__ import annotations

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
    pair_table,
    pca,
)
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


def test_a_pair_tables_numbers_share_their_decimals_and_its_sums_agree():
    vectors = np.array([[0.1, 0.2, 0.1], [0.5, 0.6, 0.4], [2.0, 1.0, 0.0]])
    rows = pair_table(vectors, ["a", "b", "c"])
    lengths = [row[key] for row in rows for key in ("|a|", "|b|")]
    assert {len(text.split(".")[1]) for text in lengths} == {3}          # 0.245 beside 2.236: one width
    assert [row["|a|"] for row in rows] == [f"{np.linalg.norm(vectors[i]):.3f}" for i in (0, 0, 1)]
    assert {len(row["dot a·b"].split(".")[1]) for row in rows} == {2}    # 0.21, 0.40, 1.60
    for row, (i, j) in zip(rows, [(0, 1), (0, 2), (1, 2)]):
        assert float(row["dot a·b"]) == pytest.approx(vectors[i] @ vectors[j], abs=5e-3)
        assert row["a·b written out"].endswith(" = " + row["dot a·b"])


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


def test_two_arrows_drawn_in_their_own_plane_keep_lengths_dot_and_angle():
    """Seed 003's cat and dog, projected on the table's principal axis, lay on one line 8.8° apart."""
    from core.geometry import compare_vectors, pair_plane

    rng = np.random.default_rng(3)
    for a, b in [(np.array([0.9, 0.3, -0.2, 0.6]), np.array([0.8, 0.4, -0.1, 0.5])),
                 tuple(rng.normal(size=(2, 50))), (np.zeros(4), np.ones(4)), (np.ones(3), -2 * np.ones(3))]:
        plane = pair_plane(a, b)
        np.testing.assert_allclose(np.linalg.norm(plane, axis=1), [np.linalg.norm(a), np.linalg.norm(b)], atol=1e-12)
        np.testing.assert_allclose(plane[0] @ plane[1], a @ b, atol=1e-12)
        drawn, true = compare_vectors(*plane), compare_vectors(a, b)
        if true.angle_degrees is not None:
            assert abs(drawn.angle_degrees - true.angle_degrees) < 1e-6
    assert abs(compare_vectors(*pair_plane(np.array([0.9, 0.3, -0.2, 0.6]),
                                          np.array([0.8, 0.4, -0.1, 0.5]))).angle_degrees - 8.8) < 0.05
