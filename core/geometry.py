"""Geometry of an embedding table: PCA, cosine and dot product, neighbours, token kinds."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from core import order
from core.blocks import float32_blocks, loaded_torch, torch_view
from core.eigen import top_eigenpairs
from core.text import even_decimals, format_number


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
        basis = self.components.T.astype(np.float32)                      # (d, k)
        projected = np.empty((self.weight.shape[0], basis.shape[1]))
        for start, block in float32_blocks(self.weight):
            projected[start:start + len(block)] = block @ basis           # (b, d) @ (d, k) -> (b, k)
        return projected - self.mean @ self.components.T

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """vectors (n, d) -> (n, k) in this fixed basis."""
        return (np.asarray(vectors, dtype=np.float64) - self.mean) @ self.components.T


def possible_components(vocab_size: int, width: int, wanted: int) -> int:
    """PCA can give at most min(d, V - 1) meaningful components (at least 1)."""
    return max(1, min(wanted, width, vocab_size - 1))


def pca(weight: np.ndarray, k: int) -> PCAResult:
    """weight (V, d) -> top-k principal components by eigendecomposition of the covariance.

    The (d, d) Gram matrix and the column sums are formed in float32 BLAS (fast on 400k rows;
    a float16 table is converted block by block, never copied whole: `gram_and_column_sums`);
    centring and the eigensolve are done in float64. Signs are fixed (largest
    |entry| of each component positive) so the basis of a table never flips between runs.
    """
    weight = np.asarray(weight)
    vocab_size, width = weight.shape
    k = possible_components(vocab_size, width, k)
    gram, column_sum = gram_and_column_sums(weight)
    mean = column_sum / vocab_size                                   # (d,)
    covariance = (gram - vocab_size * np.outer(mean, mean)) / max(vocab_size - 1, 1)
    total = float(np.clip(np.diag(covariance), 0.0, None).sum())     # trace = sum of all eigenvalues
    eigenvalues, eigenvectors = top_eigenpairs(covariance, k)        # (k,) descending, (d, k)
    components = eigenvectors.T                                      # (k, d)
    signs = np.sign(components[np.arange(k), np.abs(components).argmax(axis=1)])
    components = components * np.where(signs == 0, 1.0, signs)[:, None]
    variance = np.clip(eigenvalues, 0.0, None)
    ratio = variance / total if total > 0 else np.zeros_like(variance)
    return PCAResult(components, variance, ratio, mean, weight)


def gram_and_column_sums(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """weight (V, d) -> (Gram EᵀE (d, d), column sums (d,)), float32 products, float64 results.

    A float32 table is used in place. Other dtypes are converted block by block with a column
    of ones appended: [E | 1]ᵀ[E | 1] carries the column sums in its last row, so one BLAS call
    per block gives both (a separate sum would read each 16 MB block again).
    """
    width = weight.shape[1]
    if weight.dtype == np.float32:
        column_sum = np.ones(len(weight), dtype=np.float32) @ weight          # (V,) @ (V, d) -> (d,)
        return (weight.T @ weight).astype(np.float64), column_sum.astype(np.float64)
    gram = np.zeros((width + 1, width + 1))
    for _, block in float32_blocks(weight, ones_column=True):
        gram += block.T @ block                                  # (d+1, b) @ (b, d+1) -> (d+1, d+1)
    return gram[:width, :width], gram[width, :width]


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


def top_k(scores: np.ndarray, k: int, tol: float | None = None, ids: np.ndarray | None = None) -> np.ndarray:
    """Indices of the k largest scores (V,) -> (k,), best first, by core.order's rule: scores
    within `tol` (default float32 precision of the largest |score|) are tied and listed by `ids`
    (V,) (default: the index).
    NaN scores are not allowed (callers map them to ∓inf)."""
    return order.top_k(scores, k, ids=ids, descending=True, tol=tol, rel=order.FLOAT32)


def nearest(weight: np.ndarray, query_row: int, k: int, metric: str = "cosine",
            norms: np.ndarray | None = None, ids: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Rows nearest to weight[query_row]: [(row, score)] best first, the query excluded. Scores
    equal to float32 precision are tied and listed by token id, `ids` (V,) (default: the row).

    One matvec over the table: cosine = (E q) / (|e| |q|) (higher is nearer; rows with a zero
    vector are never neighbours); euclidean = sqrt(|e|^2 - 2 e·q + |q|^2) (lower is nearer).
    Pass the cached row norms (V,) so a query costs one matvec. A float16 table is scanned by
    a half-precision matvec and its few candidates rescored in float32 (same result, see
    `_half_precision_nearest`).
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
    if metric == "cosine" and norms[query_row] == 0:
        raise ValueError("this token's vector is zero: cosine to it is undefined")
    tol = _nearness_tolerance(norms, norms[query_row], metric)
    best, nearness = _half_precision_nearest(weight, query_row, k, metric, norms, tol, ids)
    if best is None:
        query = np.asarray(weight[query_row], dtype=np.float32)
        nearness = _nearness(_exact_dots(weight, query), norms, norms[query_row], metric)
        nearness[query_row] = -np.inf
        best = top_k(nearness, k, tol, ids)
    if metric == "cosine":
        return [(int(row), float(nearness[row])) for row in best]
    return [(int(row), float(np.sqrt(max(-float(nearness[row]), 0.0)))) for row in best]


def _nearness_tolerance(norms: np.ndarray, query_norm: float, metric: str) -> float:
    """Nearness values equal to float32 precision are tied (core.order): rel 1e-6 of the largest a
    nearness can be, 1 for a cosine, (|e| + |q|)² for a squared distance. The same for the float16
    and the float32 scan, so both list tied neighbours alike (by row)."""
    if metric == "cosine":
        return order.FLOAT32
    finite = norms[np.isfinite(norms)]
    return order.FLOAT32 * (float(finite.max(initial=0.0)) + float(query_norm)) ** 2


def _exact_dots(weight: np.ndarray, query: np.ndarray) -> np.ndarray:
    """(V, d) · (d,) -> (V,) float32 dots (one matvec for a float32 table, else block by block)."""
    dots = [block @ query for _, block in float32_blocks(weight)]
    return dots[0] if len(dots) == 1 else np.concatenate(dots)


def _nearness(dots: np.ndarray, norms: np.ndarray, query_norm: float, metric: str) -> np.ndarray:
    """Dots (n,) with the query -> (n,), higher is nearer: the cosine (float32), or minus the
    squared distance |e|² - 2 e·q + |q|² (float64). Undefined rows (zero, NaN) get -inf."""
    if metric == "cosine":
        scores = dots.astype(np.float32, copy=False)                     # in place when float32
        with np.errstate(divide="ignore", invalid="ignore"):            # zero rows: nan or ±inf
            np.divide(scores, norms, out=scores, casting="same_kind")
        scores *= np.float32(1 / query_norm)
    else:
        scores = 2 * dots.astype(np.float64) - norms * norms - query_norm * query_norm   # float64: cancels
    scores[~np.isfinite(scores)] = -np.inf
    return scores


_HALF_DOT_ERROR = 2.0 ** -9  # bound on |fp16 dot - exact| / (|e| |q|); fp16 rounding is 2^-11


def _half_precision_nearest(weight, query_row: int, k: int, metric: str, norms: np.ndarray, tol: float = 0.0,
                            ids: np.ndarray | None = None):
    """(best rows (k,), nearness (V,)) of a float16 table, exactly as the float32 scan ranks
    them; (None, None) for other tables or when torch is not loaded.

    torch's fp16 matvec reads half the bytes of a float32 scan. Its dots are within
    _HALF_DOT_ERROR·|e||q| of the exact ones, so only rows whose upper bound reaches the k-th
    largest lower bound can be in the exact top k; those few are rescored in float32. torch
    is used only when a model page already loaded it, never imported for this.
    """
    torch = loaded_torch()
    if weight.dtype != np.float16 or torch is None:
        return None, None
    with torch.no_grad():
        dots = torch.nn.functional.linear(torch_view(weight[query_row])[None], torch_view(weight))
    dots = dots[0].float().numpy()                                          # (V,)
    if np.isinf(dots).any():                       # fp16 overflow: scan in float32 instead
        return None, None
    query_norm = float(norms[query_row])
    approx = _nearness(dots, norms, query_norm, metric)
    approx[query_row] = -np.inf
    margin = _HALF_DOT_ERROR if metric == "cosine" else 2 * _HALF_DOT_ERROR * norms * query_norm
    lower = approx - margin
    floor = np.partition(lower, len(lower) - k)[len(lower) - k] - tol      # k-th largest lower bound
    candidates = np.flatnonzero(approx + margin >= floor)                  # every row left out is below floor
    exact_dots = np.asarray(weight[candidates], dtype=np.float32) @ np.asarray(weight[query_row], np.float32)
    exact = _nearness(exact_dots, norms[candidates], query_norm, metric)
    exact[candidates == query_row] = -np.inf
    best = order.top_k(exact, k, ids=candidates if ids is None else np.asarray(ids)[candidates], tol=tol)
    low, _ = order.group_bounds(exact, exact[best[-1]], tol)                # the k-th one's tie group
    if low - tol < floor and len(candidates) < weight.shape[0]:            # a row left out could be tied
        return None, None
    nearness = np.full(weight.shape[0], -np.inf, dtype=exact.dtype)
    nearness[candidates] = exact
    return candidates[best], nearness


def sample_rows(vocab_size: int, size: int, seed: int = 0, must_include=()) -> np.ndarray:
    """The rows a page draws or maps, sorted (n,): all V rows when size ≥ V; else every
    `must_include` row (those in 0..V-1) and a seeded random sample of the others, min(size, V)
    rows in all (more only when `must_include` alone holds more), so "N points" is what is shown.
    The one sampler of every page (Geometry, Lookup, Directions, Hidden, Compare, Maps)."""
    if size >= vocab_size:
        return np.arange(vocab_size)
    extra = np.unique(np.asarray([r for r in must_include if 0 <= r < vocab_size], dtype=np.int64))
    shuffled = np.random.default_rng(seed).permutation(vocab_size)
    others = shuffled[~np.isin(shuffled, extra)][:max(0, size - len(extra))]
    return np.sort(np.concatenate([extra, others]))


def pair_plane(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(d,), (d,) -> (2, 2): a and b in the plane they span, a along the first axis, b's part perpendicular to a
    on the second. Lengths, the dot product and the angle are exactly theirs (a projection on a table's
    principal axes drew seed 003's cat and dog on one line, 8.8° apart in the table under it)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    length = float(np.linalg.norm(a))
    along = float(a @ b) / length if length else 0.0
    across = float(np.sqrt(max(float(b @ b) - along ** 2, 0.0)))
    return np.array([[length, 0.0], [along, across]])


def dot_product_formula(a: np.ndarray, b: np.ndarray, digits: int = 3, total: str | None = None) -> str:
    """'2(3) + 1(−1) = 5': the dot product written out with the actual numbers (first 6 terms); `total`, when
    given, is the sum as its table writes it (so both columns read the same number)."""
    text = ""
    for index, (x, y) in enumerate(zip(a[:6], b[:6])):
        term = f"{format_number(abs(x), digits)}({format_number(y, digits)})"
        sign = ("−" if x < 0 else "") if index == 0 else (" − " if x < 0 else " + ")
        text += sign + term
    more = " + …" if len(a) > 6 else ""
    return text + more + f" = {total or format_number(float(np.dot(a, b)), digits)}"


def pair_table(vectors: np.ndarray, labels: list[str]) -> list[dict[str, str]]:
    """vectors (n, d) -> one row per pair: lengths, dot, cosine, angle and the dot written out.

    Both lengths share their decimals across the table, as do dots and cosines (0.230 beside 0.934, not 0.23)."""
    pairs = [(i, j, compare_vectors(vectors[i], vectors[j]))
             for i in range(len(labels)) for j in range(i + 1, len(labels))]
    if not pairs:
        return []
    lengths = even_decimals([[pair.length_a, pair.length_b] for _, _, pair in pairs], 3)
    dots = even_decimals([[pair.dot for _, _, pair in pairs]], 3)[0]
    cosines = even_decimals([[np.nan if pair.cosine is None else pair.cosine for _, _, pair in pairs]], 3)[0]
    records = []
    for row, (i, j, pair) in enumerate(pairs):
        records.append({"pair": f"{labels[i]} · {labels[j]}",
                        "|a|": lengths[row][0], "|b|": lengths[row][1], "dot a·b": dots[row],
                        "cosine": "undefined (zero vector)" if pair.cosine is None else cosines[row],
                        "angle": "—" if pair.angle_degrees is None else f"{pair.angle_degrees:.1f}°",
                        "a·b written out": dot_product_formula(vectors[i], vectors[j], total=dots[row])})
    return records
