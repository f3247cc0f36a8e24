"""core.eigen.top_eigenpairs against numpy's full eigendecomposition."""
from __future__ import annotations

import numpy as np
import pytest

from core.eigen import _krylov_top, top_eigenpairs


def symmetric_with(spectrum: np.ndarray, seed: int = 0) -> np.ndarray:
    """(d,) eigenvalues -> (d, d) symmetric matrix with a random orthonormal eigenbasis."""
    basis = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(spectrum), len(spectrum))))[0]
    return (basis * spectrum) @ basis.T


def reference(matrix: np.ndarray, k: int):
    values, vectors = np.linalg.eigh(matrix)
    return values[::-1][:k], vectors[:, ::-1][:, :k]


def same_subspace(a: np.ndarray, b: np.ndarray) -> bool:
    """Columns of a and b (d, k) span the same space (eigenvectors of a repeated value are any basis)."""
    return np.allclose(a @ a.T, b @ b.T, atol=1e-8)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("decay", [0.8, 0.9])
def test_decaying_spectrum_takes_the_krylov_shortcut_and_agrees(k, decay):
    matrix = symmetric_with(decay ** np.arange(600))
    assert _krylov_top(matrix, k, max_dim=600 // 8) is not None        # the shortcut, not the fallback
    values, vectors = top_eigenpairs(matrix, k)
    want_values, want_vectors = reference(matrix, k)
    np.testing.assert_allclose(values, want_values, rtol=1e-9)
    assert np.abs(np.sum(vectors * want_vectors, axis=0)).min() > 1 - 1e-12
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(k), atol=1e-12)


@pytest.mark.parametrize("multiplicity", [2, 3])
def test_a_repeated_top_eigenvalue_gives_its_whole_eigenspace(multiplicity):
    spectrum = np.concatenate([np.full(multiplicity, 5.0), 0.8 ** np.arange(600 - multiplicity)])
    matrix = symmetric_with(spectrum, seed=1)
    values, vectors = top_eigenpairs(matrix, 3)
    want_values, want_vectors = reference(matrix, 3)
    np.testing.assert_allclose(values, want_values, rtol=1e-9)
    assert same_subspace(vectors[:, :multiplicity], want_vectors[:, :multiplicity])


def test_a_flat_spectrum_falls_back_to_the_full_eigendecomposition():
    matrix = symmetric_with(1 + 0.01 * np.random.default_rng(2).random(600))   # no gap to converge on
    assert _krylov_top(matrix, 3, max_dim=600 // 8) is None
    values, vectors = top_eigenpairs(matrix, 3)
    want_values, want_vectors = reference(matrix, 3)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(vectors, want_vectors)


def test_rank_deficient_covariance_of_fewer_rows_than_columns():
    rows = np.random.default_rng(3).standard_normal((40, 640)) * np.linspace(4, 1, 640)
    matrix = np.cov(rows.T)                                             # rank 39
    values, vectors = top_eigenpairs(matrix, 3)
    want_values, want_vectors = reference(matrix, 3)
    np.testing.assert_allclose(values, want_values, rtol=1e-9)
    assert np.abs(np.sum(vectors * want_vectors, axis=0)).min() > 1 - 1e-10


@pytest.mark.parametrize("width", [1, 3, 50])
def test_small_matrices_use_the_full_eigendecomposition(width):
    matrix = symmetric_with(np.arange(width, 0, -1.0))
    values, vectors = top_eigenpairs(matrix, 3)
    want_values, want_vectors = reference(matrix, 3)
    assert values.shape == (min(3, width),) and vectors.shape == (width, min(3, width))
    np.testing.assert_array_equal(values, want_values)
