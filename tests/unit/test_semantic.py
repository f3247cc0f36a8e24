"""Semantic axes and analogies against brute-force loops, and GloVe's famous answer."""
from __future__ import annotations

import numpy as np
import pytest

from core.geometry import row_norms
from core.directions.semantic import (
    COSMUL_EPSILON,
    analogy,
    axes_cosine,
    axis,
    inverse_norms,
    project_on_axes,
)


def brute_force_scores(weight: np.ndarray, a: int, b: int, c: int) -> dict[str, list[float]]:
    """Row by row, in float64, straight from the definitions."""
    unit = [weight[r] / np.linalg.norm(weight[r]) for r in (a, b, c)]
    target = unit[0] - unit[1] + unit[2]
    add, mul = [], []
    for row in weight.astype(np.float64):
        length = np.linalg.norm(row)
        cos = [float(row @ u / length) for u in unit]
        add.append(float(row @ target / (length * np.linalg.norm(target))))
        shifted = [(x + 1) / 2 for x in cos]
        mul.append(shifted[0] * shifted[2] / (shifted[1] + COSMUL_EPSILON))
    return {"3CosAdd": add, "3CosMul": mul}


def brute_force_top(scores: list[float], k: int, banned=()) -> list[int]:
    candidates = [(-s, row) for row, s in enumerate(scores) if row not in banned]
    return [row for _, row in sorted(candidates)[:k]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_analogy_equals_a_brute_force_loop(seed):
    weight = np.random.default_rng(seed).normal(size=(300, 12)).astype(np.float32)
    a, b, c, expected = 5, 17, 42, 99
    reference = brute_force_scores(weight, a, b, c)
    for result in analogy(weight, inverse_norms(row_norms(weight)), a, b, c, k=8, expected=expected):
        scores = reference[result.method]
        assert result.included.rows.tolist() == brute_force_top(scores, 8)
        assert result.excluded.rows.tolist() == brute_force_top(scores, 8, banned={a, b, c})
        np.testing.assert_allclose(result.included.scores, [scores[r] for r in result.included.rows], rtol=1e-5)
        rank = 1 + sum(s > scores[expected] for s in scores)
        assert result.included.expected_rank == rank
        assert result.excluded.expected_rank == rank - sum(scores[r] > scores[expected] for r in (a, b, c))


def test_king_minus_man_plus_woman_on_glove():
    from core.models.loading.glove import load_table

    table = load_table("glove-50d")
    row = table.row_of_token
    results = {r.method: r for r in analogy(table.weight, inverse_norms(row_norms(table.weight)), row("king"), row("man"),
                                            row("woman"), k=5, expected=row("queen"))}
    for result in results.values():
        assert table.tokens[result.excluded.rows[0]] == "queen" and result.excluded.expected_rank == 1
    # with the inputs allowed, the best 3CosAdd answer is an input: the usual exclusion matters
    assert table.tokens[results["3CosAdd"].included.rows[0]] == "king"
    assert results["3CosAdd"].included.expected_rank == 2


def test_a_float16_table_gives_the_float32_answers():
    weight = np.random.default_rng(3).normal(size=(500, 16)).astype(np.float16)
    as32 = weight.astype(np.float32)
    for half, full in zip(analogy(weight, inverse_norms(row_norms(weight)), 1, 2, 3, 5), analogy(as32, inverse_norms(row_norms(as32)), 1, 2, 3, 5)):
        assert half.excluded.rows.tolist() == full.excluded.rows.tolist()


def test_axes_project_every_row_by_cosine():
    weight = np.random.default_rng(4).normal(size=(200, 10))
    weight[7] = 0.0
    x, y = axis(weight, [0, 1], [2], "x"), axis(weight, [3], [4, 5], "y")
    unit = lambda v: v / np.linalg.norm(v)   # noqa: E731
    direction = unit(unit(weight[2]) - (unit(weight[0]) + unit(weight[1])) / 2)
    np.testing.assert_allclose(x.direction, direction)
    coords = project_on_axes(weight, inverse_norms(row_norms(weight)), [x, y])
    expected = [float(unit(r) @ direction) for r in np.delete(weight, 7, axis=0)]
    np.testing.assert_allclose(np.delete(coords[0], 7), expected, rtol=1e-5, atol=1e-6)
    assert np.isnan(coords[:, 7]).all()                # a zero row has no cosine
    assert axes_cosine(x, y) == pytest.approx(float(x.direction @ y.direction))


@pytest.mark.parametrize("start, end, message", [
    ([], [1], "needs at least one word"),
    ([1, 2], [2, 1], "both ends are the same words"),
    ([0], [1], "zero vector"),
])
def test_bad_axes_are_said(start, end, message):
    weight = np.random.default_rng(0).normal(size=(5, 3))
    weight[0] = 0.0
    with pytest.raises(ValueError, match=message):
        axis(weight, start, end, "x")


def test_tied_answers_are_listed_by_row_and_ranked_so():
    """Rows equal to the best answer up to 1e-7 relative noise (float32 rounding) are tied: listed by
    row whatever the noise, and the expected row's rank counts the tied rows before it by row."""
    rng = np.random.default_rng(4)
    weight = rng.normal(size=(400, 12)).astype(np.float32)
    a, b, c = 5, 17, 42
    target = weight[a] / np.linalg.norm(weight[a]) - weight[b] / np.linalg.norm(weight[b]) \
        + weight[c] / np.linalg.norm(weight[c])
    copies = [300, 60, 210]
    for _ in range(5):
        noisy = weight.copy()
        noisy[copies] = target * (1 + rng.uniform(-1e-7, 1e-7, size=(3, 12)))
        results = analogy(noisy, inverse_norms(row_norms(noisy)), a, b, c, k=5, expected=300)
        add = next(r for r in results if r.method == "3CosAdd")
        assert add.excluded.rows[:3].tolist() == [60, 210, 300]
        assert add.excluded.expected_rank == 3 and add.included.expected_rank == 3


def test_axis_extremes_are_the_rows_furthest_each_way_by_a_full_sort():
    """Against a full sort: each end's `count` rows with the largest positive cosine that way, NaN rows never."""
    from core.directions.semantic import axis_extremes

    rng = np.random.default_rng(0)
    coords = rng.uniform(-1, 1, size=(2, 500)).astype(np.float32)
    coords[0, :3] = np.nan
    coords[1] = np.abs(coords[1])                      # nothing points toward y's start
    found = axis_extremes(coords, 5)
    for index, (values, sign) in enumerate([(coords[0], 1), (coords[0], -1), (coords[1], 1), (coords[1], -1)]):
        toward = np.array([sign * v if np.isfinite(v) else -np.inf for v in values.tolist()])
        expected = [int(r) for r in np.argsort(-toward, kind="stable")[:5] if toward[r] > 0]
        assert list(found[index]) == expected
    assert found[3] == () and not {0, 1, 2} & set(found[0] + found[1])
