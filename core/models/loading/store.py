"""The server's shared models, bounded by the bytes they hold, least recently used leaving first.

A count limit ("6 models") says nothing about memory: one large hub model can take a small
server down. Here each model is weighed when it arrives; models that were not used for the
longest time leave until the newcomer fits. Two sessions asking for the same model at the
same moment load it once (a lock per name).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, TypeVar

from core.limits import megabytes

Model = TypeVar("Model")


class ModelStore(Generic[Model]):
    """name -> model, at most `budget_bytes` of models at once."""

    def __init__(self, budget_bytes: int, size_of: Callable[[Model], int]) -> None:
        self.budget_bytes = budget_bytes
        self._size_of = size_of
        self._models: OrderedDict[str, tuple[Model, int]] = OrderedDict()   # oldest use first
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}

    def get(self, name: str) -> Model | None:
        with self._lock:
            if name not in self._models:
                return None
            self._models.move_to_end(name)
            return self._models[name][0]

    def load(self, name: str, loader: Callable[[], Model]) -> Model:
        """The stored model, or loader()'s result stored (evicting others until it fits).
        Raises ValueError when the model alone is larger than the budget."""
        with self._lock:
            name_lock = self._loading.setdefault(name, threading.Lock())
        with name_lock:
            cached = self.get(name)
            if cached is not None:
                return cached
            model = loader()
            self._store(name, model, int(self._size_of(model)))
            return model

    def _store(self, name: str, model: Model, size: int) -> None:
        if size > self.budget_bytes:
            raise ValueError(f"this model needs {megabytes(size)}: this server keeps at most "
                             f"{megabytes(self.budget_bytes)} of models (EMBEDDING_LENS_MODEL_MEMORY_MB)")
        with self._lock:
            while self._models and self.used_bytes_unlocked() + size > self.budget_bytes:
                self._models.popitem(last=False)
            self._models[name] = (model, size)

    def used_bytes_unlocked(self) -> int:
        return sum(size for _, size in self._models.values())

    @property
    def used_bytes(self) -> int:
        with self._lock:
            return self.used_bytes_unlocked()

    def names(self) -> list[str]:
        """Stored names, least recently used first."""
        with self._lock:
            return list(self._models)


class SharedResults:
    """key -> a read-only result that took long to compute (a ranking of every head), shared by
    all sessions, at most `limit` of them (oldest out first), safe when sessions write at once."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return self._items.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._limit:
                self._items.popitem(last=False)
