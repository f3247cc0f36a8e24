"""Geometry of an embedding table: PCA, cosine and dot product, neighbours, token kinds."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass(frozen=True, eq=False)
class PCAResult:
    components: np.ndarray                # (k, d), orthonormal rows
    explained_variance: np.ndarray        # (k,)
    explained_variance_ratio: np.ndarray  # (k,) share of the total variance
    mean: np.ndarray                      # (d,)
    weight: np.ndarray = field(repr=False)  # (V, d) the table the basis was fitted on

    @cached_property
    def coords(self) -> np.ndarray:
        """(V, k) = (weight - mean) @ components.T, computed on first use."""
        work = np.asarray(self.weight, dtype=np.float32)
        projected = work @ self.components.T.astype(np.float32)          # (V, d) @ (d, k) -> (V, k)
        return projected.astype(np.float64) - self.mean @ self.components.T

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """vectors (n, d) -> (n, k) in this fixed basis."""
        return (np.asarray(vectors, dtype=np.float64) - self.mean) @ self.components.T


def possible_components(vocab_size: int, width: int, wanted: int) -> int:
    """PCA can give at most min(d, V - 1) meaningful components (at least 1)."""
    return max(1, min(wanted, width, vocab_size - 1))


def pca(weight: np.ndarray, k: int) -> PCAResult:
    """weight (V, d) -> top-k principal components by eigendecomposition of the covariance.

    The (d, d) Gram matrix and the column sums are formed in float32 BLAS (fast on 400k rows);
    centring and the eigensolve are done in float64. Signs are fixed (largest
    |entry| of each component positive) so the basis of a table never flips between runs.
    """
    weight = np.asarray(weight)
    vocab_size, width = weight.shape
    k = possible_components(vocab_size, width, k)
    work = weight.astype(np.float32, copy=False)
    mean = (np.ones(vocab_size, dtype=np.float32) @ work).astype(np.float64) / vocab_size  # (d,)
    gram = (work.T @ work).astype(np.float64)                        # (d, V) @ (V, d) -> (d, d)
    covariance = (gram - vocab_size * np.outer(mean, mean)) / max(vocab_size - 1, 1)
    total = float(np.clip(np.diag(covariance), 0.0, None).sum())     # trace = sum of all eigenvalues
    # numpy's own LAPACK: scipy's separate OpenBLAS would compete with numpy's threads
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)           # ascending
    order = np.argsort(eigenvalues)[::-1][:k]
    components = eigenvectors[:, order].T                            # (k, d)
    signs = np.sign(components[np.arange(k), np.abs(components).argmax(axis=1)])
    components = components * np.where(signs == 0, 1.0, signs)[:, None]
    variance = np.clip(eigenvalues[order], 0.0, None)
    ratio = variance / total if total > 0 else np.zeros_like(variance)
    return PCAResult(components, variance, ratio, mean, weight)


def row_norms(weight: np.ndarray) -> np.ndarray:
    """(V, d) -> (V,) Euclidean norms, computed in float64."""
    weight = np.asarray(weight)
    return np.sqrt(np.einsum("ij,ij->i", weight, weight, dtype=np.float64))


def normalized_rows(weight: np.ndarray) -> np.ndarray:
    """(V, d) -> (V, d) float32 unit rows; zero rows stay zero (their cosine is undefined)."""
    norms = row_norms(weight)
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return (np.asarray(weight, dtype=np.float32) * scale[:, None].astype(np.float32))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = a·b / (|a| |b|). Raises ValueError when either vector is zero."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    norm_a, norm_b = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if norm_a == 0 or norm_b == 0:
        raise ValueError("cosine is undefined for a zero vector (its length is 0)")
    return float(a @ b / (norm_a * norm_b))


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """(n, d) -> (n, n) pairwise cosines; NaN where a vector is zero."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = vectors / norms[:, None]
    return unit @ unit.T                                              # (n, d) @ (d, n) -> (n, n)


@dataclass(frozen=True)
class PairComparison:
    length_a: float
    length_b: float
    dot: float
    cosine: float | None      # None when a vector is zero
    angle_degrees: float | None


def compare_vectors(a: np.ndarray, b: np.ndarray) -> PairComparison:
    """Lengths, dot product, cosine and angle of two vectors (d,)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    dot = float(a @ b)
    try:
        cos = cosine(a, b)
    except ValueError:
        return PairComparison(float(np.linalg.norm(a)), float(np.linalg.norm(b)), dot, None, None)
    angle = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
    return PairComparison(float(np.linalg.norm(a)), float(np.linalg.norm(b)), dot, cos, angle)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores (V,) -> (k,), best first, ties by index.

    The k-th largest of every 64th score is a threshold that at least k scores reach; about
    64·k scores do, so one comparison leaves a few hundred candidates to sort instead of
    partitioning all V. NaN scores are not allowed (callers map them to ∓inf).
    """
    k = min(k, len(scores))
    if len(scores) < 64 * 4 * k:                  # small tables: sorting everything is cheap
        candidates = np.arange(len(scores))
    else:
        sampled = scores[::64]
        threshold = np.partition(sampled, len(sampled) - k)[len(sampled) - k]
        candidates = np.flatnonzero(scores >= threshold)
    return candidates[np.argsort(-scores[candidates], kind="stable")][:k]


