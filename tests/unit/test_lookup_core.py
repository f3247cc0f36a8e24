"""core.lookup and core.lessons.lookup_report against torch.nn.Embedding, autograd and the seeds."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.lessons.lookup_report import (
    build_lookup,
    one_hot_matches,
    rename_demo,
    table_size,
)
from core.lookup import (
    embedding_gradient,
    lookup,
    one_hot,
    parse_id_list,
    squared_distance,
    validate_ids,
)
from core.toy_tables import seed000_table, seed001_excerpt_table, seed004_table


def test_lookup_matches_torch_embedding():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((11, 5))
    ids = [3, 0, 10, 3, 7]
    embedding = torch.nn.Embedding.from_pretrained(torch.tensor(weight))
    expected = embedding(torch.tensor(ids)).numpy()
    np.testing.assert_array_equal(lookup(weight, ids), expected)


def test_one_hot_product_equals_lookup():
    weight = np.random.default_rng(1).standard_normal((7, 3))
    ids = [6, 1, 1, 0]
    S = one_hot(ids, 7)
    assert S.shape == (4, 7)
    assert S.sum(axis=1).tolist() == [1, 1, 1, 1]
    np.testing.assert_allclose(S @ weight, lookup(weight, ids), atol=0)


def test_embedding_gradient_matches_autograd_with_repeats():
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((6, 4))
    ids = [2, 5, 2, 2, 0]
    upstream = rng.standard_normal((5, 4))
    embedding = torch.nn.Embedding.from_pretrained(torch.tensor(weight), freeze=False)
    output = embedding(torch.tensor(ids))
    (output * torch.tensor(upstream)).sum().backward()
    gradient = embedding_gradient(ids, upstream, 6)
    np.testing.assert_allclose(gradient, embedding.weight.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(gradient[2], upstream[0] + upstream[2] + upstream[3])
    assert not gradient[[1, 3, 4]].any()  # untouched rows: zero gradient


@pytest.mark.parametrize("bad, message", [
    (7, "token id 7 is outside 0..4"),
    (-1, "token id -1 is outside 0..4"),
    (2.5, "token id 2.5 is not an integer"),
    ("x", "token id 'x' is not an integer"),
    (True, "is not an integer"),
])
def test_bad_ids_raise_with_range(bad, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.").replace("(", r"\(")):
        validate_ids([0, bad], 5)


def test_float_integral_id_is_accepted():
    assert validate_ids([2.0], 5).tolist() == [2]


@pytest.mark.parametrize("text, expected", [("2, 0", [2, 0]), ("[6, 9, 6]", [6, 9, 6]), ("  1 2;3 ", [1, 2, 3])])
def test_parse_id_list(text, expected):
    assert parse_id_list(text) == expected


@pytest.mark.parametrize("text, message", [("", "no token ids"), ("1, two", "'two' is not a token id"),
                                           ("1.5", "is not a token id")])
def test_parse_id_list_errors(text, message):
    with pytest.raises(ValueError, match=message):
        parse_id_list(text)


def test_parse_id_list_refuses_too_many():
    with pytest.raises(ValueError, match="5,000 ids given"):
        parse_id_list(" ".join(["1"] * 5000))


def test_seed000_lookup_numbers():
    table = seed000_table()
    report = build_lookup(table, [2, 0])
    np.testing.assert_array_equal(report.X, [[0, 1, 0, 1], [1, 0, 1, 0]])
    assert table.vocab_size * table.width == 12
    assert report.entries == 8
    assert squared_distance(table.weight, 0, 1) == 1
    assert squared_distance(table.weight, 0, 2) == 4
    assert one_hot_matches(table, report)


def test_seed001_excerpt_reads_first_second_first():
    table = seed001_excerpt_table()
    report = build_lookup(table, [6, 9, 6])
    assert report.rows.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(report.X[0], report.X[2])
    assert report.repeats == {0: [0, 2]}
    with pytest.raises(ValueError, match="token id 7 is not in this table: valid ids are one of 6, 9"):
        build_lookup(table, [7])


def test_seed004_explicit_ids():
    table = seed004_table()
    ids = table.tokenize("The cat is sleeping")
    assert ids == [464, 3797, 318, 10447]
    report = build_lookup(table, ids)
    assert report.X.shape == (4, 4)
    np.testing.assert_array_equal(report.X[1], [0.21, -0.43, 0.87, 0.15])


def test_size_calculator_matches_seed():
    assert table_size(50257, 768).parameters == 38_597_376
    assert torch.nn.Embedding(50257, 768).weight.numel() == 38_597_376
    assert table_size(128000, 64).parameters == 8_192_000


@pytest.mark.parametrize("kind", ["reverse", "shift", "random"])
def test_rename_with_rows_keeps_lookup_and_ids_only_breaks_it(kind):
    table = seed004_table()
    rows = table.rows_for_ids(table.tokenize("The cat is sleeping"))
    demo = rename_demo(table, rows, kind, seed=3)
    assert demo.unchanged_rows_moved
    np.testing.assert_array_equal(demo.X_rows_moved, table.weight[rows])
    moved = [p for p in range(len(rows)) if demo.permutation[rows[p]] != rows[p]]
    assert demo.wrong_positions == moved and moved


def test_rename_demo_agrees_with_materialised_renamed_tables():
    from core.edits import permutation_named, rename_ids
    from core.lookup import lookup as read

    table = seed004_table()
    rows = table.rows_for_ids(table.tokenize("cat is cat dog"))
    demo = rename_demo(table, rows, "random", seed=1)
    permutation = permutation_named("random", table.vocab_size, 1)
    moved, renamed = rename_ids(table, permutation, True), rename_ids(table, permutation, False)
    new_rows = [moved.row_of_token(t) for t in ("cat", "is", "cat", "dog")]
    assert [renamed.row_of_token(t) for t in ("cat", "is", "cat", "dog")] == new_rows
    np.testing.assert_array_equal(demo.X_rows_moved, read(moved.weight, new_rows))
    np.testing.assert_array_equal(demo.X_ids_only, read(renamed.weight, new_rows))
