"""Objects that live once per server process and that no visitor can make the server rebuild.

Streamlit's `st.cache_resource` is a cache: anything a client or the operator clears from it is
made again on the next call, and an object that started a thread or a child process (the warm-up,
the heavy-job line, the map process, the session sweeper), or that is held elsewhere (models in
frozen memory, a job's waiters), lives on beside its replacement. Streamlit 1.67 clears that
cache for every user when any client sends `BackMsg(clear_cache=True)` (ui/server/guard.py
refuses it by default), so the server's own objects are kept here instead, out of its reach:
made by the first caller, the same object for every later one, until the process ends.

`shared(name, factory)` is the only way in. Two callers asking for the same name at once make it
once (a lock per name); a factory may ask for another name (the warm-up asks for the heap
freezer); a factory that raises leaves nothing behind, so the next caller tries again.

This module is the one place with process-wide mutable state, on purpose: it is the process.
"""
from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()                   # guards the two dicts, never held while making
        self._objects: dict[str, object] = {}           # name -> the object, made once
        self._making: dict[str, threading.Lock] = {}    # name -> held while its factory runs

    def shared(self, name: str, factory: Callable[[], T]) -> T:
        with self._lock:
            if name in self._objects:
                return self._objects[name]              # type: ignore[return-value]
            making = self._making.setdefault(name, threading.Lock())
        with making:
            with self._lock:
                if name in self._objects:               # another caller made it while we waited
                    return self._objects[name]          # type: ignore[return-value]
            made = factory()
            with self._lock:
                self._objects[name] = made
            return made

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._objects)


_REGISTRY = _Registry()


def shared(name: str, factory: Callable[[], T]) -> T:
    """The process's one object called `name`, made by factory() the first time it is asked for."""
    return _REGISTRY.shared(name, factory)


def made() -> list[str]:
    """Names of the objects made so far (sorted)."""
    return _REGISTRY.names()
