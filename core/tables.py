"""Embedding tables: a (V, d) weight, the token string of each row and the token id of each row.

A table is immutable: its weight array is read-only, so a table shared through a cache can
never be edited in place. Edits, renames and resizes build a new table (see `edits.py`).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np

from core.lookup import as_token_id, validate_ids


class TokenIndex:
    """key(token) -> the first row whose token has that key, in 16 bytes a row.

    A dict of GloVe's 400,000 words costs ~50 MB per server; here rows are sorted by the keys'
    hashes (a stable sort, so equal keys keep row order), a lookup binary-searches the hash and
    compares the strings, so a hash collision can never return a wrong row.
    """

    def __init__(self, tokens, key: Callable[[str], str] | None = None) -> None:
        self._tokens, self._key = tokens, key or (lambda token: token)
        hashes = np.fromiter((hash(self._key(t)) for t in tokens), dtype=np.int64, count=len(tokens))
        self._order = np.argsort(hashes, kind="stable")
        self._hashes = hashes[self._order]

    def get(self, wanted: str) -> int | None:
        target = hash(wanted)
        position = int(np.searchsorted(self._hashes, target))
        while position < len(self._hashes) and self._hashes[position] == target:
            row = int(self._order[position])
            if self._key(self._tokens[row]) == wanted:
                return row
            position += 1
        return None


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """weight (V, d); tokens: V strings; ids (V,) int64 token id of each row; key names the content."""

    name: str
    weight: np.ndarray
    tokens: tuple[str, ...]
    ids: np.ndarray
    source: str = ""
    # A cache key that changes whenever the content changes (edits append to it).
    key: str = ""
    # Free-form facts shown in the UI (e.g. "weights dequantised from 4-bit").
    notes: tuple[str, ...] = field(default=())
    # The model's own tokenizer: text -> token ids. None means whitespace words of `tokens`.
    encoder: Callable[[str], list[int]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        weight = np.asarray(self.weight)
        if weight.ndim != 2:
            raise ValueError(f"an embedding table must be 2-D (V, d); got shape {weight.shape}")
        if len(self.tokens) != weight.shape[0]:
            raise ValueError(
                f"{len(self.tokens)} token strings for {weight.shape[0]} rows: they must match")
        ids = np.asarray(self.ids, dtype=np.int64)
        if ids.shape != (weight.shape[0],):
            raise ValueError(f"ids must have shape ({weight.shape[0]},); got {ids.shape}")
        ordered = np.sort(ids)              # 10x faster than np.unique's hashing on GloVe's 400,000 ids
        if (ordered[1:] == ordered[:-1]).any():
            raise ValueError("token ids must be unique")
        object.__setattr__(self, "weight", _read_only(weight))
        object.__setattr__(self, "ids", _read_only(ids))
        object.__setattr__(self, "tokens", tuple(self.tokens))
        if not self.key:
            object.__setattr__(self, "key", f"{self.name}:{content_hash(weight)}")

    @property
    def vocab_size(self) -> int:
        return int(self.weight.shape[0])

    @property
    def width(self) -> int:
        return int(self.weight.shape[1])

    @property
    def has_default_ids(self) -> bool:
        """True when row r carries token id r."""
        return bool(np.array_equal(self.ids, np.arange(self.vocab_size)))

    @cached_property
    def _row_of_id(self) -> dict[int, int]:
        return {int(token_id): row for row, token_id in enumerate(self.ids)}

    @cached_property
    def _row_of_token(self) -> "TokenIndex":
        return TokenIndex(self.tokens)

    @cached_property
    def _row_of_lower_token(self) -> "TokenIndex":
        return TokenIndex(self.tokens, str.lower)

    def id_range_text(self) -> str:
        """How the valid ids read in an error message: '0..4' or 'one of 318, 464, ...'."""
        if self.has_default_ids:
            return f"0..{self.vocab_size - 1}"
        shown = ", ".join(str(i) for i in sorted(self.ids.tolist())[:12])
        more = ", ..." if self.vocab_size > 12 else ""
        return f"one of {shown}{more}"

    def rows_for_ids(self, token_ids) -> np.ndarray:
        """Token ids (T,) -> row indices (T,). Raises ValueError naming the id and the valid ids."""


        if self.has_default_ids:
            return validate_ids(token_ids, self.vocab_size)
        rows = []
        for token_id in token_ids:
            checked = as_token_id(token_id)
            if checked not in self._row_of_id:
                raise ValueError(f"token id {checked} is not in this table: valid ids are "
                                 f"{self.id_range_text()}")
            rows.append(self._row_of_id[checked])
        return np.asarray(rows, dtype=np.int64)

    def row_of_token(self, token: str) -> int | None:
        """Exact match first, then a case-insensitive match; None if the token is unknown."""
        row = self._row_of_token.get(token)
        if row is None:
            row = self._row_of_lower_token.get(token.lower())
        return row

    def tokenize(self, text: str) -> list[int]:
        """Text -> token ids: the model's tokenizer if the table has one, else whitespace words.

        Unknown words raise ValueError listing (part of) the vocabulary.
        """
        if not text.strip():
            raise ValueError("the text is empty: type one or more words of the vocabulary")
        if self.encoder is not None:
            ids = list(self.encoder(text))
            if not ids:
                raise ValueError("the tokenizer produced no tokens for this text")
            return ids
        words = text.split()
        ids, unknown = [], []
        for word in words:
            row = self.row_of_token(word)
            if row is None:
                unknown.append(word)
            else:
                ids.append(int(self.ids[row]))
        if unknown:
            raise ValueError(f"unknown word{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(w) for w in unknown[:10])}: "
                             f"this table's vocabulary is {self.vocabulary_text()}")
        return ids

    def vocabulary_text(self, limit: int = 40) -> str:
        shown = ", ".join(self.tokens[:limit])
        return shown + (f", ... ({self.vocab_size:,} tokens)" if self.vocab_size > limit else "")

    def with_weight(self, weight: np.ndarray, key_suffix: str,
                    tokens: tuple[str, ...] | None = None,
                    ids: np.ndarray | None = None) -> "EmbeddingTable":
        """A new table with another weight (and optionally tokens/ids); the key records the change."""
        return EmbeddingTable(
            name=self.name, weight=weight,
            tokens=self.tokens if tokens is None else tokens,
            ids=self.ids if ids is None else ids,
            source=self.source, key=f"{self.key}+{key_suffix}", notes=self.notes,
            encoder=self.encoder)


def content_hash(weight: np.ndarray) -> str:
    """A short hash of the full array content (dtype, shape and every value)."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(str((weight.dtype.str, weight.shape)).encode())
    digest.update(np.ascontiguousarray(weight).data)
    return digest.hexdigest()


def make_table(name: str, rows: dict[str, list[float]] | list[tuple[str, list[float]]],
               source: str, ids: list[int] | None = None) -> EmbeddingTable:
    """A small table from token -> vector pairs; ids default to 0..V-1."""
    pairs = list(rows.items()) if isinstance(rows, dict) else list(rows)
    tokens = tuple(token for token, _ in pairs)
    weight = np.array([vector for _, vector in pairs], dtype=np.float64)
    token_ids = np.arange(len(pairs)) if ids is None else np.asarray(ids)
    return EmbeddingTable(name=name, weight=weight, tokens=tokens, ids=token_ids, source=source)
