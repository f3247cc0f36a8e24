"""Heavy work, fairly shared: one first-in-first-out line of jobs with a server-wide limit.

A heavy job (a map, ranking every head of a model) takes seconds to minutes and much memory; a
class of thirty asking at once must neither run thirty of them together (the server would run
out of memory) nor let whoever asks most often go first. So:
- jobs start in the order they were asked for (a ticket number each), at most `limit` at a time
  and, while others run, only if their declared memory fits beside them (a job alone always runs);
- a session has at most one job queued or running: asking for another while one waits takes the
  old one out of the line (the new one goes to the back); while one runs, the new one is refused;
- a visitor (a client address: all its tabs and sockets) has at most `visitor_limit` jobs it asked
  for queued or running: a new job from its other sessions is refused until one ends, so one
  stranger holding N websockets cannot queue N long jobs ahead of everyone;
- identical requests (same key) are made once: a second asker joins the job already in line and
  keeps the first asker's place;
- a queued job whose askers have all left is dropped; a running one is told to stop;
- every waiter can read its place in line and the running job's progress.

The work runs in a thread of its own, so a waiter that is interrupted (a Streamlit rerun) loses
nothing: its next run finds the same job by key. Pure Python; the Streamlit side is ui/server/jobs.py.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

Report = Callable[[float, str], None]          # (fraction done 0..1, what is being done)

QUEUED, RUNNING, DONE, FAILED, DROPPED = "queued", "running", "done", "failed", "dropped"


class JobStopped(Exception):
    """Raised inside a job's report callback once nobody waits for the job any more: the work
    stops at its next progress report. Not a ValueError, so callers never show it as bad input."""


class BusyError(ValueError):
    """The session already has a heavy job running; it must finish before another is asked for."""


class VisitorBusyError(BusyError):
    """The visitor's other sessions (tabs, sockets from the same address) hold its places in line."""


@dataclass(eq=False)
class Job:
    key: Hashable
    label: str                         # what the waiter is told is being made
    work: Callable[[Report], Any]
    memory_bytes: int                  # the job's declared peak memory (0: negligible)
    ticket: int                        # its number in the order of asking
    owners: set[str] = field(default_factory=set)       # sessions waiting for it
    state: str = QUEUED
    progress: tuple[float, str] = (0.0, "")
    result: Any = None
    error: BaseException | None = None
    asked_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    visitor: Hashable | None = None    # who asked for it first (a client address), None: not counted
    _finished: threading.Event = field(default_factory=threading.Event)

    def wait(self, timeout: float | None = None) -> bool:
        """True once the job ended (done, failed or dropped)."""
        return self._finished.wait(timeout)

    def outcome(self):
        """The job's result; its exception re-raised when it failed; JobStopped when dropped."""
        if self.state == DONE:
            return self.result
        if self.state == FAILED:
            raise self.error
        if self.state == DROPPED:
            raise JobStopped("the job was dropped: nobody waited for it any more")
        raise RuntimeError(f"the job is still {self.state}")

    @property
    def queued_seconds(self) -> float | None:
        return None if self.started_at is None else self.started_at - self.asked_at


