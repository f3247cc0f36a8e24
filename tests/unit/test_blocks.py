"""Tables read block by block in float32 (core.blocks): every row once and exactly, the ones column's
sums, every float16 value converted through torch as numpy converts it."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.float32])
def test_float32_blocks_cover_every_row_exactly(monkeypatch, dtype):
    import core.blocks as blocks

    monkeypatch.setattr(blocks, "_BLOCK_VALUES", 7 * 5)             # 7 rows of 5 per block
    weight = np.random.default_rng(1).standard_normal((30, 5)).astype(dtype)
    pieces = [(start, block.copy()) for start, block in blocks.float32_blocks(weight)]
    assert [start for start, _ in pieces] == ([0] if dtype == np.float32 else list(range(0, 30, 7)))
    np.testing.assert_array_equal(np.concatenate([b for _, b in pieces]), weight.astype(np.float32))
    assert all(b.dtype == np.float32 for _, b in pieces)


def test_ones_column_blocks_carry_the_column_sums_in_their_gram(monkeypatch):
    import torch  # noqa: F401  (loaded: float16 blocks go through torch into the strided buffer)

    import core.blocks as blocks
    from core.geometry import gram_and_column_sums

    monkeypatch.setattr(blocks, "_BLOCK_VALUES", 7 * 5)
    weight = np.random.default_rng(2).standard_normal((30, 5))
    pieces = [block.copy() for _, block in blocks.float32_blocks(weight, ones_column=True)]
    assert all(p.shape[1] == 6 and np.all(p[:, 5] == 1) for p in pieces)
    for table in (weight.astype(np.float16), weight.astype(np.float32), weight):
        gram, sums = gram_and_column_sums(table)
        exact = table.astype(np.float64)
        np.testing.assert_allclose(gram, exact.T @ exact, rtol=1e-6)
        np.testing.assert_allclose(sums, exact.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_every_float16_value_converts_exactly_through_torch():
    import torch  # noqa: F401  (loaded: float16 blocks are converted by torch)

    from core.blocks import as_float32, loaded_torch

    assert loaded_torch() is not None
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(-1, 64)   # incl. inf, NaN, subnormals
    converted, numpy_cast = as_float32(every), every.astype(np.float32)
    nan = np.isnan(numpy_cast)
    np.testing.assert_array_equal(np.isnan(converted), nan)             # NaN payloads may differ (quiet bit)
    np.testing.assert_array_equal(converted[~nan].view(np.uint32), numpy_cast[~nan].view(np.uint32))
