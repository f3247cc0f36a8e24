"""The server's long-lived objects kept out of the garbage collector's way.

Streamlit runs a full `gc.collect()` after every script run (`runner.postScriptGC`, on by default,
so a run's reference cycles are freed at once). A full collection walks every container object the
process holds: once torch, transformers and a model are loaded that is ~480,000 objects and
~230 ms of CPU, after *every* page run of every session — more than the whole budget of a page run
(measured: 246 ms of a toy-table page run's 920 ms, bench/load_profile.py). Nearly all of those
objects live as long as the server (modules, classes, models, word lists), so collecting them again
and again finds nothing.

`gc.freeze()` moves every object alive at that moment into a permanent generation the collector
skips; later collections walk only what was made since. Objects frozen that later become garbage
are freed by reference counting as usual; only cyclic garbage among them waits: a full refreeze
first unfreezes and runs one full collection (the cost Streamlit paid per run, ~300 ms with three
tables and a model loaded, paid once), so it waits at most REFREEZE_SECONDS. In between, when the
unfrozen old generation has grown past REFREEZE_OBJECTS (a model or a library was loaded,
sessions arrived, figures were kept), what is new is collected and frozen on top, without
unfreezing: that collection walks the new objects only (a class of ten had 14 full refreezes in
400 s, ~30 ms of every page run on average). Pure Python, thread-safe.

On the frozen heap Streamlit's collection after each run still cost ~6 ms of every page run (the
unfrozen old objects and the run's young ones, walked after every run of every session): it is off
(.streamlit/config.toml). Python's own collector frees a run's cycles (a page script's module and its
functions) a few runs later, in its young generations or, for what reached the old one, in the full
collection it makes once that has grown by a quarter (cheap: it walks unfrozen objects only).
"""
from __future__ import annotations

import gc
import threading
import time
from dataclasses import dataclass, field

REFREEZE_OBJECTS = 20_000      # unfrozen old objects worth ~10 ms of every later full collection
REFREEZE_SECONDS = 600.0       # cyclic garbage among frozen objects waits at most this long
COUNT_SECONDS = 2.0            # the old generation is counted at most this often (~1.5 ms a count)


@dataclass
class HeapFreezer:
    threshold: int = REFREEZE_OBJECTS
    period: float = REFREEZE_SECONDS
    clock: object = time.monotonic
    count_every: float = COUNT_SECONDS
    frozen_at: float | None = None           # clock time of the last refreeze (None: never)
    counted_at: float = float("-inf")        # clock time the old generation was last counted
    refreezes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refreeze(self) -> int:
        """Unfreeze, collect everything once, freeze what is alive. Returns the objects frozen."""
        with self._lock:
            return self._refreeze()

    def _refreeze(self) -> int:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.frozen_at = self.counted_at = self.clock()      # nothing left unfrozen: as good as a count
        self.refreezes += 1
        return gc.get_freeze_count()

    def _freeze_new(self) -> None:
        gc.collect()                 # frozen objects are not walked: only what came since
        gc.freeze()
        self.refreezes += 1

    def maybe_refreeze(self) -> bool:
        """A full refreeze when the period passed (or never yet); else, if the unfrozen old generation
        grew past the threshold, the new objects frozen on top. Cheap when nothing is due: the old
        generation (its unfrozen objects) is counted at most every `count_every` seconds. Another
        thread's refreeze in progress: nothing to do (never waits)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            now = self.clock()
            if self.frozen_at is None or now - self.frozen_at > self.period:
                self._refreeze()
                return True
            if now - self.counted_at < self.count_every:    # 60 sessions run ~5 pages a second
                return False
            self.counted_at = now
            grown = len(gc.get_objects(generation=2)) > self.threshold
            if grown:
                self._freeze_new()
            return grown
        finally:
            self._lock.release()
