""".npy files: the header is read first (shape, dtype, pickles), then the values."""
from __future__ import annotations

import io

import numpy as np

from core.uploads.shape import check_table_shape


def read_npy(data: bytes, what: str) -> np.ndarray:
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = reader(stream)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError):
        raise ValueError("this is not a valid .npy file (its header could not be read)") from None
    if dtype.hasobject:
        raise ValueError("this .npy holds Python objects (a pickle): refused, it could run code. "
                         "Save a numeric array instead")
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)):
        raise ValueError(f"{what} holds {dtype} values: an embedding table must hold real numbers")
    check_table_shape(shape, what)
    if len(data) - stream.tell() < int(np.prod(shape)) * dtype.itemsize:
        raise ValueError("this .npy file could not be read: it is truncated (fewer values than its header says)")
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise ValueError(f"this .npy file could not be read (truncated or not .npy): {str(error)[:120]}") from None
