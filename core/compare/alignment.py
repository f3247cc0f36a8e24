"""Two tables compared on the words they share: do they agree on neighbours, and is one a
rotation of the other (orthogonal Procrustes)?"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.tokens.pieces import token_kind
from core.text import token_core


def word_of(token: str) -> tuple[str, int] | None:
    """The word a token stands for and how well it stands for it (lower is better), or None for
    pieces that are not whole words (specials, '##' continuations, punctuation).
    'Ġking' -> ('king', 0): a word as it appears after a space; 'king' -> ('king', 1);
    'ĠKing' -> ('king', 2); 'King' -> ('king', 3)."""
    kind = token_kind(token)
    if kind in ("special", "continuation (##)", "punctuation"):
        return None
    core = token_core(token)
    if not core or not core.isalnum():
        return None
    word = core.lower()
    return word, (0 if kind == "word start (Ġ/▁)" else 1) + (0 if core == word else 2)


def word_rows(tokens) -> dict[str, int]:
    """word -> the row of the token that best stands for it in one vocabulary."""
    best: dict[str, tuple[int, int]] = {}
    for row, token in enumerate(tokens):
        found = word_of(token)
        if found and (found[0] not in best or found[1] < best[found[0]][0]):
            best[found[0]] = (found[1], row)
    return {word: row for word, (_, row) in best.items()}


@dataclass(frozen=True, eq=False)
class SharedWords:
    words: tuple[str, ...]
    rows_a: np.ndarray      # (n,) row of each word in table A
    rows_b: np.ndarray      # (n,) row of each word in table B


def shared_words(words_a: dict[str, int], words_b: dict[str, int]) -> SharedWords:
    """The words both vocabularies hold, in table A's row order."""
    common = sorted((row, word) for word, row in words_a.items() if word in words_b)
    words = tuple(word for _, word in common)
    return SharedWords(words, np.array([row for row, _ in common], dtype=np.int64),
                       np.array([words_b[w] for w in words], dtype=np.int64))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """(n, d) -> float32 unit rows (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


QUERY_BLOCK = 128     # queries scored at once: (128, n) floats, whatever the number of shared words


def neighbour_lists(unit: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """unit (n, d) unit rows, queries (q,) positions -> (q, k) positions of each query's k
    nearest others by cosine, best first (tied: by position); QUERY_BLOCK queries at a time (bounded memory)."""
    found = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), QUERY_BLOCK):
        block = queries[start:start + QUERY_BLOCK]
        scores = unit[block] @ unit.T                                 # (b, d) @ (d, n) -> (b, n)
        scores[np.arange(len(block)), block] = -np.inf
        scores[~np.isfinite(scores)] = -np.inf
        # cosines equal to float32 precision (of 1, their largest) are tied, listed by position (core.order)
        found[start:start + len(block)] = order.top_k_rows(scores, k, tol=np.full(len(block), order.FLOAT32))
    return found


@dataclass(frozen=True, eq=False)
class Overlap:
    queries: np.ndarray     # (q,) positions in the shared words
    overlap: np.ndarray     # (q,) |kNN_A ∩ kNN_B| / k of each query
    lists_a: np.ndarray     # (q, k) neighbours in A (positions in the shared words)
    lists_b: np.ndarray     # (q, k)

    @property
    def mean(self) -> float:
        return float(self.overlap.mean()) if len(self.overlap) else float("nan")


def neighbour_overlap(vectors_a: np.ndarray, vectors_b: np.ndarray, queries: np.ndarray, k: int) -> Overlap:
    """Both tables' rows of the shared words (n, d_a), (n, d_b): for each query word, the share of
    its k nearest words (among the shared words, by cosine) that both tables agree on."""
    n = len(vectors_a)
    if not 1 <= k < n:
        raise ValueError(f"overlap@{k} needs more than {k} shared words; there are {n}")
    queries = np.asarray(queries, dtype=np.int64)
    lists_a = neighbour_lists(unit_rows(vectors_a), queries, k)
    lists_b = neighbour_lists(unit_rows(vectors_b), queries, k)
    agree = (lists_a[:, :, None] == lists_b[:, None, :]).any(axis=2).sum(axis=1)
    return Overlap(queries, agree / k, lists_a, lists_b)


def chance_overlap(k: int, n: int) -> float:
    """The expected overlap@k of two unrelated tables: k of the other n − 1 words drawn at random."""
    return k / (n - 1)


def standardised(vectors: np.ndarray, width: int | None = None) -> np.ndarray:
    """(n, d) -> (n, width) float64: centred, reduced by PCA to `width` columns if narrower than d,
    scaled so the mean squared row length is 1 (two tables then compare on one scale)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    centred = vectors - vectors.mean(axis=0)
    if width is not None and width < vectors.shape[1]:
        _, eigenvectors = np.linalg.eigh(centred.T @ centred)         # (d, d), ascending eigenvalues
        centred = centred @ eigenvectors[:, ::-1][:, :width]           # the top `width` principal directions
    scale = np.sqrt((centred ** 2).sum(axis=1).mean())
    if scale == 0:
        raise ValueError("the shared words' vectors are all the same (a table of zeros?): nothing to align")
    return centred / scale


@dataclass(frozen=True, eq=False)
class Alignment:
    rotation: np.ndarray    # (w, w) orthogonal: A R ≈ B
    before: float           # ‖A − B‖ / ‖B‖ with no rotation
    residual: float         # ‖A R − B‖ / ‖B‖
    shuffled: float         # the same with the pairs shuffled: what an unrelated pairing leaves


def procrustes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """A, B (n, w) -> (the orthogonal R (w, w) that minimises ‖A R − B‖_F, that minimum / ‖B‖_F).

    R = U Vᵀ from the SVD U S Vᵀ of the cross-covariance Aᵀ B (Schönemann 1966). The residual
    needs no product A R: ‖A R − B‖² = ‖A‖² + ‖B‖² − 2 tr(Rᵀ Aᵀ B) = ‖A‖² + ‖B‖² − 2 Σ S.
    """
    u, singular, vt = np.linalg.svd(a.T @ b)                           # (w, n) @ (n, w) -> (w, w)
    squared_a, squared_b = float(np.einsum("ij,ij->", a, a)), float(np.einsum("ij,ij->", b, b))
    left = max(squared_a + squared_b - 2.0 * float(singular.sum()), 0.0)
    return u @ vt, float(np.sqrt(left / squared_b))


def relative_residual(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def align(a: np.ndarray, b: np.ndarray, seed: int = 0) -> Alignment:
    """Standardised A, B (n, w) -> the best rotation and how much of B it leaves unexplained."""
    if a.shape != b.shape:
        raise ValueError(f"tables of shapes {a.shape} and {b.shape} cannot be aligned row by row")
    if len(a) < a.shape[1] + 1:
        raise ValueError(f"aligning {a.shape[1]} columns needs more than {a.shape[1]} shared words; there are {len(a)}")
    rotation, residual = procrustes(a, b)
    _, shuffled = procrustes(a[np.random.default_rng(seed).permutation(len(a))], b)
    return Alignment(rotation, relative_residual(a, b), residual, shuffled)
