"""The protocol load client (bench/load_protocol.py) against a real server: two students do the
quick round and every step ends with no error, so the client cannot rot unnoticed when the app
or Streamlit changes (a widget key renamed, a protocol field moved)."""
from __future__ import annotations

import asyncio

import pytest

from bench.load_protocol import scenario
from bench.protocol import Session
from bench.rounds import QUICK_ROUND
from browser_helpers import free_port, start_server, stop_server


@pytest.fixture(scope="module")
def server():
    port = free_port()
    process = start_server(port)
    yield f"http://127.0.0.1:{port}", process.pid
    stop_server(process)


def test_two_students_finish_the_quick_round(server):
    url, pid = server
    run = asyncio.run(scenario(url, pid, 2, QUICK_ROUND, arrive=1.0, think=0.1, seed=0, timeout=90))
    assert run["errors"] == []
    for name, step in run["steps"].items():
        assert step["count"] == 2 and step["errors"] == 0, name
        assert step["p95"] > 0, name
    assert run["complete_rounds"] == 2
    assert run["page_runs"] >= 2 * len(QUICK_ROUND)      # one run per step at least
    assert run["server_cpu_s"] > 0 and run["rss_connected_mb"] > 50


def test_a_change_reaches_the_server_and_a_wrong_key_is_an_error(server):
    url, _ = server

    async def visit():
        session = Session(url, timeout=60)
        await session.connect()
        try:
            await session.open("geometry", "table=seed004")
            changed = await session.set("geo_colour", "vector norm")
            missing = await session.set("no_such_widget", 1)
            return changed, missing, session.query_string
        finally:
            await session.close()

    changed, missing, query = asyncio.run(visit())
    assert changed.errors == [] and changed.runs >= 1
    assert "colour=norm" in query            # the app mirrored the new value into the URL
    assert missing.errors == ["no widget with key 'no_such_widget' on the page"]
