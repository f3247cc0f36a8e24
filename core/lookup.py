"""Embedding lookup as row selection, as a one-hot product, and its gradient S^T G."""
from __future__ import annotations

import re

import numpy as np

from core.limits import MAX_IDS


def as_token_id(value) -> int:
    """An int, or an integral float, as a token id. Raises ValueError for anything else (bools too)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"token id {value!r} is not an integer")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    raise ValueError(f"token id {value!r} is not an integer")


def validate_ids(ids, vocab_size: int) -> np.ndarray:
    """ids (T,) -> int64 row indices (T,). Raises ValueError naming a bad id and the valid range."""
    checked = []
    for value in list(ids):
        token_id = as_token_id(value)
        if not 0 <= token_id < vocab_size:
            raise ValueError(f"token id {token_id} is outside 0..{vocab_size - 1}")
        checked.append(token_id)
    return np.asarray(checked, dtype=np.int64)


def lookup(weight: np.ndarray, ids) -> np.ndarray:
    """weight (V, d), ids (T,) row indices -> X (T, d) = weight[ids]."""
    rows = validate_ids(ids, weight.shape[0])
    return np.asarray(weight)[rows]


def one_hot(ids, vocab_size: int) -> np.ndarray:
    """ids (T,) -> S (T, V) with S[t, ids[t]] = 1, so that S @ E == lookup(E, ids)."""
    rows = validate_ids(ids, vocab_size)
    selector = np.zeros((len(rows), vocab_size))
    selector[np.arange(len(rows)), rows] = 1.0
    return selector


def embedding_gradient(ids, upstream: np.ndarray, vocab_size: int) -> np.ndarray:
    """ids (T,), upstream G = dL/dX (T, d) -> dL/dE = S^T G (V, d); repeated ids accumulate."""
    rows = validate_ids(ids, vocab_size)
    upstream = np.asarray(upstream, dtype=np.float64)
    if upstream.shape[0] != len(rows):
        raise ValueError(f"upstream gradient has {upstream.shape[0]} rows for {len(rows)} ids")
    gradient = np.zeros((vocab_size, upstream.shape[1]))
    np.add.at(gradient, rows, upstream)  # unbuffered: repeated rows add up
    return gradient


def parse_id_list(text: str, max_ids: int = MAX_IDS) -> list[int]:
    """'2, 0 1' -> [2, 0, 1]. Raises ValueError for empty input, non-integers or too many ids."""
    parts = [p for p in re.split(r"[\s,;\[\]]+", text.strip()) if p]
    if not parts:
        raise ValueError("no token ids given: type whole numbers separated by commas or spaces")
    if len(parts) > max_ids:
        raise ValueError(f"{len(parts):,} ids given: at most {max_ids:,} are shown at once")
    ids = []
    for part in parts:
        if not re.fullmatch(r"[+-]?\d+", part):
            raise ValueError(f"{part[:20]!r} is not a token id: type whole numbers "
                             "separated by commas or spaces")
        ids.append(int(part))
    return ids


def squared_distance(weight: np.ndarray, row_a: int, row_b: int) -> float:
    """||E_a - E_b||^2 for two rows of weight (V, d)."""
    difference = np.asarray(weight[row_a], dtype=np.float64) - weight[row_b]
    return float(difference @ difference)


def parameter_count(vocab_size: int, width: int) -> int:
    """V x d entries of an embedding table (exact Python int, no overflow)."""
    return int(vocab_size) * int(width)
