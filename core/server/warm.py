"""Warm start: the built-in tables' one-time work done in a background thread when the server
starts, so a class that arrives together does not pay it together.

A plan is a list of tables, each a list of named steps (load the model, its PCA, its norms, ...).
The runner does them in order, one table after another (two loads at once would only share two
cores and double the peak memory), records what is done, what runs and what failed, and never
lets one failed step stop the others. Pure Python; ui/server/warm.py builds the plan from the app's
cached functions and tells visitors what is still loading.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

LOG = logging.getLogger("embedding_lens.warm")


@dataclass(frozen=True)
class WarmTable:
    name: str                                   # the table's URL name (minilm, glove-50d, ...)
    label: str                                  # what visitors are told ("GloVe 6B 50d")
    steps: tuple[tuple[str, Callable[[], object]], ...]   # (what, work), in order


@dataclass
class WarmUp:
    plan: tuple[WarmTable, ...]
    done: dict[str, float] = field(default_factory=dict)     # table name -> seconds it took
    failed: dict[str, str] = field(default_factory=dict)     # table name -> what failed
    current: str | None = None                               # the table being prepared
    finished: threading.Event = field(default_factory=threading.Event)
    on_done: Callable[[], object] | None = None              # called once every table was tried

    def start(self) -> "WarmUp":
        threading.Thread(target=self.run, name="embedding-lens-warm-up", daemon=True).start()
        return self

    def run(self) -> None:
        try:
            for table in self.plan:
                self.current = table.name
                start = time.perf_counter()
                for what, work in table.steps:
                    try:
                        work()
                    except Exception as error:      # the table's first visitor will see its own error
                        LOG.exception("warm-up of %s: %s failed", table.name, what)
                        self.failed[table.name] = f"{what}: {type(error).__name__}"
                        break
                if table.name not in self.failed:
                    self.done[table.name] = time.perf_counter() - start
                    LOG.info("warm-up: %s ready in %.1f s", table.name, self.done[table.name])
        finally:
            self.current = None
            if self.on_done is not None:
                try:
                    self.on_done()
                except Exception:
                    LOG.exception("warm-up: the last step after the tables failed")
            self.finished.set()

    def pending(self) -> list[WarmTable]:
        """Tables not yet ready (the one being prepared first), failed ones left out."""
        return [table for table in self.plan if table.name not in self.done and table.name not in self.failed
                and not self.finished.is_set()]

    def notice(self) -> str | None:
        """What a visitor is told while tables are still loading, or None."""
        waiting = self.pending()
        if not waiting:
            return None
        names = ", ".join(table.label for table in waiting)
        return (f"The server is still warming up: {names} {'is' if len(waiting) == 1 else 'are'} loading "
                "in the background. Pages on other tables are ready now; a page on one of these waits "
                "until it has loaded (once, for everyone).")
