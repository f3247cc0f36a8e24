"""Float32 views of tables stored in other dtypes, block by block (never a whole copy).

A float16 model table (SmolLM2: 49,152 × 576) copied to float32 would cost 113 MB per server;
the computations that need float32 read it through these blocks instead.
"""
from __future__ import annotations

import numpy as np

_BLOCK_VALUES = 1 << 22   # ~16 MB of float32 per block: big blocks keep BLAS at full speed
_INLINE_VALUES = 1 << 15  # torch's parallel grain size: smaller copies run on the calling thread


def float32_blocks(weight: np.ndarray, ones_column: bool = False):
    """(V, d) -> (start, (b, d) float32 block) pairs covering every row in order.

    A float32 table is one block (no copy). Any other dtype is converted into one reused
    buffer, block by block, so a float16 model table never gets a second, float32 copy in
    memory. The buffer is overwritten by the next block: use each block before asking for
    the next one. With ones_column every table is converted, and each block is (b, d + 1):
    its last column is ones, so a Gram of the block also yields its column sums.
    """
    if weight.dtype == np.float32 and not ones_column:
        yield 0, weight
        return
    width = weight.shape[1]
    rows = max(1, _BLOCK_VALUES // max(1, width))
    buffer = np.empty((min(rows, weight.shape[0]), width + ones_column), dtype=np.float32)
    buffer[:, width:] = 1.0
    for start in range(0, weight.shape[0], rows):
        block = weight[start:start + rows]
        convert_into(buffer[:len(block), :width], block)
        yield start, buffer[:len(block)]


def convert_into(out: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Copy block (b, d) into the float32 array out (b, d) and return out. Exact: every
    float16 is a float32.

    float16 goes through torch when a page has loaded it: numpy's float16 cast is scalar code
    (SmolLM2's table: 32 ms), torch's is vectorised (9 ms). The copy is cut into pieces below
    torch's parallel grain so it runs on this thread: torch's OpenMP threads would otherwise
    keep spinning after it, against numpy's BLAS threads in the product that follows.
    """
    torch = loaded_torch()
    if torch is None or block.dtype != np.float16 or block.ndim != 2 or not len(block):
        np.copyto(out, block, casting="unsafe")
        return out
    target, source = torch.from_numpy(out), torch_view(block)
    rows = max(1, _INLINE_VALUES // max(1, block.shape[1]))
    for start in range(0, len(block), rows):
        target[start:start + rows].copy_(source[start:start + rows])
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
