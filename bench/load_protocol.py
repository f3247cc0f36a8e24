"""Load test of the server alone: N students speak Streamlit's websocket protocol, no browser.

    .venv/bin/python bench/load_protocol.py [--scenarios 1,10,30,60] [--arrive 60] [--think 5]
    .venv/bin/python bench/load_protocol.py --quick          # 2 sessions, toy tables, seconds
    .venv/bin/python bench/load_protocol.py --url http://127.0.0.1:8501 --pid 1234   # a running server

Which script measures what: this one measures the *server* — its latency per step, its CPU
seconds and memory — with clients that cost almost nothing, so 60 sessions fit on the server's
own machine. `bench/load.py` drives headless Chromium and measures what only a browser shows
(figures drawn, the page's own JavaScript), but its browsers take most of the machine's CPU.

Each scenario starts a fresh server (unless --url names one); a teacher opens the app first and
waits until its warm-up (EMBEDDING_LENS_WARM, ui/server/warm.py) has finished (--cold: no teacher, the
class meets the fresh server); then N students arrive at random within --arrive seconds, each doing the
round of bench/rounds.py with --think seconds (±50 %) between steps, one session each, and keeps
every session connected until the last student is done. Latency of a step: from sending the
change to the end of the run it caused. Reports per step p50/p95/max and errors, the server's
CPU seconds (server + map process) and its share of the run, CPU per page run, RSS before, at
the peak and with every session connected, and for heavy jobs the wait in the queue apart from
the compute. Writes load_protocol.json, load_protocol.md and load_protocol.png into --out.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time

import websockets
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench import server_stats  # noqa: E402
from bench.chart import line_chart  # noqa: E402
from bench.protocol import Session, StepResult  # noqa: E402
from bench.rounds import FULL_ROUND, QUICK_ROUND, Step, take  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (no interpolation: with 10 values p95 is the largest)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * share // 1))
    return ordered[int(rank) - 1]


async def student(url: str, steps: tuple[Step, ...], delay: float, think: float, rng: random.Random,
                  finished: asyncio.Event, done: asyncio.Event, timeout: float) -> list[StepResult]:
    """One person: arrives after `delay` s, does the round, sets `finished`, stays connected
    until `done` (the whole class is measured connected)."""
    await asyncio.sleep(delay)
    session = Session(url, timeout=timeout)
    results: list[StepResult] = []
    try:
        await session.connect()
        for index, step in enumerate(steps):
            if index:
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))
            result = await take(session, step)
            results.append(result)
            if any("connection closed" in error for error in result.errors):
                break
        finished.set()
        await done.wait()
    except (OSError, asyncio.TimeoutError, websockets.WebSocketException) as error:
        results.append(StepResult("connect", 0.0, 0, [f"could not connect: {error}"]))
    finally:
        finished.set()
        await session.close()
    return results


async def teacher_opens(url: str, timeout: float = 900.0) -> float:
    """The teacher opens the app before sharing the link: its first run starts the server's
    warm-up (ui/server/warm.py); wait until no page says it is still warming up. Returns the seconds."""
    start = time.perf_counter()
    session = Session(url, timeout=timeout)
    await session.connect()
    try:
        while True:
            await session.open("", "")
            if not any("still warming up" in text for text in session.texts):
                return time.perf_counter() - start
            if time.perf_counter() - start > timeout:
                raise RuntimeError(f"the server was still warming up after {timeout:.0f} s")
            await asyncio.sleep(2.0)
    finally:
        await session.close()


async def sample_memory(pid: int, peak: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], server_stats.rss_mb(pid))
        except OSError:
            return
        await asyncio.sleep(0.5)


async def scenario(url: str, pid: int | None, sessions: int, steps: tuple[Step, ...], arrive: float,
                   think: float, seed: int, timeout: float) -> dict:
    rng = random.Random(seed)
    delays = sorted(rng.uniform(0, arrive) for _ in range(sessions)) if sessions > 1 else [0.0]
    rss_before = server_stats.rss_mb(pid) if pid else 0.0
    cpu_before = server_stats.cpu_seconds(pid) if pid else 0.0
    children_before = server_stats.children_cpu_seconds(pid) if pid else 0.0
    start = time.perf_counter()
    done, stop = asyncio.Event(), asyncio.Event()
    peak = [rss_before]
    sampler = asyncio.create_task(sample_memory(pid, peak, stop) if pid else asyncio.sleep(0))
    finished = [asyncio.Event() for _ in delays]
    tasks = [asyncio.create_task(student(url, steps, delay, think, random.Random(seed * 1000 + i), finished[i],
                                         done, timeout)) for i, delay in enumerate(delays)]
    for event in finished:              # everyone through the round: measure with every session connected
        await event.wait()
    wall = time.perf_counter() - start
    cpu = server_stats.cpu_seconds(pid) - cpu_before if pid else 0.0      # no pid: a server elsewhere
    children = server_stats.children_cpu_seconds(pid) - children_before if pid else 0.0
    rss_connected = server_stats.rss_mb(pid) if pid else 0.0
    family_rss = server_stats.family_rss_mb(pid) if pid else 0.0
    done.set()
    results = [result for task in await asyncio.gather(*tasks) for result in task]
    stop.set()
    await sampler
    result = summarise(sessions, steps, results, wall, cpu, rss_before, peak[0], rss_connected, family_rss)
    result["map_process_cpu_s"] = children        # the shared maps' CPU (the map process), in server_cpu_s too
    runs = result["page_runs"]
    result["cpu_ms_per_run_without_maps"] = 1000 * (cpu - children) / runs if runs else None
    return result


def summarise(sessions, steps, results, wall, cpu, rss_before, rss_peak, rss_connected, family_rss) -> dict:
    by_step = {}
    for step in steps:
        own = [r for r in results if r.name == step.name and not r.skipped]
        times = [r.seconds for r in own if not r.errors]
        waits = [r.queue_seconds for r in own if r.queue_seconds is not None]
        by_step[step.name] = {
            "kind": step.kind, "count": len(own), "errors": sum(1 for r in own if r.errors),
            "skipped": sum(1 for r in results if r.name == step.name and r.skipped),
            "p50": statistics.median(times) if times else None,
            "p95": percentile(times, 0.95) if times else None,
            "max": max(times) if times else None,
            "queue_p50": statistics.median(waits) if waits else None,
            "queue_max": max(waits) if waits else None,
            "compute_p50": statistics.median([r.seconds - (r.queue_seconds or 0) for r in own if not r.errors])
            if times else None,
        }
    errors = [f"{r.name}: {e}" for r in results for e in r.errors]
    runs = sum(r.runs for r in results)
    light = [r.seconds for r in results if not r.errors and _kind(steps, r.name) == "light"]
    return {
        "sessions": sessions, "wall_s": wall, "server_cpu_s": cpu, "cpu_share_of_one_core": cpu / wall,
        "page_runs": runs, "cpu_ms_per_run": 1000 * cpu / runs if runs else None,
        "rss_before_mb": rss_before, "rss_peak_mb": rss_peak, "rss_connected_mb": rss_connected,
        "rss_per_session_mb": (rss_connected - rss_before) / sessions, "family_rss_mb": family_rss,
        "light_p50": statistics.median(light) if light else None,
        "light_p95": percentile(light, 0.95) if light else None,
        "steps": by_step, "errors": errors,
        "complete_rounds": sum(1 for r in results if r.name == steps[-1].name and not r.errors),
        "heavy_jobs": _heavy_jobs(results, steps),
    }


def _heavy_jobs(results, steps) -> dict:
    """Heavy steps: how many waited in line, and the wait apart from the whole step."""
    heavy = [r for r in results if _kind(steps, r.name) == "heavy" and not r.skipped and not r.errors]
    waits = [r.queue_seconds for r in heavy if r.queue_seconds is not None]
    return {"asked": len(heavy), "waited_in_line": len(waits),
            "wait_p50": statistics.median(waits) if waits else None, "wait_max": max(waits) if waits else None,
            "compute_p50": statistics.median([r.seconds - (r.queue_seconds or 0) for r in heavy]) if heavy else None}


def _kind(steps, name) -> str:
    return next((s.kind for s in steps if s.name == name), "")


def seconds(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def report(runs: list[dict], note: str) -> str:
    lines = [f"Protocol load run ({note})", ""]
    lines.append("| sessions | wall s | server CPU s (map process) | CPU share (1 core = 100 %) | page runs | "
                 "CPU ms / run (without the map process) | RSS before → peak → all connected MB | RSS / session MB | "
                 "light p50 / p95 s | errors |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        apart = run.get("cpu_ms_per_run_without_maps")
        lines.append(f"| {run['sessions']} | {run['wall_s']:.0f} | {run['server_cpu_s']:.1f} "
                     f"({run.get('map_process_cpu_s', 0.0):.1f}) | "
                     f"{100 * run['cpu_share_of_one_core']:.0f} % | {run['page_runs']} | "
                     f"{_ms(run)} ({'–' if apart is None else f'{apart:.0f}'}) | "
                     f"{run['rss_before_mb']:.0f} → {run['rss_peak_mb']:.0f} → {run['rss_connected_mb']:.0f} | "
                     f"{run['rss_per_session_mb']:.1f} | "
                     f"{seconds(run['light_p50'])} / {seconds(run['light_p95'])} | {len(run['errors'])} |")
    lines += ["", "Per step, seconds (p50 / p95 / max; heavy steps: time in the queue p50 / max apart):", ""]
    header = "| step | kind | " + " | ".join(f"{run['sessions']} sessions" for run in runs) + " |"
    lines += [header, "|---|---|" + "---|" * len(runs)]
    for name, first in runs[0]["steps"].items():
        cells = []
        for run in runs:
            step = run["steps"][name]
            cell = f"{seconds(step['p50'])} / {seconds(step['p95'])} / {seconds(step['max'])}"
            if step["queue_max"] is not None:
                cell += f" (queue {seconds(step['queue_p50'])} / {seconds(step['queue_max'])})"
            if step["errors"]:
                cell += f" · {step['errors']} err"
            if step["skipped"]:
                cell += f" · {step['skipped']} found it made"
            cells.append(cell)
        lines.append(f"| {name} | {first['kind']} | " + " | ".join(cells) + " |")
    for run in runs:
        jobs = run["heavy_jobs"]
        if jobs["asked"]:
            lines.append(f"- {run['sessions']} sessions: {jobs['asked']} heavy steps waited for a job, "
                         f"{jobs['waited_in_line']} of them with a place in the queue shown (queue wait p50 "
                         f"{seconds(jobs['wait_p50'])} s, max {seconds(jobs['wait_max'])} s); the rest of the "
                         f"step (compute, or waiting for a shared job already running) p50 {seconds(jobs['compute_p50'])} s")
    for run in runs:
        for error in run["errors"][:10]:
            lines.append(f"- {run['sessions']} sessions: {error}")
    return "\n".join(lines) + "\n"


def _ms(run) -> str:
    return "–" if run["cpu_ms_per_run"] is None else f"{run['cpu_ms_per_run']:.0f}"


def chart(runs: list[dict], path: Path) -> Path:
    series: dict[str, list[tuple[float, float]]] = {}
    for run in runs:
        for name, key in (("light steps, pooled", "light_p95"),):
            if run[key] is not None:
                series.setdefault(name, []).append((run["sessions"], run[key]))
        for kind in ("load", "heavy"):
            values = [s["p95"] for s in run["steps"].values() if s["kind"] == kind and s["p95"] is not None]
            if values:
                series.setdefault(f"{kind} steps, worst", []).append((run["sessions"], max(values)))
        worst = [s["p95"] for s in run["steps"].values() if s["kind"] == "light" and s["p95"] is not None]
        if worst:
            series.setdefault("worst light step", []).append((run["sessions"], max(worst)))
    return line_chart(path, "p95 latency per step against sessions (protocol client, server alone)",
                      "sessions arriving within the arrival window", "p95, seconds", series)


def start(port: int, env: dict, profile: Path | None = None):
    """A fresh server; with `profile`, every page run is profiled into that file (bench/load_profile.py)."""
    from browser_helpers import start_server
    if profile is None:
        return start_server(port, env)
    return start_server(port, env, module=["bench.load_profile", str(profile)])


def least_seconds(args, steps) -> float:
    """The time no server can beat: each scenario's last arrival and its round's think times."""
    rounds = (len(steps) - 1) * args.think
    return sum((args.arrive if sessions > 1 else 0.0) + rounds for sessions in args.sessions)


async def run_all(args, written=lambda runs: None) -> list[dict]:
    from browser_helpers import free_port, stop_server
    steps = QUICK_ROUND if args.quick else FULL_ROUND
    runs = []
    began = time.perf_counter()
    print(f"scenarios {', '.join(map(str, args.sessions))} sessions: at least {least_seconds(args, steps) / 60:.1f} "
          "minutes of arrivals and think time, plus each server's start and warm-up and the steps themselves",
          flush=True)
    for sessions in args.sessions:
        server = None
        if args.url:
            url, pid = args.url, args.pid
        else:
            port = free_port()
            env = {"EMBEDDING_LENS_WARM": args.warm} if args.warm else {}
            profile = args.out / f"load_profile_{sessions}.prof" if args.profile else None
            if profile is not None:
                args.out.mkdir(parents=True, exist_ok=True)
            server = start(port, env, profile)
            url, pid = f"http://127.0.0.1:{port}", server.pid
        try:
            warm_seconds = None if args.cold else await teacher_opens(url)
            result = await scenario(url, pid, sessions, steps, args.arrive, args.think, args.seed, args.timeout)
            result["warm_up_s"] = warm_seconds
        finally:
            if server is not None:
                stop_server(server)
        runs.append(result)
        written(runs)                       # a later scenario that fails leaves the earlier ones written
        print(f"{sessions} sessions: light p95 {seconds(result['light_p95'])} s, "
              f"{len(result['errors'])} errors, server CPU {result['server_cpu_s']:.0f} s, "
              f"{_ms(result)} ms per page run; {(time.perf_counter() - began) / 60:.1f} min so far", flush=True)
    return runs


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", "--sessions", dest="sessions", default="1,10,30,60",
                        help="comma-separated session counts, one scenario (a fresh server) each")
    parser.add_argument("--arrive", type=float, default=60.0, help="students arrive within these seconds")
    parser.add_argument("--think", type=float, default=5.0, help="seconds between a student's steps (±50 %%)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a step may take before it counts as an error")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cold", action="store_true",
                        help="the class arrives at once on a fresh server (default: a teacher opened the app first "
                             "and the warm-up of EMBEDDING_LENS_WARM finished)")
    parser.add_argument("--quick", action="store_true", help="2 sessions, toy tables, short think and arrival")
    parser.add_argument("--url", help="a running server instead of a fresh one per scenario")
    parser.add_argument("--pid", type=int, help="with --url: the server's process id (for CPU and memory)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--warm", default="",
                        help="EMBEDDING_LENS_WARM for the servers started (default: the server's own default)")
    parser.add_argument("--profile", action="store_true",
                        help="profile every page run of the servers started (bench/load_profile.py): "
                             "load_profile_N.prof (+ .runs.json, per page) in --out")
    parser.add_argument("--note", default="", help="what the machine was doing (said in the report)")
    args = parser.parse_args(argv)
    args.sessions = [int(n) for n in str(args.sessions).split(",") if n.strip()]
    if args.quick:
        args.sessions = [2] if args.sessions == [1, 10, 30, 60] else args.sessions
        args.arrive, args.think = min(args.arrive, 1.0), min(args.think, 0.2)
    if args.url and not args.pid:
        parser.error("--url needs --pid (the server's process, for its CPU time and memory)")
    return args


def main(argv=None) -> list[dict]:
    args = parse_args(argv)
    note = args.note or f"arrival within {args.arrive:g} s, think {args.think:g} s"

    def write(runs: list[dict]) -> str:
        args.out.mkdir(parents=True, exist_ok=True)
        text = report(runs, note)
        (args.out / "load_protocol.md").write_text(text)
        (args.out / "load_protocol.json").write_text(json.dumps(runs, indent=1))
        chart(runs, args.out / "load_protocol.png")
        return text

    runs = asyncio.run(run_all(args, write))
    print(write(runs) if runs else "no scenario finished")
    return runs


if __name__ == "__main__":
    main()