def nearest(weight: np.ndarray, query_row: int, k: int, metric: str = "cosine",
            norms: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Rows nearest to weight[query_row]: [(row, score)] best first, the query excluded.

    One matvec over the table: cosine = (E q) / (|e| |q|) (higher is nearer; rows with a zero
    vector are never neighbours); euclidean = sqrt(|e|^2 - 2 e·q + |q|^2) (lower is nearer).
    Pass the cached row norms (V,) so a query costs one matvec.
    """
    vocab_size = weight.shape[0]
    if not 0 <= query_row < vocab_size:
        raise ValueError(f"row {query_row} is outside 0..{vocab_size - 1}")
    if metric not in ("cosine", "euclidean"):
        raise ValueError(f"unknown metric {metric!r}: use cosine or euclidean")
    k = max(0, min(int(k), vocab_size - 1))
    if k == 0:
        return []
    norms = row_norms(weight) if norms is None else norms
    query = np.asarray(weight[query_row], dtype=np.float32)
    dots = np.asarray(weight, dtype=np.float32) @ query                 # (V, d) @ (d,) -> (V,)
    if metric == "cosine":
        if norms[query_row] == 0:
            raise ValueError("this token's vector is zero: cosine to it is undefined")
        scores = dots                                                    # float32, in place
        with np.errstate(divide="ignore", invalid="ignore"):            # zero rows: nan or ±inf
            np.divide(scores, norms, out=scores, casting="same_kind")
        scores *= np.float32(1 / norms[query_row])
        scores[~np.isfinite(scores)] = -np.inf                          # never a neighbour
        scores[query_row] = -np.inf
        best = top_k(scores, k)
    else:
        squared = norms * norms
        scores = np.sqrt(np.clip(squared - 2 * dots + squared[query_row], 0, None))
        scores[~np.isfinite(scores)] = np.inf                           # NaN rows: never near
        scores[query_row] = np.inf
        best = top_k(-scores, k)
    return [(int(row), float(scores[row])) for row in best]


TOKEN_KINDS = ("special", "word start (Ġ/▁)", "continuation (##)", "digits", "punctuation", "word")
_SPECIAL = re.compile(r"^(\[[A-Za-z_]+\]|<\|?[^<>\s]*\|?>|<unused\d+>)$")


def token_kind(token: str) -> str:
    """One of TOKEN_KINDS for a token string of any tokenizer (WordPiece, BPE, SentencePiece)."""
    if _SPECIAL.match(token):
        return "special"
    if token.startswith(("Ġ", "▁")):
        return "word start (Ġ/▁)"
    if token.startswith("##"):
        return "continuation (##)"
    core = token.lstrip("Ġ▁#")
    if core and core.isdigit():
        return "digits"
    if core and all(not ch.isalnum() for ch in core):
        return "punctuation"
    return "word"


def find_tokens(tokens, query: str, limit: int = 20) -> list[int]:
    """Rows whose token equals the query (case-insensitive), then rows containing it."""
    query = query.strip().lower()
    if not query:
        return []
    exact, partial = [], []
    for row, token in enumerate(tokens):
        lowered = token.lstrip("Ġ▁#").lower()
        if lowered == query or token.lower() == query:
            exact.append(row)
        elif query in token.lower() and len(partial) < limit:
            partial.append(row)
        if len(exact) >= limit:
            break
    return (exact + partial)[:limit]


def plot_sample(vocab_size: int, max_points: int, seed: int = 0, must_include=()) -> np.ndarray:
    """Rows to draw: all when V <= max_points, else a seeded random sample plus `must_include`."""
    if vocab_size <= max_points:
        return np.arange(vocab_size)
    rng = np.random.default_rng(seed)
    sample = rng.choice(vocab_size, size=max_points, replace=False)
    extra = np.asarray([r for r in must_include if 0 <= r < vocab_size], dtype=np.int64)
    return np.unique(np.concatenate([sample, extra]))


def resolve_tokens(tokens, words: list[str], row_of_token=None) -> tuple[list[int], list[str]]:
    """Words -> (rows, unknown words). Exact token first, then a piece match ('cat' -> 'Ġcat')."""
    rows, unknown = [], []
    for word in words:
        row = row_of_token(word) if row_of_token else None
        if row is None:
            matches = find_tokens(tokens, word, limit=1)
            row = matches[0] if matches and tokens[matches[0]].lstrip("Ġ▁#").lower() == word.lower() else None
        if row is None:
            unknown.append(word)
        elif row not in rows:
            rows.append(row)
    return rows, unknown


def dot_product_formula(a: np.ndarray, b: np.ndarray, digits: int = 3) -> str:
    """'2(3) + 1(−1) = 5': the dot product written out with the actual numbers (first 6 terms)."""
    from core.figures import format_number

    text = ""
    for index, (x, y) in enumerate(zip(a[:6], b[:6])):
        term = f"{format_number(abs(x), digits)}({format_number(y, digits)})"
        sign = ("−" if x < 0 else "") if index == 0 else (" − " if x < 0 else " + ")
        text += sign + term
    more = " + …" if len(a) > 6 else ""
    return text + more + f" = {format_number(float(np.dot(a, b)), digits)}"
