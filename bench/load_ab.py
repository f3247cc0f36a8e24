"""Before and after in one run: the same class on two servers at once, one serving an older
revision of the app, one this tree, so both meet the same machine (a shared one changes by the minute).

    .venv/bin/python bench/load_ab.py --before 7a465aa --scenarios 10 [--profile]

The older revision is exported with `git archive` into a temporary folder and served by the same
Python; both servers get the same students (bench/load_protocol.py's scenario, the same seed) at the
same time, after each one's teacher has waited for its warm-up. Reports, per server, the load
client's table (CPU from /proc: the server and its map process) and, with --profile, the CPU of its
script runs per page (bench/load_profile.py: full runs and fragment reruns apart). Writes
load_ab.md and load_ab.json into --out.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench import load_protocol  # noqa: E402
from bench.rounds import FULL_ROUND, QUICK_ROUND  # noqa: E402


def export(revision: str, folder: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def serve(tree: Path, port: int, profile: Path | None, log: Path) -> subprocess.Popen:
    entry = ["-m", "bench.load_profile", str(profile)] if profile else ["-m", "streamlit"]
    command = [sys.executable, *entry, "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true"]
    process = subprocess.Popen(command, cwd=tree, stdout=log.open("w"), stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONPATH": str(tree)})
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"the server of {tree} did not start on port {port} (see {log})")


def page_names() -> dict[str, str]:
    """Streamlit's page hash -> url path: a run from the URL (an opened page) carries the page's
    name, a widget's rerun only its hash."""
    import re

    from streamlit.util import calc_hash

    paths = ["home", *re.findall(r'url_path="([^"]+)"', (ROOT / "ui" / "shell.py").read_text())]
    return {calc_hash(path): path for path in paths}


def per_page(profile: Path) -> dict:
    """Script-thread CPU per page and kind of run from the profile's sidecar: runs, CPU s, ms a run.
    "page (open)": the page opened from its URL; "(widget)": a widget's rerun of the whole page;
    "(fragment)": a widget's rerun of its section only."""
    names, found = page_names(), {}
    for page, value in json.loads(Path(str(profile) + ".runs.json").read_text()).items():
        base, fragment = page.removesuffix(" (fragment)"), page.endswith(" (fragment)")
        kind = "fragment" if fragment else ("widget" if base in names else "open")
        found[f"{names.get(base, base)} ({kind})"] = {**value, "ms_per_run": 1000 * value["cpu_s"] / value["runs"]}
    return found


async def both(args, urls_pids) -> list[dict]:
    steps = QUICK_ROUND if args.quick else FULL_ROUND
    await asyncio.gather(*(load_protocol.teacher_opens(url) for url, _ in urls_pids))
    return list(await asyncio.gather(*(
        load_protocol.scenario(url, pid, args.sessions, steps, args.arrive, args.think, args.seed, args.timeout)
        for url, pid in urls_pids)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the older git revision")
    parser.add_argument("--scenarios", "--sessions", dest="sessions", type=int, default=10)
    parser.add_argument("--arrive", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="toy tables, no map (seconds)")
    parser.add_argument("--profile", action="store_true", help="profile both servers' script runs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    if args.quick:
        args.arrive, args.think = min(args.arrive, 1.0), min(args.think, 0.2)
    from browser_helpers import free_port, stop_server

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lens-before-") as folder:
        trees = {"before": export(args.before, Path(folder)), "after": ROOT}
        servers, profiles = {}, {}
        try:
            for name, tree in trees.items():
                profiles[name] = args.out / f"load_ab_{name}.prof" if args.profile else None
                servers[name] = serve(tree, free_port(), profiles[name], args.out / f"load_ab_{name}.log")
            urls = [(f"http://127.0.0.1:{servers[n].args[servers[n].args.index('--server.port') + 1]}", servers[n].pid)
                    for n in trees]
            results = asyncio.run(both(args, urls))
        finally:
            for server in servers.values():
                stop_server(server)
    report = {name: result for name, result in zip(trees, results)}
    text = [f"Before ({args.before}) and after (this tree) in one run: {args.sessions} sessions on each server at once", ""]
    for name, result in report.items():
        if profiles[name]:
            result["pages"] = per_page(profiles[name])
        text += [f"## {name}", "", load_protocol.report([result], f"{name}, {args.sessions} sessions")]
        for page, value in sorted(result.get("pages", {}).items(), key=lambda item: -item[1]["cpu_s"]):
            text.append(f"- {page}: {value['runs']} runs, {value['cpu_s']:.1f} CPU s, {value['ms_per_run']:.0f} ms a run")
        text.append("")
    (args.out / "load_ab.json").write_text(json.dumps(report, indent=1))
    (args.out / "load_ab.md").write_text("\n".join(text) + "\n")
    print("\n".join(text))


if __name__ == "__main__":
    main()
