"""Arrays derived from tables (PCA, norms, word rows, alignments), shared by every session and
bounded by the bytes they hold, least recently used leaving first.

A count limit ("16 entries") says nothing about memory: sixteen PCAs of a 400,000-row upload
hold gigabytes. Each result is weighed when it arrives. Results of a session's own tables
(uploads, edited tables) remember which sessions asked for them, and the server drops such
results when every session that asked for them has ended (ui.server.session_memory).
"""
from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict
from typing import Callable, Hashable

import numpy as np


def size_of(value, depth: int = 0) -> int:
    """Bytes a result holds: NumPy buffers plus Python containers, strings and numbers, walked
    through dataclasses, tuples, lists and dicts (a dict of 400,000 words is ~60 MB)."""
    if isinstance(value, np.ndarray):   # NumPy counts an array's own buffer in getsizeof, a view's not
        return sys.getsizeof(value)
    if depth > 6:
        return sys.getsizeof(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sys.getsizeof(value) + sum(size_of(getattr(value, f.name), depth + 1)
                                          for f in dataclasses.fields(value))
    if isinstance(value, dict):
        own = getattr(value, "__dict__", None)      # a dict subclass's own attributes (a kept figure's text)
        return (sys.getsizeof(value) + (size_of(own, depth + 1) if own else 0)
                + sum(size_of(k, depth + 1) + size_of(v, depth + 1) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return sys.getsizeof(value) + sum(size_of(item, depth + 1) for item in value)
    return sys.getsizeof(value)


@dataclasses.dataclass
class _Entry:
    value: object
    size: int
    tables: tuple[str, ...]          # table keys the result was computed from
    owners: set[str]                 # sessions that asked for it, for a session's own tables; else empty


class DerivedStore:
    """(name, table keys, arguments) -> result, at most `budget_bytes` of results at once.

    A result larger than the whole budget is returned but not kept. Two sessions asking for the
    same result at once compute it once (a lock per key). Thread-safe."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()    # least recently used first
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, tables: tuple[str, ...], compute: Callable[[], object], owner: str | None = None):
        """The kept result, or compute()'s result kept. `owner`: the session asking, when the result
        belongs to tables only sessions hold (uploads, edits); forget_unowned drops it after them."""
        found = self._lookup(key, owner)
        if found is not None:
            return found.value
        with self._lock:
            key_lock = self._computing.setdefault(key, threading.Lock())
        try:
            with key_lock:
                found = self._lookup(key, owner)
                if found is not None:
                    return found.value
                value = compute()
                self._keep(key, _Entry(value, size_of(value), tables, {owner} if owner else set()))
                return value
        finally:
            with self._lock:
                self._computing.pop(key, None)

    def _lookup(self, key: Hashable, owner: str | None) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                if owner:
                    entry.owners.add(owner)
            return entry

    def _keep(self, key: Hashable, entry: _Entry) -> None:
        if entry.size > self.budget_bytes:
            return
        with self._lock:
            used = sum(e.size for e in self._entries.values())
            while self._entries and used + entry.size > self.budget_bytes:
                _, oldest = self._entries.popitem(last=False)
                used -= oldest.size
            self._entries[key] = entry

    def forget_unowned(self, live_sessions: set[str]) -> int:
        """Drop every session-owned result none of whose sessions is alive; returns the bytes released."""
        with self._lock:
            gone = [key for key, entry in self._entries.items()
                    if entry.owners and not (entry.owners & live_sessions)]
            released = sum(self._entries[key].size for key in gone)
            for key in gone:
                del self._entries[key]
        return released

    def table_keys(self) -> set[str]:
        with self._lock:
            return {table for entry in self._entries.values() for table in entry.tables}

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def used_bytes(self) -> int:
        with self._lock:
            return sum(entry.size for entry in self._entries.values())
