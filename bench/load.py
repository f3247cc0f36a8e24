"""Load test: 20 concurrent Chromium users drive every page against one local server.

    .venv/bin/python bench/load.py [--users 20] [--rounds 1] [--think 60] [--start-within 60]

Starts the server as the README does (streamlit run app.py) on 127.0.0.1 only, first runs one
user alone (the single-user reference, three rounds), then N users at once. Users behave like
people: each opens the app once and moves between pages with the sidebar (one session each),
reads a page for --think seconds before changing a widget, and they arrive within the first
--start-within seconds (0 and 0 give the zero-think-time stampede). Reports errors, p50/p95 of
input -> new figure drawn, and server RSS before/after. Bounded: every wait has a timeout and
the whole run stops after --budget seconds.

Which load script measures what: this one measures what only a browser shows (a figure drawn,
the page's JavaScript), but its Chromium clients share the server's cores and take most of
them, so it says little about the server's capacity. bench/load_protocol.py measures the server
alone (latency per step, its CPU seconds and memory) with protocol-level clients.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser_helpers import (  # noqa: E402
    CHROMIUM,
    FIGURE_CHANGED_JS,
    FLAGS,
    IDLE_JS,
    MARK_FIGURE_JS,
    RESET_IDLE_JS,
    free_port,
    start_server,
)


async def idle(page, plots: int, timeout: float = 120) -> None:
    await page.evaluate(RESET_IDLE_JS)
    await page.wait_for_function(IDLE_JS, arg=[plots, 500], timeout=timeout * 1000, polling=100)


async def figure_change(page, index: int, action) -> float:
    await page.evaluate(MARK_FIGURE_JS, index)
    start = time.perf_counter()
    await action()
    await page.wait_for_function(FIGURE_CHANGED_JS, arg=index, timeout=120_000, polling=20)
    return (time.perf_counter() - start) * 1000


async def lookup(page, i):
    box = page.get_by_label("Text (words separated by spaces)")
    text = ["The cat", "The dog is sleeping", "cat dog"][i % 3]   # never the opening text: a change
    return await figure_change(page, 0, lambda: _fill(box, text))


async def _fill(box, text):
    await box.fill(text)
    await box.press("Enter")


async def geometry(page, i):
    label = ["vector norm", "token kind", "token id"][i % 3]
    return await figure_change(page, 0, lambda: page.locator('[data-testid="stRadio"]').get_by_text(label, exact=True).click())


async def attention(page, i):
    return await figure_change(page, 2, lambda: page.get_by_text("Add positions", exact=True).click())


async def training(page, i):
    return await figure_change(page, 0, lambda: page.get_by_role("button", name="Step", exact=True).click())


async def models(page, i):
    box = page.get_by_label("Layer", exact=True).last   # the page's selector (the sidebar has none)
    async def change():
        await box.fill(str(1 + i % 4))
        await box.press("Enter")
    return await figure_change(page, 1, change)


SCENARIO = [("lookup?table=seed004", 4, lookup), ("geometry?table=seed004", 5, geometry),
            ("attention?table=seed004", 4, attention), ("training", 5, training),
            ("models?table=minilm", 3, models)]
TABLE_OPTIONS = {"seed004": "(seed 004)", "minilm": "MiniLM-L6"}   # text in the sidebar picker's option
TITLES = {"lookup": "Lookup:", "geometry": "Geometry of", "attention": "Attention: where",
          "training": "Training:", "models": "in a real model"}       # in each page's h1


async def open_page(page, base: str, path: str, plots: int, table: str | None) -> str | None:
    """Open a page as a person does: the first by its link, the next ones from the sidebar (the
    app stays loaded, one session per person), picking the page's table in the sidebar first
    if it needs another one. Returns the table now shown."""
    name, _, query = path.partition("?")
    wanted = query.removeprefix("table=") or table
    if table is None:
        await page.goto(f"{base}/{path}", timeout=120_000)
    else:
        if wanted != table:
            await page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').click()
            await page.get_by_role("option").filter(has_text=TABLE_OPTIONS[wanted]).click()
            await idle(page, 0)
        await page.locator(f'a[data-testid="stSidebarNavLink"][href$="/{name}"]').click()
    # the last page's figures stay on screen until the new page has run: wait for its title
    await page.locator("h1").filter(has_text=TITLES[name]).first.wait_for(timeout=120_000)
    await idle(page, plots)
    return wanted


async def user(browser, base: str, rounds: int, latencies: list, errors: list,
               think: float = 0.0, start_within: float = 0.0, seed: int = 0) -> None:
    """One person: opens each page (`open_page`), waits until it is drawn, reads it for `think`
    seconds (±50 %), changes one widget, and goes on. Arrives at a random time in start_within."""
    rng = random.Random(seed)
    await asyncio.sleep(rng.uniform(0, start_within))
    context = await browser.new_context(viewport={"width": 1280, "height": 1200})
    page = await context.new_page()
    table = None
    try:
        for round_number in range(rounds):
            for path, plots, action in SCENARIO:
                try:
                    table = await open_page(page, base, path, plots, table)
                    await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                    latencies.append((path.split("?")[0], await action(page, round_number)))
                    if await page.locator('[data-testid="stException"]').count():
                        errors.append(f"exception on {path}")
                except Exception as error:  # a timeout or a missing element is an error of the run
                    errors.append(f"{path}: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
    finally:
        await context.close()


def _client_category(process) -> str | None:
    import os

    name = process.info["name"] or ""
    if "chrom" in name:
        return "Chromium"
    if name == "node" or process.info["pid"] == os.getpid():
        return "Playwright driver + this script"
    return None


async def meter_client_cpu(totals: dict, stop: asyncio.Event, every: float = 0.5) -> None:
    """CPU seconds used by the load's own clients (the Chromium processes, Playwright's driver,
    this script) from now until stop, sampled per process: a closed page's renderer process
    takes its count with it, so each process's last sample is kept."""
    import psutil

    seen: dict[tuple[int, float], tuple[str, float]] = {}
    baseline: dict[tuple[int, float], float] | None = None   # what was used before the start
    while True:
        for process in psutil.process_iter(["name", "pid", "create_time"]):
            try:
                category = _client_category(process)
                if category:
                    seen[(process.info["pid"], process.info["create_time"])] = (
                        category, sum(process.cpu_times()[:2]))
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        if baseline is None:
            baseline = {key: seconds for key, (_, seconds) in seen.items()}
        totals.clear()
        for key, (category, seconds) in seen.items():
            totals[category] = totals.get(category, 0.0) + seconds - baseline.get(key, 0.0)
        if stop.is_set():
            return
        try:
            await asyncio.wait_for(stop.wait(), every)
        except asyncio.TimeoutError:
            pass


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


