"""core/server/objects.py: one object per name and process, made once even when asked from many
threads at once, never made again; a factory that fails leaves nothing behind."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from core.server import objects as server_objects


def test_many_threads_asking_at_once_get_one_object_made_once():
    name, made, results = f"test {uuid.uuid4()}", [], []
    start = threading.Event()

    def factory():
        made.append(1)
        time.sleep(0.05)           # slow enough that every thread asks while it is being made
        return object()

    def ask():
        start.wait()
        results.append(server_objects.shared(name, factory))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join(5)
    assert len(made) == 1 and len(results) == 8 and all(result is results[0] for result in results)
    assert server_objects.shared(name, lambda: pytest.fail("made twice")) is results[0]
    assert name in server_objects.made()


def test_a_factory_may_ask_for_another_name_and_a_failed_one_is_tried_again():
    outer, inner = f"outer {uuid.uuid4()}", f"inner {uuid.uuid4()}"
    made = server_objects.shared(outer, lambda: ("outer", server_objects.shared(inner, lambda: "inner")))
    assert made == ("outer", "inner")

    failing = f"failing {uuid.uuid4()}"

    def boom():
        raise RuntimeError("no")
    with pytest.raises(RuntimeError):
        server_objects.shared(failing, boom)
    assert failing not in server_objects.made()
    assert server_objects.shared(failing, lambda: 3) == 3