class JobQueue:
    """Thread-safe. `alive(session)` says whether a session still exists (for dropping the jobs
    of visitors who left); `clock` is injectable for tests."""

    def __init__(self, limit: int = 1, memory_limit_bytes: int | None = None,
                 alive: Callable[[str], bool] = lambda session: True, clock: Callable[[], float] = time.monotonic,
                 visitor_limit: int = 1):
        if limit < 1:
            raise ValueError(f"the limit of jobs at once must be at least 1, not {limit}")
        if visitor_limit < 1:
            raise ValueError(f"the limit of jobs per visitor must be at least 1, not {visitor_limit}")
        self.limit = limit
        self.visitor_limit = visitor_limit
        self.memory_limit_bytes = memory_limit_bytes
        self._alive = alive
        self._clock = clock
        self._lock = threading.Lock()
        self._tickets = itertools.count(1)
        self._line: list[Job] = []              # queued, in ticket order
        self._running: list[Job] = []
        self._by_key: dict[Hashable, Job] = {}  # queued or running
        self._of_session: dict[str, Job] = {}   # the one job each session waits for

    # -- asking ---------------------------------------------------------------------------------
    def submit(self, session: str, key: Hashable, work: Callable[[Report], Any], label: str = "",
               memory_bytes: int = 0, visitor: Hashable | None = None) -> Job:
        """The job for `key` (new at the back of the line, or the one already queued or running,
        shared). BusyError when this session's other job is running; VisitorBusyError when a new
        job would give `visitor` (None: no limit) more than visitor_limit places."""
        with self._lock:
            current = self._of_session.get(session)
            if visitor is not None and key not in self._by_key:     # joining a job takes no place
                self._admit(visitor, current)
            if current is not None and current.key != key and current.state in (QUEUED, RUNNING):
                if current.state == RUNNING:
                    what = current.label or "the heavy job"
                    raise BusyError(f"{what[:1].upper()}{what[1:]} you asked for is still being made: "
                                    "it finishes first, then ask again.")
                self._withdraw(session, current)
            job = self._by_key.get(key)
            if job is None:
                job = Job(key, label, work, max(0, int(memory_bytes)), next(self._tickets), asked_at=self._clock(),
                          visitor=visitor)
                self._by_key[key] = job
                self._line.append(job)
            job.owners.add(session)
            self._of_session[session] = job
            self._dispatch()
            return job

    def place(self, job: Job) -> int:
        """0 while running or ended; 1 for the next to start, 2 after it, ..."""
        with self._lock:
            return self._line.index(job) + 1 if job in self._line else 0

    def job_of(self, session: str) -> Job | None:
        """The job this session asked for last (also after it ended, until it asks for another)."""
        with self._lock:
            return self._of_session.get(session)

    def leave(self, session: str) -> None:
        """The session is gone: it waits for nothing any more."""
        with self._lock:
            job = self._of_session.pop(session, None)
            if job is not None:
                self._withdraw(session, job)
            self._dispatch()

    def snapshot(self) -> dict:
        """Counts for a status line or a benchmark: running, queued, and their labels."""
        with self._lock:
            return {"running": [job.label for job in self._running], "queued": [job.label for job in self._line]}

    # -- inside ---------------------------------------------------------------------------------
    def _admit(self, visitor: Hashable, current: Job | None) -> None:
        """VisitorBusyError when the visitor's jobs in line, other than this session's own (which a
        new ask replaces), already fill its places."""
        self._drop_abandoned()              # a closed tab's queued job holds no place
        held = [job for job in (*self._running, *self._line) if job.visitor == visitor and job is not current]
        if len(held) >= self.visitor_limit:
            what = held[0].label or "a heavy job"
            raise VisitorBusyError(
                f"Another tab or window of yours already has {what} in this server's line of heavy jobs "
                f"({self.visitor_limit} place{'s' if self.visitor_limit > 1 else ''} per visitor): "
                "wait until it is made, then ask again.")

    def _withdraw(self, session: str, job: Job) -> None:
        job.owners.discard(session)
        if self._of_session.get(session) is job:
            del self._of_session[session]
        if job.owners:
            return
        if job.state == QUEUED:
            self._line.remove(job)
            self._end(job, DROPPED)
        # a running job with no owner left stops at its next progress report (see _run)

    def _drop_abandoned(self) -> None:
        for session, job in list(self._of_session.items()):      # sessions gone: forget their last job
            if job.state not in (QUEUED, RUNNING) and not self._alive(session):
                del self._of_session[session]
        for job in list(self._line):
            for session in list(job.owners):
                if not self._alive(session):
                    job.owners.discard(session)
                    if self._of_session.get(session) is job:
                        del self._of_session[session]
            if not job.owners:
                self._line.remove(job)
                self._end(job, DROPPED)

    def _fits(self, job: Job) -> bool:
        if len(self._running) >= self.limit:
            return False
        if not self._running or self.memory_limit_bytes is None:
            return True
        in_use = sum(other.memory_bytes for other in self._running)
        return in_use + job.memory_bytes <= self.memory_limit_bytes

    def _dispatch(self) -> None:
        """Start jobs from the head of the line while they fit (strict order: none jumps ahead)."""
        self._drop_abandoned()
        while self._line and self._fits(self._line[0]):
            job = self._line.pop(0)
            job.state = RUNNING
            job.started_at = self._clock()
            self._running.append(job)
            threading.Thread(target=self._run, args=(job,), name=f"heavy-job-{job.ticket}", daemon=True).start()

    def _run(self, job: Job) -> None:
        def report(fraction: float, what: str) -> None:
            if not job.owners or not any(self._alive(session) for session in list(job.owners)):
                raise JobStopped("nobody waits for this job any more")
            job.progress = (min(1.0, max(0.0, float(fraction))), what)

        try:
            result = job.work(report)
        except BaseException as error:      # the waiter re-raises it; the line goes on
            with self._lock:
                job.error = error
                self._finish(job, DROPPED if isinstance(error, JobStopped) else FAILED)
            return
        with self._lock:
            job.result = result
            self._finish(job, DONE)

    def _finish(self, job: Job, state: str) -> None:
        self._running.remove(job)
        self._end(job, state)
        self._dispatch()

    def _end(self, job: Job, state: str) -> None:
        job.state = state
        job.finished_at = self._clock()
        if self._by_key.get(job.key) is job:
            del self._by_key[job.key]
        job._finished.set()
