"""core.order: the one tie rule, against a brute-force reading of it (every pair compared)."""
import numpy as np
import pytest

from core import order


def at_or_above(values: np.ndarray, threshold: float, tol: float | None = None,
                rel: float = order.FLOAT32) -> np.ndarray:
    """values (n,) -> (n,) bool: at or above `threshold`, tie groups that reach it taken whole."""
    tol = order._tol(values, tol, rel)
    return order.at_or_below(-np.asarray(values, dtype=np.float64), -threshold, tol)


def rank_of(values: np.ndarray, position: int, ids=None, descending: bool = True,
            tol: float | None = None, rel: float = order.FLOAT32) -> int:
    """values (n,) -> the 1-based rank of values[position] under the rule."""
    return int(np.count_nonzero(order.ranked_before(values, position, ids, descending, tol, rel))) + 1


def brute_force_order(values, ids, descending, tol):
    """Connected components of the graph 'within tol' (every pair), ordered by value, then by id."""
    keys = [-v if descending else v for v in values]
    n = len(keys)
    component = list(range(n))

    def root(i):
        while component[i] != i:
            i = component[i]
        return i

    for i in range(n):
        for j in range(n):
            if keys[i] == keys[j] or abs(keys[i] - keys[j]) <= tol:
                component[root(i)] = root(j)
    lowest = {}
    for i in range(n):
        lowest[root(i)] = min(lowest.get(root(i), np.inf), keys[i])
    return sorted(range(n), key=lambda i: (lowest[root(i)], ids[i]))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("descending", [False, True])
def test_ranked_is_the_brute_force_rule(seed, descending):
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(size=40), 1) + rng.normal(scale=1e-3, size=40)    # clumps a hair apart
    ids = rng.permutation(1000)[:40]
    tol = 0.01
    expected = brute_force_order(values.tolist(), ids.tolist(), descending, tol)
    assert order.ranked(values, ids, descending, tol).tolist() == expected
    assert order.top_k(values, 7, ids, descending, tol).tolist() == expected[:7]
    rank = order.ranks(values, ids, descending, tol)
    assert [int(rank[i]) for i in expected] == list(range(1, 41))
    assert [rank_of(values, i, ids, descending, tol) for i in expected] == list(range(1, 41))