async def main(users: int, rounds: int, budget: float, think: float, start_within: float) -> str:
    import psutil
    from playwright.async_api import async_playwright

    port = free_port()
    process = start_server(port)
    server = psutil.Process(process.pid)
    base = f"http://127.0.0.1:{port}"
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            single, single_errors = [], []
            await asyncio.wait_for(user(browser, base, 1, [], []), budget)          # warm caches, load MiniLM
            # alone, reading time cannot change a latency: a short one keeps the run short
            # three rounds: a p95 of five latencies would be just the slowest one
            await asyncio.wait_for(user(browser, base, max(rounds, 3), single, single_errors, min(think, 1.0)), budget)
            rss_before = server.memory_info().rss / 1e6
            server_cpu_before = sum(server.cpu_times()[:2])
            client_cpu, stop_meter = {}, asyncio.Event()
            meter = asyncio.create_task(meter_client_cpu(client_cpu, stop_meter))
            many, many_errors = [], []
            started = time.time()
            try:
                await asyncio.wait_for(asyncio.gather(*(
                    user(browser, base, rounds, many, many_errors, think, start_within, seed)
                    for seed in range(users))), budget)
            except asyncio.TimeoutError:  # report what was measured, and say the run was cut
                many_errors.append(f"budget of {budget:.0f} s exceeded: the run was stopped")
            elapsed = time.time() - started
            rss_after = server.memory_info().rss / 1e6
            server_cpu = sum(server.cpu_times()[:2]) - server_cpu_before
            stop_meter.set()
            await meter
            await browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    one = [ms for _, ms in single]
    all_ = [ms for _, ms in many]
    p95_single, p95_many = percentile(one, 0.95), percentile(all_, 0.95)
    growth = (rss_after - rss_before) / users
    lines = [
        f"{users} concurrent users × {rounds} round{'s' if rounds != 1 else ''} × {len(SCENARIO)} pages, one server, 2 cores, {elapsed:.0f} s; "
        f"each user reads a page for {think:g} s (±50 %) before changing a widget and arrives within "
        f"the first {start_within:g} s (the single user: three rounds, reading for 1 s: alone, reading time changes no latency)",
        "",
        f"| measure | single user | {users} users | target | met |",
        "|---|---|---|---|---|",
        f"| errors | {len(single_errors)} | {len(many_errors)} | 0 | {'yes' if not many_errors else '**no**'} |",
        f"| input → figure p50 | {percentile(one, 0.5):,.0f} ms | {percentile(all_, 0.5):,.0f} ms | — | — |",
        f"| input → figure p95 | {p95_single:,.0f} ms | {p95_many:,.0f} ms | ≤ 3× single | "
        f"{'yes' if p95_many <= 3 * p95_single else '**no**'} ({p95_many / p95_single:.1f}×) |",
        f"| server RSS | {rss_before:,.0f} MB before | {rss_after:,.0f} MB after | ≤ 10 MB per extra session | "
        f"{'yes' if growth <= 10 else '**no**'} ({growth:.1f} MB) |",
        "",
        f"Where the 2 cores went during the {users}-user phase ({elapsed:.0f} s wall, {2 * elapsed:.0f} core-seconds): "
        f"Streamlit server {server_cpu:.0f} s; " + "; ".join(f"{name} {seconds:.0f} s" for name, seconds in client_cpu.items())
        + ". The clients share the server's 2 cores, which real users' browsers would not.",
        "",
        f"Per page, {users} users (p50 / p95 ms): " + "; ".join(
            f"{name} {percentile([m for n, m in many if n == name], 0.5):,.0f} / "
            f"{percentile([m for n, m in many if n == name], 0.95):,.0f}"
            for name in dict.fromkeys(n for n, _ in many)),
    ]
    if single_errors or many_errors:
        lines += ["", "Errors:"] + [f"- single user: {e}" for e in single_errors[:20]] + [f"- {e}" for e in many_errors[:20]]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--budget", type=float, default=900, help="seconds before the run is stopped")
    parser.add_argument("--think", type=float, default=60.0, help="seconds a user reads a page before acting")
    parser.add_argument("--start-within", type=float, default=60.0, help="users arrive within these seconds")
    options = parser.parse_args()
    report = asyncio.run(main(options.users, options.rounds, options.budget, options.think, options.start_within))
    print(report, flush=True)
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "load.md").write_text(report + "\n")
