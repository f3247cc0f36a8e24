"""Six visitors asking six different heavy jobs at once, and a seventh doing light steps meanwhile
(issue 32): the server's peak memory (server + map process) and the light steps' latency, before
and during the heavy mix, in one run.

    .venv/bin/python bench/heavy_mix.py [--out bench/results] [--light-rounds 6]

The visitors speak Streamlit's protocol (bench/protocol.py), each from its own address
(X-Forwarded-For, trusted from 127.0.0.1), so the per-visitor limit does not merge them. Each
opens its page and presses the job's button: the verification of 48 under-trained candidates,
activation patching, layer skipping, the massive-activation intervention (SmolLM2), and two
3,000-row maps (MiniLM, SmolLM2). The server is started with serve.py and all three built-in
tables warmed, as a public server runs. Memory is sampled every 0.25 s from /proc.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench import server_stats  # noqa: E402
from bench.protocol import Session  # noqa: E402

HEAVY = (   # name, page, query, the button's key
    ("verification", "hidden", "table=smollm2&nver=48", "hid_verify"),
    ("patching", "why", "table=smollm2&method=patching", "why_patch_run"),
    ("skipping", "why", "table=smollm2&method=skipping", "why_skip_run"),
    ("massive", "why", "table=smollm2&method=massive", "why_mass_run"),
    ("map minilm", "maps", "table=minilm&n=3000&seed=5", "maps_draw"),
    ("map smollm2", "maps", "table=smollm2&n=3000&seed=5", "maps_draw"),
)
LIGHT = (("geometry", "table=seed004"), ("models", "table=smollm2"), ("lookup", "table=minilm&text=a+cat"), ("hidden", "table=smollm2"))


def visitor(number: int) -> dict[str, str]:
    return {"X-Forwarded-For": f"10.0.0.{number}"}


async def heavy_visitor(url: str, number: int, name: str, page: str, query: str, button: str) -> dict:
    session = Session(url, timeout=900, headers=visitor(number))
    await session.connect()
    try:
        opened = await session.open(page, query)
        if button not in session.widgets:
            return {"name": name, "errors": opened.errors + [f"no button {button!r} on {page}?{query}"]}
        pressed = await session.set(button, True)
        return {"name": name, "seconds": round(pressed.seconds, 1), "errors": opened.errors + pressed.errors,
                "queued_seconds": pressed.queue_seconds}
    finally:
        await session.close()


async def light_visitor(url: str, rounds: int) -> list[dict]:
    """Each round opens the LIGHT links in turn, each in a new session (a link opened is a new
    session; within one session the sidebar's table wins over a link's table=); returns every
    step's latency."""
    steps = []
    for _ in range(rounds):
        for page, query in LIGHT:
            session = Session(url, timeout=300, headers=visitor(99))
            await session.connect()
            try:
                result = await session.open(page, query)
            finally:
                await session.close()
            steps.append({"page": page, "seconds": result.seconds, "errors": result.errors})
            await asyncio.sleep(0.5)
    return steps


async def sample_memory(pid: int, stop: asyncio.Event, samples: list[tuple[float, float, float]]) -> None:
    start = time.monotonic()
    while not stop.is_set():
        samples.append((time.monotonic() - start, server_stats.rss_mb(pid), server_stats.family_rss_mb(pid)))
        await asyncio.sleep(0.25)


def summary(steps: list[dict]) -> dict:
    seconds = sorted(step["seconds"] for step in steps)
    if not seconds:
        return {}
    rank = max(1, -(-len(seconds) * 95 // 100))
    return {"steps": len(seconds), "p50": round(statistics.median(seconds), 2), "p95": round(seconds[rank - 1], 2),
            "max": round(seconds[-1], 2), "errors": [error for step in steps for error in step["errors"]][:5]}


async def measure(url: str, pid: int, light_rounds: int) -> dict:
    quiet = await light_visitor(url, light_rounds)          # the light steps alone, warm
    idle_rss = server_stats.family_rss_mb(pid)
    stop, samples = asyncio.Event(), []
    sampler = asyncio.create_task(sample_memory(pid, stop, samples))
    heavy = [asyncio.create_task(heavy_visitor(url, number, *job)) for number, job in enumerate(HEAVY, 1)]
    await asyncio.sleep(3)                                  # every job asked before the light steps
    during = await light_visitor(url, light_rounds)
    jobs = await asyncio.gather(*heavy)
    stop.set()
    await sampler
    return {"idle_mb": round(idle_rss), "peak_server_mb": round(max(s[1] for s in samples)),
            "peak_family_mb": round(max(s[2] for s in samples)), "heavy": jobs,
            "light_alone": summary(quiet), "light_during_heavy": summary(during),
            "heavy_seconds": round(samples[-1][0], 1)}


def warm_up(url: str) -> None:
    async def wait():
        session = Session(url, timeout=600)
        await session.connect()
        try:
            deadline = time.monotonic() + 900
            while time.monotonic() < deadline:
                await session.open("", "")
                if not any("still warming up" in text for text in session.texts):
                    return
                await asyncio.sleep(2)
            raise RuntimeError("the warm-up did not finish in 900 s")
        finally:
            await session.close()
    asyncio.run(wait())


def main() -> None:
    from browser_helpers import free_port, start_server, stop_server

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    parser.add_argument("--light-rounds", type=int, default=6)
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, {"EMBEDDING_LENS_WARM": "minilm,smollm2,glove-50d"}, script="serve.py")
    url = f"http://127.0.0.1:{port}"
    try:
        warm_up(url)
        result = asyncio.run(measure(url, server.pid, args.light_rounds))
    finally:
        stop_server(server)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "heavy_mix.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
