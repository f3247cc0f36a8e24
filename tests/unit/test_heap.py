"""core/server/heap.py: long-lived objects leave the collector's sight, cyclic garbage among them is still
freed at the next refreeze, and a refreeze happens only when due (growth or age)."""
from __future__ import annotations

import gc
import weakref

import pytest

from core.server.heap import HeapFreezer


class Node:
    def __init__(self):
        self.me = self           # a reference cycle: only the collector frees it


@pytest.fixture(autouse=True)
def unfrozen():
    yield
    gc.unfreeze()                # the rest of the suite sees an ordinary heap


def test_frozen_objects_are_skipped_and_frozen_cycles_freed_at_the_next_refreeze():
    freezer = HeapFreezer()
    node = Node()
    alive = weakref.ref(node)
    assert freezer.refreeze() > 0
    assert gc.get_freeze_count() > 0 and len(gc.get_objects(generation=2)) < 1000
    del node
    gc.collect()                             # what Streamlit runs after every page run
    assert alive() is not None               # frozen: the full collection did not walk it
    freezer.refreeze()
    assert alive() is None                   # unfrozen, collected, the living frozen again


def test_refreeze_only_when_the_old_generation_grew_or_the_period_passed():
    now = [0.0]
    freezer = HeapFreezer(threshold=5_000, period=600.0, clock=lambda: now[0])
    assert freezer.maybe_refreeze()              # never frozen yet
    assert not freezer.maybe_refreeze()          # nothing new
    kept = [[index] for index in range(20_000)]  # 20,000 lists that stay alive ...
    gc.collect()                                 # ... and reach the old generation
    assert freezer.maybe_refreeze() and freezer.refreezes == 2
    assert not freezer.maybe_refreeze()
    now[0] = 601.0
    assert freezer.maybe_refreeze() and freezer.refreezes == 3
    assert len(kept) == 20_000


def test_growth_freezes_the_new_objects_on_top_and_frozen_cycles_wait_for_the_period():
    now = [0.0]
    freezer = HeapFreezer(threshold=5_000, period=600.0, clock=lambda: now[0])
    node = Node()
    alive = weakref.ref(node)
    assert freezer.maybe_refreeze()              # the first: a full one
    frozen = gc.get_freeze_count()
    del node
    kept = [[index] for index in range(20_000)]
    gc.collect()
    assert freezer.maybe_refreeze()              # grown: frozen on top, nothing unfrozen
    assert gc.get_freeze_count() >= frozen + 20_000 and len(gc.get_objects(generation=2)) < 1000
    assert alive() is not None                   # the frozen cycle waits ...
    now[0] = 601.0
    assert freezer.maybe_refreeze()
    assert alive() is None                       # ... for the period's full refreeze
    assert len(kept) == 20_000
