"""Fair heavy work between *sessions* of a real server (the protocol client, no browser): three
visitors ask for maps in a known order and are served in that order, each told its place; one
who asks again while waiting goes to the back instead of pushing another back; a fourth
visitor's light step is served while the maps wait. The first map is a 500-row sample of MiniLM
(seconds, and it starts the server's map process), so the others surely wait behind it; theirs are
5-point maps of a toy table. Each visitor asks only once the one before it has seen its job's
status, so the order of asking is known. Clusters are off: a map's clustering is a heavy job of its
own, queued after the map (in order too), which would end the first visitor's run after the others'
maps.

Places are per visitor, not per socket (issue 32, 6): two sessions from one client address (its
X-Forwarded-For, which uvicorn trusts from 127.0.0.1) hold one place; the second is told to wait."""
from __future__ import annotations

import asyncio
import time

import pytest

from bench.protocol import Session
from browser_helpers import free_port, start_server, stop_server
from map_queue_steps import ask_for_map



@pytest.fixture(scope="module")
def server():
    port = free_port()
    process = start_server(port, {"EMBEDDING_LENS_WARM": "none", "EMBEDDING_LENS_HEAVY_JOBS": "1"})
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


async def _visitor(url: str, query: str, headers: dict | None = None) -> Session:
    session = Session(url, timeout=600, headers=headers)
    await session.connect()
    opened = await session.open("maps", query)
    assert opened.errors == [] and "maps_draw" in session.widgets, opened.errors
    return session


async def _class(url: str):
    first = await _visitor(url, "table=minilm&n=500&seed=1&clusters=off")
    second, third = [await _visitor(url, f"table=seed004&seed={seed}&iters=1000&clusters=off") for seed in (2, 3)]
    light = Session(url, timeout=600)
    await light.connect()
    await light.open("geometry", "table=seed004")
    ended: dict[str, float] = {}
    seen = [asyncio.Event() for _ in range(4)]
    try:
        a = asyncio.create_task(ask_for_map(first, ended, "first", seen[0]))
        await asyncio.wait_for(seen[0].wait(), 300)
        b = asyncio.create_task(ask_for_map(second, ended, "second", seen[1]))
        await asyncio.wait_for(seen[1].wait(), 300)
        c = asyncio.create_task(ask_for_map(third, ended, "third", seen[2]))
        await asyncio.wait_for(seen[2].wait(), 300)
        # The second visitor stops waiting and asks for another map: it goes to the back of the line.
        b.cancel()
        await asyncio.gather(b, return_exceptions=True)
        changed = await second.set("maps_seed", 4)
        assert changed.errors == [], changed.errors
        b_again = asyncio.create_task(ask_for_map(second, ended, "second again", seen[3]))
        await asyncio.wait_for(seen[3].wait(), 300)
        light_step = await light.set("geo_colour", "vector norm")
        light_end = time.monotonic()
        results = {name: await task for name, task in (("first", a), ("third", c), ("second again", b_again))}
        return results, ended, light_step, light_end
    finally:
        for session in (first, second, third, light):
            await session.close()


def test_sessions_are_served_first_in_first_out_and_a_light_step_is_not_starved(server):
    results, ended, light_step, light_end = asyncio.run(_class(server))
    for name, (result, _) in results.items():
        assert result.errors == [], (name, result.errors)
    # Served in the order asked, the one who asked again last of all.
    assert ended["first"] < ended["third"] < ended["second again"], ended
    _, first_places = results["first"]
    _, third_places = results["third"]
    _, again_places = results["second again"]
    assert first_places == []                             # nothing ahead of it: made at once
    assert third_places and third_places[0] == 2          # behind the first and the second's first ask
    assert again_places and again_places[0] == 2          # behind the first and the third: its first ask withdrawn
    assert results["third"][0].queue_seconds > 0 and results["second again"][0].queue_seconds > 0
    # The light step of a fourth session ran while the heavy jobs were still waiting or running.
    assert light_step.errors == [] and light_step.runs >= 1
    assert light_end < ended["second again"], (light_end, ended)


async def _one_visitor_two_sockets(url: str):
    stranger, other = {"X-Forwarded-For": "203.0.113.5"}, {"X-Forwarded-For": "203.0.113.9"}
    tab1 = await _visitor(url, "table=minilm&n=1500&seed=21&clusters=off", stranger)
    tab2 = await _visitor(url, "table=seed004&seed=22&iters=1000&clusters=off", stranger)
    someone = await _visitor(url, "table=seed004&seed=23&iters=1000&clusters=off", other)
    ended: dict[str, float] = {}
    seen = [asyncio.Event() for _ in range(2)]
    try:
        a = asyncio.create_task(ask_for_map(tab1, ended, "tab 1", seen[0]))
        await asyncio.wait_for(seen[0].wait(), 300)
        refused = await tab2.set("maps_draw", True)
        refused_at = time.monotonic()
        b = asyncio.create_task(ask_for_map(someone, ended, "someone", seen[1]))
        await asyncio.wait_for(seen[1].wait(), 300)
        return refused, refused_at, {"tab 1": await a, "someone": await b}, ended
    finally:
        for session in (tab1, tab2, someone):
            await session.close()


def test_a_visitor_with_two_sockets_holds_one_place_and_is_told_to_wait(server):
    refused, refused_at, results, ended = asyncio.run(_one_visitor_two_sockets(server))
    said = [error.replace("\\", "") for error in refused.errors]      # the box escapes Markdown: plain text
    assert len(said) == 1 and said[0].startswith(
        "error box: Another tab or window of yours already has the t-SNE map of 1,500 points"), said
    assert refused.queue_seconds is None                   # no place in line for the second socket
    assert refused_at < ended["tab 1"]                     # told at once, while its first map was made
    for name, (result, _) in results.items():
        assert result.errors == [], (name, result.errors)
    assert results["tab 1"][1] == [] and results["someone"][1][:1] == [1]   # another address still queues
    assert ended["tab 1"] < ended["someone"]              # each when its map was drawn
