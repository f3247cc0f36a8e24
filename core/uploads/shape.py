"""The one rule every upload obeys: a 2-D table within the limits, checked from its declared
shape before any value is built."""
from __future__ import annotations

import numpy as np

from core.limits import (
    MAX_ROWS,
    MAX_TABLE_BYTES,
    MAX_WIDTH,
    UPLOAD_LIMITS_TEXT,
    megabytes,
)

LIMITS = UPLOAD_LIMITS_TEXT


def check_table_shape(shape: tuple[int, ...], what: str) -> None:
    """Refuse a shape that is not a (V, d) table within the limits, before it is built."""
    if len(shape) != 2:
        raise ValueError(f"{what} has shape {tuple(shape)}: an embedding table must be 2-D (V, d)")
    rows, width = (int(n) for n in shape)
    if rows < 1 or width < 1:
        raise ValueError(f"{what} is empty (shape {tuple(shape)})")
    if rows > MAX_ROWS or width > MAX_WIDTH or rows * width * 4 > MAX_TABLE_BYTES:
        raise ValueError(f"{what} has shape ({rows:,}, {width:,}), {megabytes(rows * width * 4)} as float32: "
                         f"a table may have at most {megabytes(MAX_TABLE_BYTES)} as float32, {MAX_ROWS:,} rows "
                         f"and {MAX_WIDTH:,} columns")


def as_float32(array: np.ndarray, what: str) -> np.ndarray:
    if array.dtype == object or not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{what} holds {array.dtype} values: an embedding table must hold real numbers")
    check_table_shape(array.shape, what)
    return array.astype(np.float32, copy=False)
