"""Load test: 20 concurrent Chromium users drive every page against one local server.

    .venv/bin/python bench/load.py [--users 20] [--rounds 2]

Starts the server as the README does (streamlit run app.py) on 127.0.0.1 only, first runs one
user alone (the single-user reference), then N users at once. Reports errors, p50/p95 of
input -> new figure drawn, and server RSS before/after. Bounded: every wait has a timeout and
the whole run stops after --budget seconds.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, FLAGS, free_port, start_server  # noqa: E402

CHANGED = ("(args) => { const gd = document.querySelectorAll('.js-plotly-plot')[args[0]];"
           " return gd && JSON.stringify(gd.data) !== args[1]; }")


async def idle(page, plots: int, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    stable = None
    while time.time() < deadline:
        running = await page.locator('[data-testid="stStatusWidget"], [data-testid="stSpinner"]').count()
        drawn = await page.locator(".js-plotly-plot").count()
        if not running and drawn >= plots:
            stable = stable or time.time()
            if time.time() - stable > 0.5:
                return
        else:
            stable = None
        await asyncio.sleep(0.1)
    raise TimeoutError(f"page not idle ({plots} plots expected)")


async def figure_change(page, index: int, action) -> float:
    before = await page.evaluate(f"() => JSON.stringify(document.querySelectorAll('.js-plotly-plot')[{index}].data)")
    start = time.perf_counter()
    await action()
    await page.wait_for_function(CHANGED, arg=[index, before], timeout=120_000, polling=20)
    return (time.perf_counter() - start) * 1000


async def lookup(page, i):
    box = page.get_by_label("Text (words separated by spaces)")
    text = ["The cat", "The cat is sleeping", "cat dog"][i % 3]
    return await figure_change(page, 0, lambda: _fill(box, text))


async def _fill(box, text):
    await box.fill(text)
    await box.press("Enter")


async def geometry(page, i):
    label = ["vector norm", "token kind", "token id"][i % 3]
    return await figure_change(page, 0, lambda: page.get_by_text(label, exact=True).click())


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
            ("attention?table=seed004", 10, attention), ("training", 5, training),
            ("models?table=minilm", 3, models)]


async def user(browser, base: str, rounds: int, latencies: list, errors: list) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 1200})
    page = await context.new_page()
    try:
        for round_number in range(rounds):
            for path, plots, action in SCENARIO:
                try:
                    await page.goto(f"{base}/{path}", timeout=120_000)
                    await idle(page, plots)
                    latencies.append((path.split("?")[0], await action(page, round_number)))
                    if await page.locator('[data-testid="stException"]').count():
                        errors.append(f"exception on {path}")
                except Exception as error:  # a timeout or a missing element is an error of the run
                    errors.append(f"{path}: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
    finally:
        await context.close()


def _chromium_cpu() -> float:
    """CPU seconds used so far by every Chromium process (the load's own browsers)."""
    import psutil

    total = 0.0
    for process in psutil.process_iter(["name"]):
        try:
            if "chrom" in (process.info["name"] or ""):
                total += sum(process.cpu_times()[:2])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


async def main(users: int, rounds: int, budget: float) -> str:
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
            await asyncio.wait_for(user(browser, base, rounds, single, single_errors), budget)
            rss_before = server.memory_info().rss / 1e6
            server_cpu_before = sum(server.cpu_times()[:2])
            browser_cpu_before = _chromium_cpu()
            many, many_errors = [], []
            started = time.time()
            try:
                await asyncio.wait_for(asyncio.gather(*(user(browser, base, rounds, many, many_errors)
                                                        for _ in range(users))), budget)
            except asyncio.TimeoutError:  # report what was measured, and say the run was cut
                many_errors.append(f"budget of {budget:.0f} s exceeded: the run was stopped")
            elapsed = time.time() - started
            rss_after = server.memory_info().rss / 1e6
            server_cpu = sum(server.cpu_times()[:2]) - server_cpu_before
            browser_cpu = _chromium_cpu() - browser_cpu_before
            await browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    one = [ms for _, ms in single]
    all_ = [ms for _, ms in many]
    p95_single, p95_many = percentile(one, 0.95), percentile(all_, 0.95)
    growth = (rss_after - rss_before) / users
    lines = [
        f"{users} concurrent users × {rounds} rounds × {len(SCENARIO)} pages, one server, 2 cores, {elapsed:.0f} s",
        "",
        "| measure | single user | 20 users | target | met |",
        "|---|---|---|---|---|",
        f"| errors | {len(single_errors)} | {len(many_errors)} | 0 | {'yes' if not many_errors else '**no**'} |",
        f"| input → figure p50 | {percentile(one, 0.5):,.0f} ms | {percentile(all_, 0.5):,.0f} ms | — | — |",
        f"| input → figure p95 | {p95_single:,.0f} ms | {p95_many:,.0f} ms | ≤ 3× single | "
        f"{'yes' if p95_many <= 3 * p95_single else '**no**'} ({p95_many / p95_single:.1f}×) |",
        f"| server RSS | {rss_before:,.0f} MB before | {rss_after:,.0f} MB after | ≤ 10 MB per extra session | "
        f"{'yes' if growth <= 10 else '**no**'} ({growth:.1f} MB) |",
        "",
        f"Where the 2 cores went during the 20-user phase ({elapsed:.0f} s wall, {2 * elapsed:.0f} core-seconds): "
        f"Streamlit server {server_cpu:.0f} s, the 20 Chromium pages {browser_cpu:.0f} s.",
        "",
        "Per page, 20 users (p50 / p95 ms): " + "; ".join(
            f"{name} {percentile([m for n, m in many if n == name], 0.5):,.0f} / "
            f"{percentile([m for n, m in many if n == name], 0.95):,.0f}"
            for name in dict.fromkeys(n for n, _ in many)),
    ]
    if many_errors:
        lines += ["", "Errors:"] + [f"- {e}" for e in many_errors[:20]]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=900, help="seconds before the run is stopped")
    options = parser.parse_args()
    report = asyncio.run(main(options.users, options.rounds, options.budget))
    print(report)
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "load.md").write_text(report + "\n")
