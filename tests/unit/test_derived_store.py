"""The server's derived arrays: bounded by bytes (not entries), a private table's results dropped
once every session that asked for them has ended."""
from __future__ import annotations

import threading

import numpy as np

from core.server.derived import DerivedStore, size_of

MB = 2 ** 20


def block(mb: int) -> np.ndarray:
    return np.zeros(mb * MB // 4, dtype=np.float32)


def test_bounded_by_bytes_least_recently_used_first():
    store = DerivedStore(10 * MB)
    for name in "abc":
        store.get(name, ("t",), lambda: block(4))
    assert len(store) == 2 and store.used_bytes <= 10 * MB        # a third 4 MB result pushed 'a' out
    calls = []
    store.get("b", ("t",), lambda: calls.append(1))               # kept: not computed again
    assert calls == []
    store.get("d", ("t",), lambda: block(4))                      # 'c' was used least recently
    assert store.get("b", ("t",), lambda: "recomputed") is not None and len(store) == 2
    assert store.get("c", ("t",), lambda: "recomputed") == "recomputed"


def test_a_result_larger_than_the_budget_is_returned_not_kept():
    store = DerivedStore(1 * MB)
    assert store.get("big", ("t",), lambda: block(2)).nbytes == 2 * MB
    assert len(store) == 0


def test_private_results_leave_with_their_sessions():
    store = DerivedStore(100 * MB)
    store.get("pca-upload", ("upload:1",), lambda: block(3), owner="s1")
    store.get("pca-upload", ("upload:1",), lambda: block(3), owner="s2")    # another session asks too
    store.get("pca-glove", ("glove",), lambda: block(3))                     # shared: nobody owns it
    assert store.forget_unowned({"s2", "s3"}) == 0                          # s2 still holds it
    assert store.forget_unowned({"s3"}) >= 3 * MB
    assert store.table_keys() == {"glove"}


def test_one_computation_for_simultaneous_askers():
    store = DerivedStore(10 * MB)
    started, release, calls = threading.Event(), threading.Event(), []

    def slow():
        calls.append(1)
        started.set()
        release.wait(5)
        return block(1)

    first = threading.Thread(target=store.get, args=("k", ("t",), slow))
    first.start()
    started.wait(5)
    second = threading.Thread(target=store.get, args=("k", ("t",), slow))
    second.start()
    release.set()
    first.join(5)
    second.join(5)
    assert calls == [1]


def test_size_of_counts_buffers_and_python_objects():
    words = {f"word{i}": i for i in range(10_000)}
    assert size_of(words) > 10_000 * 50                     # keys, values and the table itself
    assert size_of((block(1), [block(1)])) >= 2 * MB
    view = block(1)[:10]
    assert size_of(view) < 1000                             # a view holds no buffer of its own
