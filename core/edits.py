"""Building new tables from old ones: coordinate edits, renamed ids, added rows.

Nothing here writes into the table it is given: every function returns a new table whose
cache key records the change, so cached results of the original stay valid.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from core.limits import MAX_NEW_ROWS, MAX_ROWS
from core.tables import EmbeddingTable

RESIZE_METHODS = {
    "normal": "torch.nn.Embedding default: N(0, 1)",
    "mean": "transformers resize_token_embeddings: mean of old rows + N(0, 1e-9 · covariance)",
}


@dataclass(frozen=True)
class CoordinateEdit:
    row: int      # row index, not token id
    column: int
    value: float


@dataclass(frozen=True)
class Resize:
    added: int    # number of new rows
    method: str   # a key of RESIZE_METHODS
    seed: int


def _key_of(operations: tuple) -> str:
    return hashlib.blake2b(repr(operations).encode(), digest_size=6).hexdigest()


def resize_table(table: EmbeddingTable, added: int, method: str = "normal",
                 seed: int = 0) -> EmbeddingTable:
    """(V, d) -> (V + added, d). New tokens '<new_0>', ...; ids continue after the largest id."""
    if not 1 <= added <= MAX_NEW_ROWS:
        raise ValueError(f"add between 1 and {MAX_NEW_ROWS} rows; got {added}")
    if table.vocab_size + added > MAX_ROWS:
        raise ValueError(f"the table has {table.vocab_size:,} rows: {added:,} more would pass the limit of "
                         f"{MAX_ROWS:,} rows (at most {max(0, MAX_ROWS - table.vocab_size):,} can be added)")
    if method not in RESIZE_METHODS:
        raise ValueError(f"unknown initialisation {method!r}: use one of {', '.join(RESIZE_METHODS)}")
    rng = np.random.default_rng(seed)
    if method == "normal":
        new_rows = rng.standard_normal((added, table.width))
    else:
        new_rows = _mean_resize_rows(np.asarray(table.weight, dtype=np.float64), added, rng)
    # One copy of the old rows in their own dtype (GloVe: 80 MB, not a float64 round trip of 240 MB).
    weight = np.empty((table.vocab_size + added, table.width), dtype=table.weight.dtype)
    weight[:table.vocab_size] = table.weight
    weight[table.vocab_size:] = new_rows
    first_id = int(table.ids.max()) + 1
    tokens = table.tokens + tuple(f"<new_{i}>" for i in range(added))
    ids = np.concatenate([table.ids, np.arange(first_id, first_id + added)])
    return table.with_weight(weight, f"resize{_key_of((added, method, seed))}", tokens=tokens, ids=ids)


def _mean_resize_rows(old: np.ndarray, added: int, rng: np.random.Generator) -> np.ndarray:
    """transformers' rule: sample N(mean, 1e-9 * cov) if cov is positive definite, else the mean."""
    mean = old.mean(axis=0)
    centred = old - mean
    covariance = centred.T @ centred / old.shape[0]  # (d, V) @ (V, d) -> (d, d)
    try:
        factor = np.linalg.cholesky(1e-9 * covariance)
    except np.linalg.LinAlgError:
        return np.repeat(mean[None, :], added, axis=0)
    return mean + rng.standard_normal((added, old.shape[1])) @ factor.T


def rename_ids(table: EmbeddingTable, permutation, move_rows: bool) -> EmbeddingTable:
    """Give the token of row r the id of row permutation[r].

    move_rows=True moves the embedding row with its token (lookup of every word unchanged);
    move_rows=False renames the vocabulary only, so each id now reads another token's row
    (the 'changed the tokenizer, kept the model' mistake).
    """
    permutation = np.asarray(permutation, dtype=np.int64)
    if sorted(permutation.tolist()) != list(range(table.vocab_size)):
        raise ValueError(f"not a permutation of 0..{table.vocab_size - 1}")
    tokens = [""] * table.vocab_size
    for row, target in enumerate(permutation):
        tokens[target] = table.tokens[row]
    weight = np.array(table.weight, copy=True)
    if move_rows:
        weight[permutation] = table.weight
    suffix = f"rename{'rows' if move_rows else 'ids'}{_key_of(tuple(permutation.tolist()))}"
    return table.with_weight(weight, suffix, tokens=tuple(tokens))


