"""Float32 views of tables stored in other dtypes, block by block (never a whole copy).

A float16 model table (SmolLM2: 49,152 × 576) copied to float32 would cost 113 MB per server;
the computations that need float32 read it through these blocks instead.
"""
from __future__ import annotations

import numpy as np

_BLOCK_VALUES = 1 << 22   # ~16 MB of float32 per block: big blocks keep BLAS at full speed


def float32_blocks(weight: np.ndarray):
    """(V, d) -> (start, (b, d) float32 block) pairs covering every row in order.

    A float32 table is one block (no copy). Any other dtype is converted into one reused
    buffer, block by block, so a float16 model table never gets a second, float32 copy in
    memory. The buffer is overwritten by the next block: use each block before asking for
    the next one.
    """
    if weight.dtype == np.float32:
        yield 0, weight
        return
    rows = max(1, _BLOCK_VALUES // max(1, weight.shape[1]))
    buffer = np.empty((min(rows, weight.shape[0]), weight.shape[1]), dtype=np.float32)
    for start in range(0, weight.shape[0], rows):
        block = weight[start:start + rows]
        yield start, convert_into(buffer[:len(block)], block)


def convert_into(out: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Copy block (b, d) into the float32 array out (b, d) and return out. Exact: every
    float16 is a float32. numpy, not torch: torch's conversion alone is faster, but its
    threads then spin against numpy's BLAS in the product that follows (PCA +15 %)."""
    np.copyto(out, block, casting="unsafe")
    return out


def as_float32(block: np.ndarray) -> np.ndarray:
    """A new float32 copy of a block (b, d)."""
    return convert_into(np.empty(block.shape, dtype=np.float32), block)


def loaded_torch():
    """torch if some page already imported it, else None (never imported just for speed)."""
    import sys

    return sys.modules.get("torch")


def torch_view(array: np.ndarray):
    """A tensor sharing the array's memory; read-only arrays are only ever read through it."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # torch warns about read-only arrays
        return loaded_torch().from_numpy(np.ascontiguousarray(array))
