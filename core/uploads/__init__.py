"""Tables from the user's own files: .npy, .safetensors, .pt, Projector TSV, GloVe/word2vec text.

Nothing here executes code from a file: .npy is read with allow_pickle=False and .pt with
torch.load(weights_only=True). Nothing is built before its size is known: every table is
bounded by the bytes it becomes as float32 (MAX_TABLE_BYTES), read from headers first, so a
small file that declares a huge array is refused before any memory is spent on it.
Every problem becomes a ValueError naming what was wrong and what is accepted.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from core.limits import MAX_FILE_NAME_CHARS, MAX_UPLOAD_BYTES, megabytes
from core.tables import EmbeddingTable
from core.text import shorten
from core.uploads.arrays import read_npy
from core.uploads.checkpoints import safetensors_candidates, torch_candidates
from core.uploads.shape import LIMITS, as_float32
from core.uploads.text_tables import (
    parse_rows,
    read_metadata,
    read_word_vectors,
    line_count,
    text_lines,
)

__all__ = ["FORMATS", "LIMITS", "MAX_UPLOAD_BYTES", "ParsedUpload", "parse_upload"]
FORMATS = ".npy, .safetensors, .pt/.pth/.bin, .tsv (TensorFlow Projector vectors), .txt/.vec (GloVe or word2vec text)"
CHOOSE_TENSOR = "This file holds several 2-D tensors: choose the embedding table."


@dataclass(frozen=True)
class ParsedUpload:
    """A table (None until the user picks one of several candidate tensors) and, for
    checkpoints with several 2-D tensors, their names, best guess first."""

    table: EmbeddingTable | None
    candidates: tuple[str, ...] = ()
    messages: tuple[str, ...] = field(default=())


def _extension(filename: str) -> str:
    lowered = filename.lower()
    for ext in (".safetensors", ".npy", ".pt", ".pth", ".bin", ".tsv", ".txt", ".vec"):
        if lowered.endswith(ext):
            return ext
    raise ValueError(f"{shorten(filename, 60)!r} has an unsupported extension: upload {FORMATS}")


def _nan_report(weight: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    bad = np.flatnonzero(~np.isfinite(weight).all(axis=1))
    if not len(bad):
        return weight, ()
    cleaned = np.array(weight, copy=True)
    cleaned[bad] = 0.0
    shown = ", ".join(str(r) for r in bad[:10]) + (", ..." if len(bad) > 10 else "")
    return cleaned, (f"{len(bad):,} row(s) hold NaN or Inf (rows {shown}): they were set to zero vectors, "
                     "whose cosine is undefined.",)


def _read_weight(ext: str, data: bytes, chosen: str | None, what: str):
    """(weight or None, candidate tensors, words from the file itself)."""
    if ext == ".npy":
        return as_float32(read_npy(data, what), what), (), []
    if ext == ".safetensors":
        weight, candidates = safetensors_candidates(data, chosen, what)
        return weight, candidates, []
    if ext in (".pt", ".pth", ".bin"):
        weight, candidates = torch_candidates(data, chosen)
        return weight, candidates, []
    if ext == ".tsv":
        _, weight = parse_rows(text_lines(data), "\t", with_word=False, row_bound=line_count(data))
        return weight, (), []
    words, weight = read_word_vectors(data)
    return weight, (), words


def parse_upload(filename: str, data: bytes, vocabulary: bytes | None = None,
                 chosen_tensor: str | None = None) -> ParsedUpload:
    """Bytes of an uploaded file (+ optional vocabulary file) -> a read-only table."""
    name = shorten(filename, MAX_FILE_NAME_CHARS)
    if len(data) == 0:
        raise ValueError(f"{name!r} is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{name!r} is {megabytes(len(data))}: the limit is {LIMITS}")
    ext = _extension(filename)
    try:
        weight, candidates, words = _read_weight(ext, data, chosen_tensor, repr(name))
    except RecursionError:    # every parser bounds nesting first: this is the last line of defence
        raise ValueError(f"{name!r} is nested too deeply to be read") from None
    if weight is None:
        return ParsedUpload(None, candidates, (CHOOSE_TENSOR,))
    if vocabulary is not None:
        words = read_metadata(vocabulary, weight.shape[0])
    if words and len(words) != weight.shape[0]:
        raise ValueError(f"the vocabulary has {len(words):,} entries for {weight.shape[0]:,} rows: they must match")
    tokens = tuple(words) if words else tuple(f"row{i}" for i in range(weight.shape[0]))
    weight, messages = _nan_report(weight)
    digest = hashlib.sha256(data)
    digest.update(vocabulary or b"")
    digest.update((chosen_tensor or "").encode())
    table = EmbeddingTable(name=shorten(filename, 60), weight=weight, tokens=tokens, ids=np.arange(weight.shape[0]),
                           source=f"your upload {shorten(filename, 60)!r} (this session only)", key=f"upload:{digest.hexdigest()[:16]}")
    return ParsedUpload(table, candidates, messages)
