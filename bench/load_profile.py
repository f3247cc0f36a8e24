"""`streamlit run` with every page run profiled: where a page run spends the server's CPU.

    .venv/bin/python -m bench.load_profile STATS_FILE run app.py --server.port 8501 ...
    .venv/bin/python bench/load_protocol.py --profile --sessions 3   # starts its servers this way

Each script run (a page run, a fragment's rerun) is profiled in its own script thread with
cProfile on that thread's CPU clock (`time.thread_time`), so time the thread spent waiting for
the cores (a shared machine) or for a heavy job's thread does not count. The profiles of all runs
are summed and written to STATS_FILE (pstats format) every few seconds and at exit, with a
sidecar STATS_FILE.runs.json: per page, its runs and their CPU seconds. What is not in a script
thread (the websocket loop serialising messages, heavy-job and warm-up threads, the map process)
is not profiled here; the load client measures the whole process from /proc.
"""
from __future__ import annotations

import atexit
import cProfile
import json
import pstats
import sys
import threading
import time

DUMP_SECONDS = 5.0


class RunProfiles:
    """The summed profile of every script run, and per page its runs and CPU seconds."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.stats: pstats.Stats | None = None
        self.pages: dict[str, list[float]] = {}        # page script hash or name -> CPU s per run

    def add(self, profile: cProfile.Profile, page: str, cpu: float) -> None:
        profile.create_stats()
        with self.lock:
            if self.stats is None:
                self.stats = pstats.Stats(profile)
            else:
                self.stats.add(profile)
            self.pages.setdefault(page, []).append(cpu)

    def dump(self) -> None:
        with self.lock:
            if self.stats is not None:
                self.stats.dump_stats(self.path)
            runs = {page: {"runs": len(cpus), "cpu_s": sum(cpus)} for page, cpus in self.pages.items()}
        with open(self.path + ".runs.json", "w") as handle:
            json.dump(runs, handle, indent=1)


def install(path: str) -> RunProfiles:
    """Wrap ScriptRunner._run_script so each call runs under a profile of its own thread."""
    from streamlit.runtime.scriptrunner import script_runner

    profiles = RunProfiles(path)
    original = script_runner.ScriptRunner._run_script

    def profiled(self, rerun_data):
        profile = cProfile.Profile(time.thread_time)
        page = rerun_data.page_name or rerun_data.page_script_hash or "home"
        if rerun_data.fragment_id_queue:
            page += " (fragment)"
        start = time.thread_time()
        profile.enable()
        try:
            return original(self, rerun_data)
        finally:
            profile.disable()
            profiles.add(profile, page, time.thread_time() - start)

    script_runner.ScriptRunner._run_script = profiled

    def keep_dumping():
        while True:
            time.sleep(DUMP_SECONDS)
            profiles.dump()

    threading.Thread(target=keep_dumping, name="profile-dump", daemon=True).start()
    atexit.register(profiles.dump)
    return profiles


def top_functions(path: str, count: int = 40) -> str:
    """The `count` functions with the most cumulative CPU over all profiled runs, as text."""
    import io

    out = io.StringIO()
    stats = pstats.Stats(path, stream=out)
    stats.sort_stats("cumulative").print_stats(count)
    stats.sort_stats("tottime").print_stats(count)
    return out.getvalue()


def main() -> None:
    path, arguments = sys.argv[1], sys.argv[2:]
    install(path)
    from streamlit.web import cli

    sys.argv = ["streamlit", *arguments]
    cli.main()


if __name__ == "__main__":
    main()