def permutation_named(kind: str, size: int, seed: int = 0) -> np.ndarray:
    """'reverse', 'shift' (r -> r+1 mod V) or 'random' (seeded) permutation of 0..size-1."""
    if kind == "reverse":
        return np.arange(size)[::-1].copy()
    if kind == "shift":
        return (np.arange(size) + 1) % size
    if kind == "random":
        return np.random.default_rng(seed).permutation(size)
    raise ValueError(f"unknown permutation {kind!r}: use reverse, shift or random")


def apply_operations(table: EmbeddingTable, operations) -> EmbeddingTable:
    """Replay a session's edits and resizes, in order, on a shared read-only table (once: when a
    session returns to a table; each new action is applied to the result with `apply_operation`).

    The result's key is the base key and a hash of the whole history, so the incremental
    path gives the same table under the same key."""
    operations = tuple(operations)
    if not operations:
        return table
    pending_edits: dict[tuple[int, int], float] = {}
    edited = table
    for operation in operations:
        if isinstance(operation, CoordinateEdit):
            _check_cell(edited, operation)
            pending_edits[(operation.row, operation.column)] = operation.value
        elif isinstance(operation, Resize):
            edited = _apply_edits(edited, pending_edits)
            pending_edits = {}
            edited = resize_table(edited, operation.added, operation.method, operation.seed)
        else:
            raise ValueError(f"unknown operation {operation!r}")
    return _keyed(_apply_edits(edited, pending_edits), table.key, operations)


def apply_operation(edited: EmbeddingTable, base_key: str, operations: tuple, operation) -> EmbeddingTable:
    """One more action on an already edited table: `edited` is `apply_operations(base, operations)`,
    the result equals `apply_operations(base, operations + (operation,))` (tested) at the cost of
    one action, not of the whole history. Raises ValueError (nothing is changed then)."""
    if isinstance(operation, CoordinateEdit):
        _check_cell(edited, operation)
        result = _apply_edits(edited, {(operation.row, operation.column): operation.value})
    elif isinstance(operation, Resize):
        result = resize_table(edited, operation.added, operation.method, operation.seed)
    else:
        raise ValueError(f"unknown operation {operation!r}")
    return _keyed(result, base_key, tuple(operations) + (operation,))


def _check_cell(table: EmbeddingTable, edit: CoordinateEdit) -> None:
    if not 0 <= edit.row < table.vocab_size:
        raise ValueError(f"row {edit.row} is outside 0..{table.vocab_size - 1}")
    if not 0 <= edit.column < table.width:
        raise ValueError(f"coordinate {edit.column} is outside 0..{table.width - 1}")
    if not np.isfinite(edit.value):
        raise ValueError(f"value {edit.value} is not a finite number")


def _keyed(table: EmbeddingTable, base_key: str, operations: tuple) -> EmbeddingTable:
    """The edited table under a key made of its base and its whole history (not one that grows
    with every action). `table` was built by the caller a moment ago and is seen by nobody else, so
    its key is set in place: a copy would check 400,000 ids for uniqueness again (~1 s on GloVe)."""
    if table.key == base_key:
        raise ValueError("an edited table must be a new table")
    object.__setattr__(table, "key", f"{base_key}+ops{_key_of(operations)}")
    return table


def describe_operations(operations) -> str:
    """'3 edits and 4 added rows' (what a reset drops)."""
    edits = sum(isinstance(o, CoordinateEdit) for o in operations)
    added = sum(o.added for o in operations if isinstance(o, Resize))
    parts = ([f"{edits} edit{'s' if edits != 1 else ''}"] if edits else []) + \
            ([f"{added:,} added row{'s' if added != 1 else ''}"] if added else [])
    return " and ".join(parts) or "nothing"


def _apply_edits(table: EmbeddingTable, edits: dict[tuple[int, int], float]) -> EmbeddingTable:
    """All edits in one copy (a large table is copied once, not once per edit)."""
    if not edits:
        return table
    weight = np.array(table.weight, copy=True)
    for (row, column), value in edits.items():
        weight[row, column] = value
    return table.with_weight(weight, f"edits{_key_of(tuple(sorted(edits.items())))}")
