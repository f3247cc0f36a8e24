"""Checkpoints: .safetensors (header checked against the file, only the chosen tensor copied)
and .pt (torch's uncompressed zip only, weights_only, plain tensors only, never views).

The structure of both is sized from the bytes before it is parsed (core.uploads.structure):
a small file cannot become gigabytes of Python objects."""
from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np

from core.limits import MAX_SAFETENSORS_HEADER_BYTES, MAX_UPLOAD_TENSORS
from core.text import shorten
from core.uploads.shape import check_table_shape
from core.uploads.structure import check_json_structure, check_pickle_structure

_SAFETENSORS_DTYPES = {"F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2),
                       "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
                       "U8": ("uint8", 1), "BOOL": ("bool", 1)}


def _safetensors_header(data: bytes) -> tuple[dict, int]:
    """The JSON header and where the tensor bytes start; every entry checked against the file."""
    malformed = "this .safetensors file is malformed (its header does not match its content)"
    if len(data) < 8:
        raise ValueError(malformed)
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - 8:
        raise ValueError(malformed)
    if length > MAX_SAFETENSORS_HEADER_BYTES:
        raise ValueError(f"this .safetensors header is {length:,} bytes: at most {MAX_SAFETENSORS_HEADER_BYTES:,} "
                         f"are read ({MAX_UPLOAD_TENSORS:,} tensors need far less)")
    raw_header = data[8:8 + length]
    check_json_structure(raw_header, "this .safetensors header")
    try:
        header = json.loads(raw_header)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError(malformed) from None
    if not isinstance(header, dict):
        raise ValueError(malformed)
    header.pop("__metadata__", None)
    if len(header) > MAX_UPLOAD_TENSORS:
        raise ValueError(f"this file holds {len(header):,} tensors: at most {MAX_UPLOAD_TENSORS:,} are read")
    payload = len(data) - 8 - length
    for name, entry in header.items():
        try:
            dtype, shape, (start, end) = entry["dtype"], [int(n) for n in entry["shape"]], entry["data_offsets"]
            itemsize = _SAFETENSORS_DTYPES.get(dtype, (None, 1))[1]
            count = int(np.prod(shape, dtype=object)) if shape else 1
            valid = 0 <= start <= end <= payload and end - start == count * itemsize and min(shape, default=0) >= 0
        except (KeyError, TypeError, ValueError):
            valid = False
        if not valid:
            raise ValueError(f"{malformed}: tensor {shorten(name, 60)!r}")
    return header, 8 + length


def safetensors_candidates(data: bytes, chosen: str | None, what: str) -> tuple[np.ndarray | None, tuple[str, ...]]:
    import torch

    header, start = _safetensors_header(data)
    shapes = {name: tuple(entry["shape"]) for name, entry in header.items()}
    name, candidates = _choose(shapes, chosen)
    if name is None:
        return None, candidates
    entry = header[name]
    if entry["dtype"] not in _SAFETENSORS_DTYPES:
        raise ValueError(f"tensor {shorten(name, 60)!r} holds {entry['dtype']} values: an embedding table must hold "
                         "real numbers")
    check_table_shape(shapes[name], f"tensor {shorten(name, 60)!r}")
    begin, end = entry["data_offsets"]
    raw = bytearray(data[start + begin:start + end])    # a private, writable copy of just this tensor
    tensor = torch.frombuffer(raw, dtype=getattr(torch, _SAFETENSORS_DTYPES[entry["dtype"]][0]))
    return tensor.float().numpy().reshape(shapes[name]), candidates


def _check_torch_zip(data: bytes) -> None:
    """torch.save writes an uncompressed zip. A compressed entry (which could inflate to any
    size) or the legacy pickle-only format is refused before torch reads anything."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ValueError("this .pt file was refused: it is not the zip format that torch.save writes "
                         "(older formats are not read); re-save it with a current PyTorch") from None
    if len(entries) > MAX_UPLOAD_TENSORS + 16:
        raise ValueError(f"this .pt file has {len(entries):,} entries: at most {MAX_UPLOAD_TENSORS:,} tensors are read")
    if any(entry.compress_type != zipfile.ZIP_STORED for entry in entries):
        raise ValueError("this .pt file was refused: it holds compressed entries, which torch.save never writes")
    pickles = [entry for entry in entries if entry.filename.endswith("data.pkl")]
    if len(pickles) != 1:
        raise ValueError("this .pt file was refused: torch.save writes exactly one data.pkl, "
                         f"this file holds {len(pickles)}")
    check_pickle_structure(archive, pickles[0])


def _tensors_from_torch(data: bytes) -> dict:
    import pickle

    import torch

    _check_torch_zip(data)
    try:
        loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True, mmap=False)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError, TypeError,
            KeyError, IndexError, OSError, RecursionError):
        raise ValueError("this .pt file was refused: it holds more than plain tensors (objects whose loading "
                         "could run code are never loaded here), or it is damaged. Save a tensor or a dict of "
                         "tensors with torch.save") from None
    tensors: dict = {}
    _collect_tensors(loaded, "", tensors)
    return tensors


def _collect_tensors(value, prefix: str, found: dict, depth: int = 0) -> None:
    import torch

    if depth > 6 or len(found) > MAX_UPLOAD_TENSORS:
        return
    if isinstance(value, torch.Tensor):
        found[prefix or "tensor"] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_tensors(item, f"{prefix}.{key}" if prefix else str(key), found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _collect_tensors(item, f"{prefix}[{index}]", found, depth + 1)


def _plain_tensor(tensor, what: str):
    """A tensor whose values really are in its storage: contiguous, no zero or overlapping
    strides, the storage as large as the shape says. Views are refused, never expanded."""
    needed = (tensor.storage_offset() + tensor.numel()) * tensor.element_size()
    if not tensor.is_contiguous() or 0 in tensor.stride() or tensor.untyped_storage().nbytes() < needed:
        raise ValueError(f"{what} is a strided view (zero-stride, overlapping or non-contiguous), which could "
                         "declare far more values than the file holds: save tensor.contiguous().clone() instead")
    return tensor


def torch_candidates(data: bytes, chosen: str | None) -> tuple[np.ndarray | None, tuple[str, ...]]:
    tensors = _tensors_from_torch(data)
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    name, candidates = _choose(shapes, chosen)
    if name is None:
        return None, candidates
    what = f"tensor {shorten(name, 60)!r}"
    check_table_shape(shapes[name], what)
    tensor = _plain_tensor(tensors[name], what)
    if tensor.is_complex():
        raise ValueError(f"{what} holds {tensor.dtype} values: an embedding table must hold real numbers")
    return tensor.float().numpy(), candidates


def _choose(shapes: dict[str, tuple], chosen: str | None) -> tuple[str | None, tuple[str, ...]]:
    """(the tensor to use or None, the 2-D candidates when there are several)."""
    matrices = [name for name, shape in shapes.items() if len(shape) == 2]
    if not matrices:
        found = ", ".join(f"{shorten(n, 40)} {s}" for n, s in list(shapes.items())[:5]) or "nothing"
        raise ValueError(f"no 2-D tensor in this file (found {found}): an embedding table is (V, d)")
    if len(matrices) == 1:
        return matrices[0], ()
    ordered = tuple(sorted(matrices, key=lambda n: (not any(k in n.lower() for k in ("embed", "wte", "word")), n)))
    return (chosen if chosen in shapes and chosen in ordered else None), ordered
