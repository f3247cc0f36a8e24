"""Tables are read-only; edits, resizes and renames build new tables with new cache keys."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.edits import (
    CoordinateEdit,
    Resize,
    _key_of,
    apply_operations,
    rename_ids,
    resize_table,
)
from core.lookup import lookup
from core.tables import EmbeddingTable
from core.toy_tables import TOY_TABLES, seed001_lab_table, seed003_table, toy_table


def edit_coordinate(table: EmbeddingTable, row: int, column: int, value: float) -> EmbeddingTable:
    """A copy of table with weight[row, column] = value; every lookup of that row sees it (the pages
    edit through apply_operations)."""
    if not 0 <= row < table.vocab_size:
        raise ValueError(f"row {row} is outside 0..{table.vocab_size - 1}")
    if not 0 <= column < table.width:
        raise ValueError(f"coordinate {column} is outside 0..{table.width - 1}")
    if not np.isfinite(value):
        raise ValueError(f"value {value} is not a finite number")
    weight = np.array(table.weight, copy=True)
    weight[row, column] = value
    return table.with_weight(weight, f"edit{_key_of((row, column, float(value)))}")


@pytest.mark.parametrize("name", list(TOY_TABLES))
def test_toy_tables_are_read_only_and_tokenize_their_default_text(name):
    table = toy_table(name)
    assert not table.weight.flags.writeable
    with pytest.raises(ValueError):
        table.weight[0, 0] = 5.0
    ids = table.tokenize(TOY_TABLES[name][1])
    assert len(ids) >= 2
    assert table.source.startswith("Seed")


def test_unknown_word_lists_the_vocabulary():
    with pytest.raises(ValueError, match=r"unknown word 'bird': this table's vocabulary is cat, dog"):
        seed003_table().tokenize("cat bird")


def test_empty_text_is_refused():
    with pytest.raises(ValueError, match="the text is empty"):
        seed003_table().tokenize("   ")


def test_case_insensitive_fallback():
    lab = seed001_lab_table()
    assert lab.tokenize("Oto kamienny zamek") == lab.tokenize("oto kamienny zamek")


def test_edit_changes_every_occurrence_and_not_the_original():
    lab = seed001_lab_table()
    ids = lab.tokenize("zamek oto zamek")
    edited = edit_coordinate(lab, 3, 1, 9.5)
    X = lookup(edited.weight, ids)
    assert X[0, 1] == X[2, 1] == 9.5
    assert lab.weight[3, 1] == 0.8
    assert edited.key != lab.key


def test_operations_replay_in_order():
    lab = seed001_lab_table()
    table = apply_operations(lab, [CoordinateEdit(0, 0, 1.0), Resize(2, "normal", 0), CoordinateEdit(7, 5, -2.0)])
    assert table.weight.shape == (8, 6)
    assert table.weight[0, 0] == 1.0 and table.weight[7, 5] == -2.0
    assert table.tokens[-2:] == ("<new_0>", "<new_1>")
    assert table.ids.tolist() == list(range(8))


def test_resize_normal_is_standard_normal_like_torch():
    big = toy_table("seed001-lab")
    resized = resize_table(big, 1000, "normal", seed=0)
    new = resized.weight[6:]
    assert abs(new.mean()) < 0.05 and abs(new.std() - 1) < 0.05
    reference = torch.nn.Embedding(1000, 6).weight.detach().numpy()  # N(0, 1) too
    assert abs(reference.std() - new.std()) < 0.05


def test_resize_mean_matches_transformers_rule():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=16))
    old = model.get_input_embeddings().weight.detach().numpy().copy()
    model.resize_token_embeddings(43)
    theirs = model.get_input_embeddings().weight.detach().numpy()[40:]
    from core.tables import EmbeddingTable

    table = EmbeddingTable("bert", old, tuple(f"t{i}" for i in range(40)), np.arange(40))
    ours = resize_table(table, 3, "mean", seed=0).weight[40:]
    np.testing.assert_allclose(ours, theirs, atol=1e-3)  # both: the mean, up to 1e-9·cov noise
    np.testing.assert_allclose(ours, np.repeat(old.mean(axis=0)[None], 3, axis=0), atol=1e-3)


def test_rename_ids_only_reads_wrong_rows():
    lab = seed001_lab_table()
    permutation = (np.arange(6) + 1) % 6  # row r gets id r + 1
    renamed = rename_ids(lab, permutation, move_rows=False)
    moved = rename_ids(lab, permutation, move_rows=True)
    ids_old = lab.tokenize("kamienny")
    ids_new = renamed.tokenize("kamienny")
    assert ids_new == [ids_old[0] + 1]
    np.testing.assert_array_equal(lookup(moved.weight, moved.tokenize("kamienny")), lookup(lab.weight, ids_old))
    assert not np.array_equal(lookup(renamed.weight, ids_new), lookup(lab.weight, ids_old))


@pytest.mark.parametrize("args, message", [((99, 0, 1.0), "row 99 is outside 0..5"),
                                           ((0, 9, 1.0), "coordinate 9 is outside 0..5"),
                                           ((0, 0, float("nan")), "not a finite number")])
def test_bad_edits(args, message):
    with pytest.raises(ValueError, match=message):
        edit_coordinate(seed001_lab_table(), *args)


def test_bad_resize():
    with pytest.raises(ValueError, match="add between 1 and 1000 rows"):
        resize_table(seed001_lab_table(), 0)


def test_token_index_equals_a_dict_with_first_rows_winning():
    from core.tables import TokenIndex

    rng = np.random.default_rng(0)
    tokens = ["".join(rng.choice(list("abcAB"), size=rng.integers(1, 4))) for _ in range(3000)]
    first, first_lower = {}, {}
    for row, token in enumerate(tokens):
        first.setdefault(token, row)
        first_lower.setdefault(token.lower(), row)
    exact, lower = TokenIndex(tokens), TokenIndex(tokens, str.lower)
    for token in set(tokens) | {"zz", ""}:
        assert exact.get(token) == first.get(token)
        assert lower.get(token.lower()) == first_lower.get(token.lower())


def test_token_index_checks_strings_when_hashes_collide():
    from core.tables import TokenIndex

    class Colliding(str):                     # every string hashes alike
        def __hash__(self):
            return 7

    index = TokenIndex([Colliding(w) for w in ("cat", "dog", "cat", "eel")])
    assert [index.get(Colliding(w)) for w in ("cat", "dog", "eel", "fox")] == [0, 1, 3, None]


def test_one_more_action_equals_replaying_the_whole_history():
    """Add rows / Apply edit build on the kept edited table (one action per click, issue 22 item 3);
    after every step the table, its rows, ids and cache key equal a full replay from the base."""
    from core.edits import apply_operation

    base = seed001_lab_table()
    history = (CoordinateEdit(0, 0, 1.0), Resize(3, "normal", 1), CoordinateEdit(7, 5, -2.0),
               CoordinateEdit(0, 0, 4.5), Resize(2, "mean", 4), CoordinateEdit(10, 1, 0.25))
    edited, done = base, ()
    for operation in history:
        edited = apply_operation(edited, base.key, done, operation)
        done += (operation,)
        replayed = apply_operations(base, done)
        np.testing.assert_array_equal(edited.weight, replayed.weight)     # same float64 steps: exact
        assert edited.tokens == replayed.tokens and edited.ids.tolist() == replayed.ids.tolist()
        assert edited.key == replayed.key != base.key
    assert edited.weight.shape == (11, 6) and edited.weight[0, 0] == 4.5
    assert base.weight[0, 0] != 4.5                                      # the shared table is untouched


def test_rows_added_one_click_at_a_time_obey_max_rows(monkeypatch):
    from core import edits
    from core.edits import apply_operation

    monkeypatch.setattr(edits, "MAX_ROWS", 10)
    base = seed001_lab_table()                                           # 6 rows
    grown = apply_operation(base, base.key, (), Resize(3, "normal", 0))  # 9 rows
    with pytest.raises(ValueError, match="the table has 9 rows: 2 more would pass the limit of 10 rows "
                                         r"\(at most 1 can be added\)"):
        apply_operation(grown, base.key, (Resize(3, "normal", 0),), Resize(2, "normal", 1))
    with pytest.raises(ValueError, match="limit of 10 rows"):
        apply_operations(base, [Resize(3, "normal", 0), Resize(2, "normal", 1)])


def test_an_edit_outside_the_table_is_refused():
    from core.edits import apply_operation

    base = seed001_lab_table()
    with pytest.raises(ValueError, match="row 6 is outside 0..5"):
        apply_operation(base, base.key, (), CoordinateEdit(6, 0, 1.0))
    with pytest.raises(ValueError, match="not a finite number"):
        apply_operations(base, [CoordinateEdit(0, 0, float("nan"))])
