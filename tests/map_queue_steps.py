"""A protocol-client visitor pressing Maps' Draw and watching its place in the heavy-job line: shared
by the server tests of the line (tests/server/test_fair_queue.py, test_clear_cache.py)."""
from __future__ import annotations

import asyncio
import re
import time

from bench.protocol import Session

PLACE = re.compile(r"You are number (\d+) in the queue")


async def ask_for_map(session: Session, ended: dict, name: str, shown: asyncio.Event):
    """Press Draw; record when the map was drawn (else when the run that waits for it ended) and the places it was shown;
    `shown` is set once the page shows the job's status (a place in line or its progress)."""
    places: list[int] = []
    drawn: dict[str, float] = {}
    original = session._read_element

    def watch(delta, element, errors):
        text = original(delta, element, errors)
        if element.WhichOneof("type") == "plotly_chart" and name not in drawn:
            drawn[name] = time.monotonic()      # the map itself: the page may go on with sections below it
        if text and PLACE.search(text):
            places.append(int(PLACE.search(text).group(1)))
        if element.WhichOneof("type") == "progress":
            shown.set()
        return text

    session._read_element = watch
    try:
        result = await session.set("maps_draw", True)
    finally:
        session._read_element = original
    ended[name] = drawn.get(name, time.monotonic())
    return result, places
