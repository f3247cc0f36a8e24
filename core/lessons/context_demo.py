"""Seed 001 'Where context enters' and seed 003 'Where each word sits' as computations."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.attention import (
    AttentionResult,
    attention_head,
    identity_projection,
    sinusoidal_positions,
)
from core.lookup import lookup
from core.tables import EmbeddingTable


def run_identity_head(table: EmbeddingTable, token_ids: list[int], positions: bool = True,
                      causal: bool = True) -> AttentionResult:
    """The seed's head: identity Q/K/V (d_k = d_v = d), sinusoidal positions when asked."""
    rows = table.rows_for_ids(token_ids)
    X = lookup(table.weight, rows)                                       # (T, d)
    T, d = X.shape
    P = sinusoidal_positions(T, d) if positions else None
    eye = identity_projection(d, d)
    return attention_head(X, P, eye, eye, eye, causal=causal)


@dataclass(frozen=True)
class ContextComparison:
    first: AttentionResult
    second: AttentionResult
    position: int                # the compared position
    same_input: bool             # lookup + position vectors of that position equal
    difference: np.ndarray       # (d,) output_first - output_second at that position
    difference_norm: float


def compare_contexts(table: EmbeddingTable, first_ids: list[int], second_ids: list[int],
                     position: int | None = None, positions: bool = True) -> ContextComparison:
    """Same token at the same position in two sentences: equal H row, different O row?"""
    first = run_identity_head(table, first_ids, positions)
    second = run_identity_head(table, second_ids, positions)
    last = min(len(first_ids), len(second_ids)) - 1
    position = last if position is None else position
    if not 0 <= position <= last:
        raise ValueError(f"position {position} is outside 0..{last}")
    same_input = bool(np.array_equal(first.H[position], second.H[position]))
    difference = first.output[position] - second.output[position]
    return ContextComparison(first, second, position, same_input, difference,
                             float(np.linalg.norm(difference)))


@dataclass(frozen=True)
class PermutationCheck:
    original: AttentionResult
    swapped: AttentionResult
    order: list[int]             # swapped position p holds original position order[p]
    rows_permuted: bool          # swapped.output == original.output[order]


def permutation_check(table: EmbeddingTable, token_ids: list[int], i: int, j: int,
                      positions: bool, causal: bool = False) -> PermutationCheck:
    """Swap tokens i and j: without positions (and without a causal mask) the rows of O swap too."""
    if not (0 <= i < len(token_ids) and 0 <= j < len(token_ids)):
        raise ValueError(f"positions must be in 0..{len(token_ids) - 1}")
    order = list(range(len(token_ids)))
    order[i], order[j] = order[j], order[i]
    swapped_ids = [token_ids[p] for p in order]
    original = run_identity_head(table, token_ids, positions, causal)
    swapped = run_identity_head(table, swapped_ids, positions, causal)
    permuted = bool(np.allclose(swapped.output, original.output[order], atol=1e-12))
    return PermutationCheck(original, swapped, order, permuted)
