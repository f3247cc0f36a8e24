"""Directions named by words: semantic axes (man → woman) and analogies (king − man + woman).

Every score is a cosine with the table's rows, computed as one product of the table with a few
vectors (V, d) @ (d, m) and the cached inverse row lengths: on GloVe's 400,000 rows a whole axis or
analogy costs about one matrix-vector product.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import order
from core.blocks import float32_blocks
from core.geometry import top_k

COSMUL_EPSILON = 1e-3     # Levy & Goldberg (2014): keeps 3CosMul's division finite


def table_products(weight: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """weight (V, d) @ vectors (d, m) -> (V, m) float32, block by block for a float16 table."""
    vectors = np.asarray(vectors, dtype=np.float32)
    parts = [block @ vectors for _, block in float32_blocks(weight)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def table_cosines(weight: np.ndarray, inverse: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """cos(v, row) for each unit vector v and every row: (V, d), (V,) inverse row lengths
    (`inverse_norms`), (d, m) unit columns -> (m, V) float32, one contiguous row per vector.
    Rows of length zero get NaN (cosine undefined)."""
    cosines = np.ascontiguousarray(table_products(weight, vectors).T)      # (m, V): fast row passes
    cosines *= inverse
    return cosines


def inverse_norms(norms: np.ndarray) -> np.ndarray:
    """(V,) row lengths -> (V,) float32 1/|row|, NaN for a zero row: a product with it is then
    NaN, "undefined", with no separate pass. Computed once per table (ui.cached)."""
    norms = norms.astype(np.float32)
    inverse = np.full_like(norms, np.nan)
    np.divide(np.float32(1.0), norms, out=inverse, where=norms > 0)
    return inverse


def unit_mean(weight: np.ndarray, rows: list[int]) -> np.ndarray:
    """The mean of the rows' unit vectors (d,) (each word counts once, whatever its length)."""
    vectors = np.asarray(weight[rows], dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    if (norms == 0).any():
        raise ValueError("a word of the set has a zero vector: it has no direction")
    return (vectors / norms[:, None]).mean(axis=0)


@dataclass(frozen=True)
class Axis:
    label: str                 # "man → woman"
    direction: np.ndarray      # (d,) unit vector from the mean of one set to the mean of the other


def axis(weight: np.ndarray, start_rows: list[int], end_rows: list[int], label: str) -> Axis:
    """The unit direction mean(end) − mean(start) of the sets' unit vectors. ValueError for an
    empty set, the same set on both ends, or two sets with the same mean."""
    if not start_rows or not end_rows:
        raise ValueError(f"axis {label}: each end needs at least one word of this table")
    if set(start_rows) == set(end_rows):
        raise ValueError(f"axis {label}: both ends are the same words, so there is no direction between them")
    direction = unit_mean(weight, end_rows) - unit_mean(weight, start_rows)
    length = float(np.linalg.norm(direction))
    if length < 1e-9:
        raise ValueError(f"axis {label}: both ends have the same mean vector, so there is no direction")
    return Axis(label, direction / length)


def axes_cosine(x: Axis, y: Axis) -> float:
    return float(np.clip(x.direction @ y.direction, -1.0, 1.0))


def project_on_axes(weight: np.ndarray, inverse: np.ndarray, axes: list[Axis]) -> np.ndarray:
    """(V, d), (V,) inverse row lengths -> (len(axes), V): each row's cosine with each axis
    direction (NaN for zero rows)."""
    return table_cosines(weight, inverse, np.stack([a.direction for a in axes], axis=1))


@dataclass(frozen=True)
class Answers:
    rows: np.ndarray        # (k,) best first
    scores: np.ndarray      # (k,)
    expected_rank: int | None    # 1-based rank of the expected answer, None when none was given
    expected_score: float | None


@dataclass(frozen=True)
class Analogy:
    method: str             # "3CosAdd" or "3CosMul"
    excluded: Answers       # the usual reading: a, b and c may not be the answer
    included: Answers       # every row may answer, the inputs too


METHODS = ("3CosAdd", "3CosMul")


def axis_extremes(coords: np.ndarray, count: int) -> tuple[tuple[int, ...], ...]:
    """coords (2, V) every row's cosine with each axis -> up to `count` rows furthest toward each end:
    (x toward its end words, x toward its start words, y toward end, y toward start), each only rows
    that point that way (positive cosine); rows of undefined cosine (NaN) never."""
    found = []
    for values in coords:
        for sign in (1.0, -1.0):
            toward = np.where(np.isfinite(values), sign * values, -np.inf)
            found.append(tuple(int(r) for r in top_k(toward, count) if toward[r] > 0))
    return tuple(found)


def analogy_scores(weight: np.ndarray, inverse: np.ndarray, a: int, b: int, c: int) -> dict[str, np.ndarray]:
    """a − b + c ("king − man + woman") -> {method: (V,) score of every row}, from one product
    of the table with the three unit vectors.

    3CosAdd = cos(x, â − b̂ + ĉ) = (cos(x,a) − cos(x,b) + cos(x,c)) / ‖â − b̂ + ĉ‖ (Mikolov 2013);
    3CosMul = cos'(x,a) · cos'(x,c) / (cos'(x,b) + ε) with cos' = (cos + 1) / 2 (Levy & Goldberg 2014).
    Rows of length zero score −inf.
    """
    units = []
    for row in (a, b, c):
        vector = np.asarray(weight[row], dtype=np.float64)
        length = float(np.linalg.norm(vector))
        if length == 0:
            raise ValueError("an input word has a zero vector: it has no direction")
        units.append(vector / length)
    target = units[0] - units[1] + units[2]
    target_length = float(np.linalg.norm(target))
    cos_a, cos_b, cos_c = table_cosines(weight, inverse, np.stack(units, axis=1))     # 3 × (V,)
    add = cos_a - cos_b
    add += cos_c
    add *= np.float32(1.0 / target_length) if target_length > 0 else np.float32(0.0)
    mul = cos_a + np.float32(1.0)              # (cos_a + 1)(cos_c + 1) / 2 / (cos_b + 1 + 2ε): the halves simplify
    mul *= cos_c + np.float32(1.0)
    mul *= np.float32(0.5)
    mul /= cos_b + np.float32(1.0 + 2 * COSMUL_EPSILON)
    for scores in (add, mul):
        scores[~np.isfinite(scores)] = -np.inf
    return {"3CosAdd": add, "3CosMul": mul}


def _answers(scores: np.ndarray, k: int, expected: int | None, banned: tuple[int, ...] = ()) -> Answers:
    """The k best rows other than `banned`, and the expected row's rank among the rows allowed, by
    core.order's rule: scores equal to float32 precision are tied and ranked by row."""
    tol = order.tolerance(scores, order.FLOAT32)
    best = [row for row in top_k(scores, k + len(banned), tol).tolist() if row not in banned][:k]
    best = np.array(best, dtype=np.int64)
    if expected is None or expected in banned or not np.isfinite(scores[expected]):
        return Answers(best, scores[best], None, None)
    before = order.ranked_before(scores, expected, tol=tol)                 # (V,) bool
    rank = int(np.count_nonzero(before)) + 1 - sum(bool(before[row]) for row in banned)
    return Answers(best, scores[best], rank, float(scores[expected]))


def analogy(weight: np.ndarray, inverse: np.ndarray, a: int, b: int, c: int, k: int = 10,
            expected: int | None = None) -> list[Analogy]:
    """The top k answers to a − b + c by 3CosAdd and 3CosMul, with the inputs excluded (the usual
    benchmark code) and included (often the answer is then an input, e.g. "king"). `inverse`:
    the table's inverse row lengths (inverse_norms)."""
    inputs = tuple(dict.fromkeys((a, b, c)))
    return [Analogy(method, _answers(scores, k, expected, inputs), _answers(scores, k, expected))
            for method, scores in analogy_scores(weight, inverse, a, b, c).items()]
