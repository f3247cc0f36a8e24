"""Under-trained token indicators (core.hidden.vocab_health) against independent computations."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from core.hidden import vocab_health


def magikarp_style_cosine_distance(weight: np.ndarray, references, remove_first_component: bool) -> np.ndarray:
    """The indicator written the way the paper's code reads: scikit-learn's first component, the
    projected matrix materialised, then one row at a time (float64 throughout)."""
    matrix = np.asarray(weight, dtype=np.float64)
    if remove_first_component:
        component = PCA(n_components=1).fit(matrix).components_[0]
        matrix = matrix - np.outer(matrix @ component, component)
    mean_unused = matrix[list(references)].mean(axis=0)
    distances = []
    for row in matrix:
        product = np.linalg.norm(row) * np.linalg.norm(mean_unused)
        distances.append(1 - float(np.dot(row, mean_unused)) / max(product, 1e-6))
    return np.array(distances)


@pytest.fixture
def table_with_unused():
    """300 × 16 rows with a shared offset (an anisotropic table) and 12 'unused' rows near one point."""
    rng = np.random.default_rng(3)
    weight = rng.normal(size=(300, 16)) + 2.0 * rng.normal(size=16)
    weight[:12] = rng.normal(size=16) * 0.3 + rng.normal(scale=0.01, size=(12, 16))
    return weight.astype(np.float32), list(range(0, 12, 2))


@pytest.mark.parametrize("remove", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cosine_indicator_equals_the_brute_force_loop(table_with_unused, remove, dtype):
    weight, references = table_with_unused
    weight = weight.astype(dtype)
    got = vocab_health.cosine_distance_to_unused(weight, references, remove_first_component=remove)
    expected = magikarp_style_cosine_distance(weight, references, remove)
    # float32 block products of rows of length ~10: distances agree to ~1e-6 absolute; 1e-5 is the promise
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert got[:12].max() < np.sort(got)[40]          # the unused rows are among the most suspicious


def test_norm_indicator_and_candidates_against_numpy(table_with_unused):
    weight, _ = table_with_unused
    scores = vocab_health.indicator(weight, "norm")
    np.testing.assert_allclose(scores, np.linalg.norm(weight.astype(np.float64), axis=1), rtol=1e-6)
    found = vocab_health.candidates(scores, 5.0)
    expected = [r for r in np.argsort(scores, kind="stable") if scores[r] <= np.percentile(scores, 5.0)]
    assert found.rows.tolist() == expected and len(expected) == 15
    ranks = vocab_health.ranks(scores)
    assert ranks[found.rows[0]] == 1 and sorted(ranks.tolist()) == list(range(1, 301))


def test_references_by_name_bytes_and_identical_rows():
    tokens = ["[unused0]", "[unused1]", "cat", "õ", "ÿ", "Ġdog", "Ġa", "Ġb", "x", "y", "z"]
    weight = np.arange(len(tokens) * 3, dtype=np.float32).reshape(-1, 3)
    weight[8] = weight[9] = weight[10] = 7.0        # three identical rows
    weight[6] = weight[7] = 5.0                    # a pair is not enough
    found = vocab_health.find_references(tokens, weight, byte_level=True)
    assert found.rows.tolist() == [0, 1, 3, 4, 8, 9, 10]
    assert len(found.reasons) == 3
    assert vocab_health.find_references(tokens, weight, byte_level=False).rows.tolist() == [0, 1, 8, 9, 10]


def test_reference_rows_typed():
    assert vocab_health.parse_id_list("5, 7-9;12", 20).tolist() == [5, 7, 8, 9, 12]
    assert vocab_health.parse_id_list("", 20).tolist() == []
    for bad in ("7-30", "a", "9-7", "=1+1"):
        with pytest.raises(ValueError):
            vocab_health.parse_id_list(bad, 20)


def test_indicator_without_references_says_so():
    with pytest.raises(ValueError, match="reference"):
        vocab_health.indicator(np.ones((5, 2)), "cosine", np.array([], dtype=np.int64))


def test_minilm_unused_rows_dominate_the_candidates():
    """MiniLM's default indicator (row length, magikarp's for untied tables): most of the lowest 2 %
    are [unusedN] rows, which are 3 % of the vocabulary."""
    from core.models.loading.pretrained import load_model

    table = load_model("minilm").table
    found = vocab_health.candidates(vocab_health.indicator(table.weight, "norm"))
    unused = np.array([table.tokens[r].startswith("[unused") for r in found.rows])
    assert len(found.rows) == 611 and unused.mean() > 0.6
    references = vocab_health.find_references(table.tokens, table.weight, vocab_health.looks_byte_level(table.tokens))
    assert len(references.rows) == 994 and not vocab_health.looks_byte_level(table.tokens)


def test_smollm2_references():
    """SmolLM2 has no [unused] names and no impossible-byte tokens (its vocabulary leaves those bytes
    out); its 11 unused special tokens are one row up to the 4-bit rounding, and 3 ordinary tokens
    share that exact row."""
    from core.models.loading.pretrained import load_model

    table = load_model("smollm2").table
    found = vocab_health.find_references(table.tokens, table.weight, vocab_health.looks_byte_level(table.tokens), table.name)
    specials = [5] + list(range(7, 17))
    assert found.rows.tolist() == specials + [36743, 36744, 48047]
    rows = np.asarray(table.weight[specials], dtype=np.float32)
    assert np.abs(rows - rows[0]).max() < 0.01
    scores = vocab_health.indicator(table.weight, "cosine_pc", found.rows)
    top = [table.tokens[r] for r in vocab_health.candidates(scores).rows[:15]]
    assert {"ManagementPlaneProtection", "ĠInstancePreprocess", "Ġtransistorsum"} <= set(top)


def test_candidates_tied_to_float32_precision_are_listed_by_row():
    """Untrained rows score 6e-7 .. 9e-7 next to scores of order 1: one number to float32, which another
    CPU's kernels round the other way. Their order is the row's (core.order's rule), and noise below
    the tolerance (another CPU) moves no candidate; a tie group at the threshold is taken whole."""
    rng = np.random.default_rng(0)
    scores = rng.uniform(0.2, 1.2, size=500)
    tied = np.array([400, 17, 250, 3, 99])
    scores[tied] = [9e-7, 6e-7, 7e-7, 8e-7, 6.5e-7]
    found = vocab_health.candidates(scores, 2.0)
    assert found.rows[:5].tolist() == [3, 17, 99, 250, 400]
    ids = np.arange(500)[::-1] + 1000                            # token ids that run against the rows
    assert vocab_health.candidates(scores, 2.0, ids).rows[:5].tolist() == [400, 250, 99, 17, 3]
    for _ in range(20):
        noisy = scores * (1 + rng.uniform(-1e-7, 1e-7, size=scores.shape))
        noisy[tied] = rng.uniform(5e-7, 1e-6, size=len(tied))
        assert vocab_health.candidates(noisy, 2.0).rows.tolist() == found.rows.tolist()
        assert (vocab_health.ranks(noisy)[tied] == vocab_health.ranks(scores)[tied]).all()
    edge = np.sort(scores)[9]             # the 2nd percentile of 500 lies between the 10th and 11th lowest
    scores[[42, 43]] = edge + 2e-7, edge + 4e-7        # above the threshold, tied with the 10th by a chain
    at_edge = vocab_health.candidates(scores, 2.0)
    assert scores[42] > at_edge.threshold and {42, 43} <= set(at_edge.rows.tolist())


def test_smollm2_candidates_follow_the_tie_rule():
    """The top candidates of SmolLM2 (values 6e-7 .. 9e-7: identical untrained rows) are listed by row:
    relative noise of 1e-7 (another CPU's rounding) does not move them."""
    from core import order
    from core.models.loading.pretrained import load_model

    table = load_model("smollm2").table
    references = vocab_health.find_references(table.tokens, table.weight, True, table.name).rows
    scores = vocab_health.indicator(table.weight, "cosine_pc", references)
    rows = vocab_health.candidates(scores).rows
    ruled = order.ranked(scores, tol=order.tolerance(scores, order.FLOAT32))      # every row by the rule
    assert rows.tolist() == ruled[:len(rows)].tolist()
    tied = rows[scores[rows] < 1e-6]
    assert len(tied) >= 3 and tied.tolist() == sorted(tied.tolist())
    rng = np.random.default_rng(1)
    noisy = scores * (1 + rng.uniform(-1e-7, 1e-7, size=scores.shape))
    noisy[tied] = rng.uniform(5e-7, 1e-6, size=len(tied))
    assert vocab_health.candidates(noisy).rows[:100].tolist() == rows[:100].tolist()
