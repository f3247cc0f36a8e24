"""Warm start against a real server: with EMBEDDING_LENS_WARM=minilm the first visitor is told
MiniLM is still loading; once the warm-up is done, the first view of a MiniLM page loads nothing
(no "Loading …" spinner: the model and its arrays were prepared in the background)."""
from __future__ import annotations

import asyncio
import time

from bench.protocol import Session
from browser_helpers import free_port, start_server, stop_server


async def _texts_of(url: str, page: str, query: str) -> tuple[list[str], list[str]]:
    session = Session(url, timeout=120)
    await session.connect()
    try:
        result = await session.open(page, query)
        return session.texts, result.errors
    finally:
        await session.close()


def test_first_visitor_hears_what_loads_and_a_warm_table_opens_without_loading():
    port = free_port()
    server = start_server(port, {"EMBEDDING_LENS_WARM": "minilm"})
    url = f"http://127.0.0.1:{port}"
    try:
        texts, errors = asyncio.run(_texts_of(url, "", ""))
        assert errors == []
        assert any("still warming up" in t and "MiniLM-L6 is loading" in t for t in texts), texts
        deadline = time.monotonic() + 240
        while any("still warming up" in t for t in texts):
            assert time.monotonic() < deadline, "the warm-up did not finish in 240 s"
            time.sleep(1.0)
            texts, errors = asyncio.run(_texts_of(url, "", ""))
        texts, errors = asyncio.run(_texts_of(url, "geometry", "table=minilm"))
        assert errors == []
        assert not any("Loading" in t for t in texts), texts
    finally:
        stop_server(server)


def test_serve_py_starts_the_warm_up_with_the_server_before_any_visitor():
    """`streamlit run serve.py`: the warm-up runs with no visitor at all (the server's memory grows
    by MiniLM and its arrays while nobody is connected), and the first visitor then finds MiniLM
    ready. `streamlit run app.py` waits for a first page run (the test above)."""
    from bench import server_stats

    port = free_port()
    server = start_server(port, {"EMBEDDING_LENS_WARM": "minilm"}, script="serve.py")
    url = f"http://127.0.0.1:{port}"
    try:
        started = server_stats.rss_mb(server.pid)
        deadline = time.monotonic() + 240
        while server_stats.rss_mb(server.pid) < started + 200:      # MiniLM + its arrays: ~+500 MB measured
            assert time.monotonic() < deadline, "no warm-up without a visitor in 240 s"
            time.sleep(1.0)
        texts, errors = asyncio.run(_texts_of(url, "", ""))
        assert errors == []
        while any("still warming up" in t for t in texts):
            assert time.monotonic() < deadline, "the warm-up did not finish in 240 s"
            time.sleep(1.0)
            texts, errors = asyncio.run(_texts_of(url, "", ""))
        texts, errors = asyncio.run(_texts_of(url, "geometry", "table=minilm"))
        assert errors == [] and not any("Loading" in t for t in texts), texts
    finally:
        stop_server(server)
