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
    freezer = HeapFreezer(threshold=5_000, period=600.0, count_every=0.0, clock=lambda: now[0])
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
    freezer = HeapFreezer(threshold=5_000, period=600.0, count_every=0.0, clock=lambda: now[0])
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


def test_the_old_generation_is_counted_at_most_every_count_every_seconds():
    """Counting lists every unfrozen old object (~1.5 ms): with sixty sessions running ~5 pages a
    second it is done once per count_every, and growth found then is frozen on top as before."""
    now = [0.0]
    freezer = HeapFreezer(threshold=5_000, period=600.0, count_every=2.0, clock=lambda: now[0])
    assert freezer.maybe_refreeze()                  # the first: a full one
    kept = [[index] for index in range(20_000)]
    gc.collect()
    now[0] = 1.0
    assert not freezer.maybe_refreeze()              # grown, but the refreeze at 0 s counts as a count
    now[0] = 1.5
    assert freezer.maybe_refreeze() is False and freezer.refreezes == 1
    now[0] = 2.5
    assert freezer.maybe_refreeze() and freezer.refreezes == 2
    assert len(kept) == 20_000


def test_a_runs_cycles_are_freed_by_pythons_own_collector_without_a_collection_after_each_run():
    """Streamlit's collection after every run is off (.streamlit/config.toml): a page run's cycles (its
    script's module namespace and the functions defined in it, which point back at it) are freed by
    the collector's own generations a few runs later, on a frozen heap as on any other."""
    import tomllib
    import types
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
    assert gc.isenabled() and gc.get_threshold()[0] > 0
    HeapFreezer().refreeze()
    freed = []
    for run in range(300):
        page = types.ModuleType(f"page_{run}")
        exec("def draw():\n    return draw\nrows = [[i] for i in range(50)]", page.__dict__)
        freed.append(weakref.ref(page.__dict__["draw"]))      # draw -> its globals -> draw: a cycle
        del page
    assert sum(ref() is not None for ref in freed) < 30      # only the last few runs' wait