@pytest.mark.parametrize("seed", range(10))
def test_top_k_of_a_large_array_is_ranked_first_k(seed):
    """The sampled bound and its lowering (a chain of ties crossing it) give ranked(...)[:k]."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=20_000).astype(np.float32)
    top = np.sort(values)[::-1]
    values[rng.choice(20_000, 30, replace=False)] = top[5] + np.arange(30) * 2e-7   # a chain through the 5th
    for k in (1, 5, 12, 40):
        assert order.top_k(values, k).tolist() == order.ranked(values, descending=True)[:k].tolist()
        assert order.top_k(values, k, descending=False).tolist() == order.ranked(values)[:k].tolist()


def test_no_ties_is_the_plain_sort():
    values = np.array([0.3, -1.0, 2.5, 0.31, 7.0])
    assert order.ranked(values).tolist() == np.argsort(values).tolist()
    assert order.ranked(values, descending=True).tolist() == np.argsort(-values).tolist()
    assert order.argmax(values) == 4 and order.argmin(values) == 1


def test_values_a_hair_apart_are_listed_by_id_whatever_their_last_bits():
    """Untrained rows: 6e-7 .. 9e-7 are one number to float32 next to scores of order 1."""
    values = np.array([1.0, 9e-7, 0.5, 6e-7, 7e-7, 0.9])
    assert order.ranked(values).tolist() == [1, 3, 4, 2, 5, 0]
    rng = np.random.default_rng(0)
    for _ in range(20):
        noisy = values * (1 + rng.uniform(-1e-7, 1e-7, size=6))
        noisy[[1, 3, 4]] = rng.uniform(5e-7, 1e-6, size=3)            # another CPU's rounding
        assert order.ranked(noisy).tolist() == [1, 3, 4, 2, 5, 0]


def test_single_linkage_never_splits_a_chain():
    """0, 0.6, 1.2 with tol 1: 0 and 1.2 are more than tol apart, yet one group through 0.6."""
    values = np.array([1.2, 5.0, 0.0, 0.6])
    groups = order.group_numbers(np.sort(values), 1.0)
    assert groups.tolist() == [0, 0, 0, 1]
    assert order.ranked(values, ids=[9, 0, 5, 1], tol=1.0).tolist() == [3, 2, 0, 1]


def test_infinities_tie_and_nan_goes_last():
    values = np.array([np.nan, -np.inf, 1.0, -np.inf, np.inf])
    assert order.ranked(values, tol=0.0).tolist() == [1, 3, 2, 4, 0]
    assert order.ranked(values, descending=True, tol=0.0).tolist() == [4, 2, 1, 3, 0]
    assert order.tolerance(values, 1e-6) == pytest.approx(1e-6)


def test_threshold_takes_a_tie_group_whole():
    values = np.array([0.1, 0.2000001, 0.2, 0.5, 0.1999999])
    assert order.at_or_below(values, 0.2, tol=1e-6).tolist() == [True, True, True, False, True]
    assert order.at_or_below(values, 0.2, tol=0.0).tolist() == [True, False, True, False, True]
    assert at_or_above(values, 0.2, tol=1e-6).tolist() == [False, True, True, True, True]


def test_top_k_rows_is_each_rows_ranked_first_k():
    rng = np.random.default_rng(3)
    values = np.round(rng.normal(size=(25, 300)), 2)               # many exact and near ties
    values += rng.uniform(-1e-9, 1e-9, size=values.shape)
    values[:, 7] = np.inf
    for descending in (False, True):
        got = order.top_k_rows(values, 6, descending=descending, rel=1e-6)
        for row in range(len(values)):
            expected = order.ranked(values[row], descending=descending, rel=1e-6)[:6]
            assert got[row].tolist() == expected.tolist()


def test_ids_must_match_the_values():
    with pytest.raises(ValueError, match="3 ids for 2 values"):
        order.ranked(np.array([1.0, 2.0]), ids=[0, 1, 2])


def test_rank_among_counts_only_values_clearly_above():
    values = np.array([5.0, 3.0, 3.0 + 1e-9, 3.0 - 1e-9, 2.9, 1.0])
    assert order.rank_among(values, 3.0, 1e-6) == 2 and order.rank_among(values, 2.9, 1e-6) == 5
    assert order.rank_among(values, 5.0, 1e-6) == 1


def test_model_rankings_list_tied_values_by_id():
    """Next-token logits and head scores a hair apart (another CPU's rounding) are listed by token id
    and by (layer, head) in reading order."""
    from core.models.heads import ranked_heads
    from core.models.loading.runs import ModelRun

    rng = np.random.default_rng(7)
    for _ in range(10):
        logits = rng.normal(size=(2, 5000)).astype(np.float32)
        logits[1, [4000, 17, 2500]] = 30.0 * (1 + rng.uniform(-1e-7, 1e-7, size=3))
        run = ModelRun((1, 2), np.zeros((1, 1, 2, 2)), np.zeros((2, 2, 3)), logits)
        assert [token for token, _ in run.top_next_tokens(3)] == [17, 2500, 4000]
        scores = rng.uniform(size=(4, 6))
        scores[[3, 0, 2], [1, 5, 0]] = 2.0 * (1 + rng.uniform(-1e-7, 1e-7, size=3))
        assert [(layer, head) for layer, head, _ in ranked_heads(scores, 3)] == [(0, 5), (2, 0), (3, 1)]


def test_a_clusters_central_tokens_tied_in_distance_are_listed_by_row():
    """Points on a circle around their cluster's centre (equal distances up to 1e-7 relative noise):
    the central tokens are the lowest rows, whatever the noise."""
    from core.maps.clusters import describe_clusters
    from core.tokens.props import PROPERTIES

    rng = np.random.default_rng(1)
    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    circle = np.stack([np.cos(angles), np.sin(angles)], axis=1)                # (12, 2), centre 0
    shuffled = rng.permutation(12)
    for _ in range(5):
        coords = circle[shuffled] * (1 + rng.uniform(-1e-7, 1e-7, size=(12, 1)))
        found = describe_clusters(coords, np.zeros(12, dtype=int), np.zeros((12, len(PROPERTIES)), dtype=bool),
                                  central=4)
        assert found[0].central == (0, 1, 2, 3)
