"""Everything the Lookup page shows for one input: rows, X, S, repeats, renames, sizes."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.edits import permutation_named
from core.lookup import lookup, one_hot, parameter_count
from core.tables import EmbeddingTable

MAX_ONE_HOT_COLUMNS = 64   # S (T, V) is drawn in full only for vocabularies this small


@dataclass(frozen=True)
class LookupReport:
    token_ids: list[int]        # (T,) as the tokenizer gives them
    rows: np.ndarray            # (T,) row index of each id
    tokens: list[str]           # (T,) token string of each row
    X: np.ndarray               # (T, d) = E[rows]
    selector: np.ndarray        # (T, V') one-hot S restricted to `selector_rows`
    selector_rows: np.ndarray   # (V',) the rows S's columns stand for (all rows when V is small)
    repeats: dict[int, list[int]]  # row -> positions, for rows read more than once

    @property
    def entries(self) -> int:
        return int(self.X.size)


def repeated_rows(rows) -> dict[int, list[int]]:
    """Rows read at two or more positions: {row: [positions]}."""
    positions: dict[int, list[int]] = {}
    for position, row in enumerate(np.asarray(rows).tolist()):
        positions.setdefault(int(row), []).append(position)
    return {row: where for row, where in positions.items() if len(where) > 1}


def build_lookup(table: EmbeddingTable, token_ids: list[int]) -> LookupReport:
    """token ids (T,) -> the lookup and its one-hot form. Raises ValueError for a bad id."""
    rows = table.rows_for_ids(token_ids)
    X = lookup(table.weight, rows)
    if table.vocab_size <= MAX_ONE_HOT_COLUMNS:
        selector_rows = np.arange(table.vocab_size)
        selector = one_hot(rows, table.vocab_size)
    else:
        selector_rows = np.unique(rows)
        selector = (rows[:, None] == selector_rows[None, :]).astype(np.float64)
    return LookupReport(list(map(int, token_ids)), rows, [table.tokens[r] for r in rows], X,
                        selector, selector_rows, repeated_rows(rows))


def one_hot_matches(table: EmbeddingTable, report: LookupReport) -> bool:
    """S @ E == X, computed as a product (restricted S times the matching rows of E)."""
    product = report.selector @ np.asarray(table.weight, dtype=np.float64)[report.selector_rows]
    return bool(np.array_equal(product, np.asarray(report.X, dtype=np.float64)))


@dataclass(frozen=True)
class RenameDemo:
    permutation: np.ndarray     # (V,) the token of row r gets the id of row permutation[r]
    new_token_ids: list[int]    # the same text tokenized by the renamed vocabulary
    X_rows_moved: np.ndarray    # (T, d) lookup when rows moved with their ids
    X_ids_only: np.ndarray      # (T, d) lookup when only the vocabulary was renamed
    tokens_read_ids_only: list[str]  # whose row each position actually reads (ids only)
    unchanged_rows_moved: bool
    wrong_positions: list[int]  # positions whose vector changed (ids only)


def rename_demo(table: EmbeddingTable, rows: np.ndarray, kind: str, seed: int = 0) -> RenameDemo:
    """Rename every id by a permutation, with and without moving the embedding rows."""
    permutation = permutation_named(kind, table.vocab_size, seed)
    new_rows = permutation[np.asarray(rows)]
    # The renamed tables of core.edits.rename_ids, read without copying a (V, d) array:
    # moving rows puts old row r at permutation[r]; renaming ids only leaves E as it is.
    inverse = np.argsort(permutation)
    X = lookup(table.weight, rows)
    X_moved = lookup(table.weight, inverse[new_rows])
    X_ids_only = lookup(table.weight, new_rows)
    changed = [p for p in range(len(rows)) if not np.array_equal(X_ids_only[p], X[p])]
    return RenameDemo(permutation, [int(table.ids[r]) for r in new_rows], X_moved, X_ids_only,
                      [table.tokens[r] for r in new_rows], bool(np.array_equal(X_moved, X)),
                      changed)


@dataclass(frozen=True)
class TableSize:
    parameters: int
    megabytes_fp32: float
    megabytes_bf16: float


def table_size(vocab_size: int, width: int) -> TableSize:
    """V x d parameters and their memory in float32 and bfloat16 (MB = 10^6 bytes)."""
    count = parameter_count(vocab_size, width)
    return TableSize(count, count * 4 / 1e6, count * 2 / 1e6)
