"""Issue 32 (1): a client's `BackMsg(clear_cache=True)` cannot make the server rebuild what it
shares (the protocol client, no browser).

- Default (`streamlit run app.py`, and serve.py before any page run): the message is refused and
  the server's log says so (ui/server/guard.py).
- Even when the operator allows it (EMBEDDING_LENS_ALLOW_CLEAR_CACHE=1, so Streamlit clears
  st.cache_resource), the server's own objects are the same ones afterwards, read from what a
  visitor sees: the warm-up is not started again (no "still warming up"), MiniLM is not loaded
  again (no "Loading" on its Geometry page), and the heavy-job line keeps the map it was making:
  a map asked after the clears waits behind it with its place shown, and the line serves all in
  the order asked. Before, each clear made a new empty line (the next map ran at once, beside the
  other) and a new warm-up and model store beside the old ones (~110 MB a message, never freed).
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from bench.protocol import Session
from browser_helpers import free_port, start_server, stop_server
from map_queue_steps import ask_for_map

ROOT = Path(__file__).resolve().parents[2]
CLEARS = 3


def _log(port: int) -> str:
    return (ROOT / "tests" / f".server-{port}.log").read_text(errors="replace")


def _clear_cache() -> BackMsg:
    message = BackMsg()
    message.clear_cache = True
    return message


async def _clear_then_open(url: str, page: str, query: str, first: bool) -> list[list[str]]:
    """One session sends CLEARS clear_cache messages, each followed by a page run (`first`: the
    first message goes before any page run). Returns what each run showed."""
    session = Session(url, timeout=180)
    await session.connect()
    shown = []
    try:
        if not first:
            opened = await session.open(page, query)
            assert opened.errors == [], opened.errors
        for _ in range(CLEARS):
            await session.send_only(_clear_cache())
            opened = await session.open(page, query)
            assert opened.errors == [], opened.errors
            shown.append(list(session.texts))
        return shown
    finally:
        await session.close()


@pytest.mark.parametrize("script, first", [("app.py", False), ("serve.py", True)])
def test_a_clients_clear_cache_is_refused_by_default(script, first):
    """With app.py the guard is in place from the server's first page run; with serve.py from the
    server's start, so even a message sent before any page run is refused."""
    port = free_port()
    server = start_server(port, {"EMBEDDING_LENS_WARM": "none"}, script=script)
    try:
        asyncio.run(_clear_then_open(f"http://127.0.0.1:{port}", "", "", first))
        log = _log(port)
    finally:
        stop_server(server)
    assert "refused 1 clear_cache message(s) from clients" in log, log[-2000:]
    assert "cleared st.cache_data and st.cache_resource" not in log


async def _maps_page(url: str, query: str) -> Session:
    session = Session(url, timeout=600)
    await session.connect()
    opened = await session.open("maps", query)
    assert opened.errors == [] and "maps_draw" in session.widgets, opened.errors
    return session


async def _line_through_clears(url: str):
    # A 1,500-row MiniLM map runs for seconds (the first also starts the map process); the toy
    # maps behind it take milliseconds, so they surely wait.
    first = await _maps_page(url, "table=minilm&n=1500&seed=11&clusters=off")
    second, third = [await _maps_page(url, f"table=seed004&seed={seed}&iters=1000&clusters=off") for seed in (12, 13)]
    ended: dict[str, float] = {}
    seen = [asyncio.Event() for _ in range(3)]
    try:
        a = asyncio.create_task(ask_for_map(first, ended, "first", seen[0]))
        await asyncio.wait_for(seen[0].wait(), 300)
        views = await _clear_then_open(url, "geometry", "table=seed004", first=True)   # light runs between
        b = asyncio.create_task(ask_for_map(second, ended, "second", seen[1]))
        await asyncio.wait_for(seen[1].wait(), 300)
        c = asyncio.create_task(ask_for_map(third, ended, "third", seen[2]))
        await asyncio.wait_for(seen[2].wait(), 300)
        results = {"first": await a, "second": await b, "third": await c}
        minilm_views = await _clear_then_open(url, "geometry", "table=minilm", first=True)
        return results, ended, views, minilm_views
    finally:
        for session in (first, second, third):
            await session.close()


def test_clears_the_operator_allows_rebuild_none_of_the_servers_objects():
    port = free_port()
    server = start_server(port, {"EMBEDDING_LENS_WARM": "minilm", "EMBEDDING_LENS_HEAVY_JOBS": "1",
                                 "EMBEDDING_LENS_ALLOW_CLEAR_CACHE": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:                                  # the warm-up loads MiniLM once, before the clears
            session_texts = asyncio.run(_home_texts(url))
            if not any("still warming up" in text for text in session_texts):
                break
            assert time.monotonic() < deadline, "the warm-up did not finish in 300 s"
            time.sleep(1.0)
        results, ended, views, minilm_views = asyncio.run(_line_through_clears(url))
        log = _log(port)
    finally:
        stop_server(server)
    assert log.count("cleared st.cache_data and st.cache_resource") == 2 * CLEARS, log[-2000:]   # obeyed
    for name, (result, _) in results.items():
        assert result.errors == [], (name, result.errors)
    assert ended["first"] < ended["second"] < ended["third"], ended
    assert results["first"][1] == []
    assert results["second"][1][:1] == [1] and results["third"][1][:1] == [2], (results["second"][1], results["third"][1])
    for texts in views + minilm_views:
        assert not any("still warming up" in text for text in texts), texts        # no second warm-up
    for texts in minilm_views:
        assert not any("Loading" in text for text in texts), texts                 # no second MiniLM


async def _home_texts(url: str) -> list[str]:
    session = Session(url, timeout=180)
    await session.connect()
    try:
        opened = await session.open("", "")
        assert opened.errors == [], opened.errors
        return list(session.texts)
    finally:
        await session.close()
