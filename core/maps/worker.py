"""Maps are made in a child process: t-SNE and UMAP bring numba, LLVM, umap-learn, openTSNE and
scikit-learn (~250 MB resident, measured) that would otherwise stay in the server for good.

One child per server, started on first use, makes one map at a time, reports progress through
a pipe, and exits after IDLE_SECONDS without work, giving all of it back. A map that runs past
its time limit is stopped with the child; a child that dies takes no session with it.
"""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

from core.limits import MAP_TIME_LIMIT_S
from core.maps.layouts import MapResult, MapSettings

ROOT = Path(__file__).resolve().parents[2]     # the child runs from here, so `core` is importable
IDLE_SECONDS = 120.0        # a child with no work for this long exits (the next map starts another)
# The child yields the cores to the server's page runs: on a 2-core server a map's ~13 CPU s ran beside
# sixty students' clicks, and those who opened Maps meanwhile waited 1.6-5 s (p95) for a light page.
NICENESS = 10
Report = Callable[[float, str], None]


class MapProcessStopped(RuntimeError):
    """The map process ended in the middle of a job (killed, out of memory): the settings were not at
    fault, and the next job starts a new process."""


def _task(name: str, arguments: tuple, report: Report):
    """One job of the child: "map" (points, settings, pca_coords) -> MapResult, or "clusters"
    (coords, cluster settings) -> (n,) labels."""
    if name == "map":
        from core.maps.layouts import map_with_trust

        points, settings, pca_coords = arguments
        return map_with_trust(points, settings, report, pca_coords)
    from core.maps.clusters import find_clusters

    coords, settings = arguments
    report(0.1, f"finding clusters ({settings.method}) among {len(coords):,} points")
    labels = find_clusters(coords, settings)
    report(1.0, "done")
    return labels


def _serve(connection, idle_seconds: float) -> None:
    """The child: do the jobs it is sent until none comes for idle_seconds. Every message carries
    its job's number, so a reply to an abandoned job can never be taken for another's."""
    while connection.poll(idle_seconds):
        try:
            job, name, arguments = connection.recv()
        except EOFError:
            return
        connection.send((job, "started", None))
        try:
            result = _task(name, arguments, lambda done, what: connection.send((job, "progress", (done, what))))
            connection.send((job, "done", result))
        except ValueError as error:          # the user's settings or data: said to the user
            connection.send((job, "refused", str(error)))
        except Exception as error:           # a library failing: logged by the server
            connection.send((job, "failed", f"{type(error).__name__}: {error}"))


class MapWorker:
    """The server's map maker (thread-safe: one map at a time, others wait on `make`)."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS, time_limit: float = MAP_TIME_LIMIT_S) -> None:
        self._idle_seconds, self._time_limit = idle_seconds, time_limit
        self._lock = threading.Lock()
        self._process = None
        self._connection = None
        self._job = 0

    def busy(self) -> bool:
        return self._lock.locked()

    @property
    def child_pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def make(self, points: np.ndarray, settings: MapSettings, report: Report = lambda done, what: None,
             pca_coords: np.ndarray | None = None, ready: Callable[[], MapResult | None] = lambda: None) -> MapResult:
        """points (n, d) -> MapResult (with PCA's trustworthiness when pca_coords (n, k) are given).

        Waits its turn while calling `report` (so a Streamlit rerun can end the wait), then asks
        `ready()` whether someone made this map meanwhile. ValueError for settings or data that
        cannot be mapped and for a map past the time limit; MapProcessStopped when the child died
        during the job; RuntimeError when the child's library failed.
        Interrupted in any way (a rerun, a closed tab), the child is stopped: nothing of an
        abandoned job is left in the pipe.
        """
        return self._do("map", (np.ascontiguousarray(points, dtype=np.float32), settings, pca_coords), report, ready)

    def clusters(self, coords: np.ndarray, settings, report: Report = lambda done, what: None,
                 ready: Callable[[], np.ndarray | None] = lambda: None) -> np.ndarray:
        """coords (n, m) of a map -> (n,) cluster labels (core.maps.clusters.find_clusters), made in the
        child (scikit-learn stays out of the server). Errors and waiting as `make`."""
        return self._do("clusters", (np.asarray(coords, dtype=np.float64), settings), report, ready)

    def _do(self, name: str, arguments: tuple, report: Report, ready: Callable):
        while not self._lock.acquire(timeout=0.5):
            report(0.0, "waiting: another visitor's map is being made on this server")
        try:
            done = ready()
            if done is not None:
                return done
            return self._run(name, arguments, report)
        except BaseException:
            if not isinstance(sys.exc_info()[1], (ValueError, RuntimeError)):
                self.stop()
            raise
        finally:
            self._lock.release()

    def _run(self, name: str, arguments: tuple, report: Report):
        for attempt in range(2):     # a child that exited idle just as it was asked: start another
            self._start()
            self._job += 1
            started = False
            try:
                self._connection.send((self._job, name, arguments))
                started = self._started(report)
                return self._wait(report)
            except (EOFError, BrokenPipeError, ConnectionResetError):
                self.stop()
                if attempt or started:        # a child that died on the job itself is not asked again
                    raise MapProcessStopped("the map process stopped before it finished (it was ended or ran "
                                            "out of memory)") from None
        raise AssertionError("unreachable")

    def _started(self, report: Report) -> bool:
        kind, _ = self._receive(self._time_limit)
        return kind == "started"

    def _receive(self, timeout: float):
        """The next message of the current job as (kind, payload); older jobs' messages are dropped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self._connection.poll(left):
                self.stop()
                raise ValueError(f"the map took longer than {self._time_limit:.0f} s and was stopped: "
                                 "map fewer points or use fewer iterations")
            job, kind, payload = self._connection.recv()
            if job == self._job:
                return kind, payload

    def _wait(self, report: Report):
        deadline = time.monotonic() + self._time_limit
        while True:
            kind, payload = self._receive(deadline - time.monotonic())
            if kind == "progress":
                report(*payload)
            elif kind == "done":
                made = payload.embedded if isinstance(payload, MapResult) else payload
                made.flags.writeable = False      # the flag does not survive the pipe
                return payload
            elif kind == "refused":
                raise ValueError(payload)
            else:
                raise RuntimeError(payload)

    def _start(self) -> None:
        """`python -m core.maps.worker`, talking over one end of a socket pair. Not multiprocessing's
        spawn: it re-runs the parent's __main__ in the child, and in a Streamlit server __main__ is
        the page script being run (the child would run the app, or fail on it)."""
        if self._process is not None and self._process.poll() is None:
            return
        self.stop()
        self._connection, child_end = multiprocessing.Pipe()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "core.maps.worker", str(child_end.fileno()), str(self._idle_seconds)],
            cwd=ROOT, pass_fds=(child_end.fileno(),), stdin=subprocess.DEVNULL)
        child_end.close()
        # A child that exits on its own (idle) is reaped at once, not left defunct until the next map.
        threading.Thread(target=self._process.wait, name="map-worker-reaper", daemon=True).start()

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=10)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None


if __name__ == "__main__":      # the child: python -m core.maps.worker <socket fd> <idle seconds>
    from multiprocessing.connection import Connection

    os.nice(NICENESS)
    _serve(Connection(int(sys.argv[1])), float(sys.argv[2]))
