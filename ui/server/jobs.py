"""Heavy work on a page: the server-wide line of core/server/jobs.py, shown where it was asked for.

A page calls `run_heavy(key, work, label)`; while the job waits, the page says "You are number N
in the queue"; while it runs, its progress. The work runs in the line's own thread (never draws:
it reports progress through its callback), so a rerun of the asking page does not lose its place:
the next run that asks for the same key waits for the same job.

`offer(...)` puts such a job behind a button that says how long it takes: choosing a method, a
layer or a tab never starts heavy work; a result already made (by anyone) shows at once.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Hashable

import streamlit as st

from core.server.jobs import QUEUED, RUNNING, BusyError, JobQueue, JobStopped, Report
from core.limits import MIB
from core.server.objects import shared
from core.settings import class_settings

POLL_SECONDS = 0.25        # how often a waiting page looks at its job
REDRAW_SECONDS = 2.0       # an unchanged status is still redrawn this often, so a rerun can end the wait
# Ranking every head of SmolLM2 (270 ablations in float32): four at once took the server +2.4 GB.
RANK_HEADS_MEMORY_BYTES = 600 * MIB

__all__ = ["BusyError", "RANK_HEADS_MEMORY_BYTES", "heavy_queue", "kept", "offer", "run_heavy", "session_id"]


def _session_alive(session: str) -> bool:
    """Whether a browser still holds this session (AppTest and bare runs have no runtime: yes)."""
    from streamlit import runtime

    if not runtime.exists():
        return True
    return runtime.get_instance().is_active_session(session)


def heavy_queue() -> JobQueue:
    """The server's one line of heavy jobs (limit and memory from the operator's settings), made
    once per server: a rebuilt line would forget every place in it (core/server/objects.py)."""
    return shared("heavy-job line", _new_heavy_queue)


def _new_heavy_queue() -> JobQueue:
    from core.models.loading.pretrained import BUILTIN_MODELS, BUILTIN_TABLES

    settings, _ = class_settings(tuple(BUILTIN_MODELS) + tuple(BUILTIN_TABLES))
    return JobQueue(limit=settings.heavy_jobs, memory_limit_bytes=settings.heavy_memory_bytes,
                    alive=_session_alive, visitor_limit=settings.heavy_jobs_per_visitor)


def visitor_id() -> str | None:
    """The client address behind this session (all its tabs and sockets are one visitor in the
    line), or None when the server sees none: Streamlit reports no address for a loopback peer (a
    local user, or a proxy on this machine that does not forward addresses), and then each session
    is its own visitor."""
    try:
        return st.context.ip_address
    except Exception:       # no runtime (bare runs): no address
        return None


def session_id() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    return context.session_id if context is not None else "no-session"


def _status(place: int, job, label: str) -> tuple[float, str]:
    if place:
        ahead = "the next to start" if place == 1 else f"{place - 1} ahead of you"
        return 0.0, f"You are number {place} in the queue for {label} ({ahead}): heavy jobs take turns on this server."
    fraction, what = job.progress
    return fraction, what or f"Making {label}…"


def run_heavy(key: Hashable, work: Callable[[Report], Any], label: str, memory_bytes: int = 0) -> Any:
    """work(report)'s result, made in the server-wide line (shared with anyone asking for `key`).

    `label` names the job for the waiter ("the t-SNE map"). The job's own exceptions are
    re-raised (ValueError: the caller shows it as a message); BusyError (a ValueError) when this
    session's previous heavy job is still running, or another session from the same address holds
    the visitor's place in line. A job dropped because its session left ends
    this run quietly (nobody is there to see it).
    """
    queue = heavy_queue()
    job = queue.submit(session_id(), key, work, label, memory_bytes, visitor=visitor_id())
    box = st.empty()
    shown, drawn_at = None, 0.0
    try:
        while not job.wait(POLL_SECONDS):
            status = _status(queue.place(job), job, label)
            if status != shown or time.monotonic() - drawn_at > REDRAW_SECONDS:
                box.progress(status[0], text=status[1])
                shown, drawn_at = status, time.monotonic()
    finally:
        box.empty()
    try:
        return job.outcome()
    except JobStopped:
        st.stop()


def offer(key: Hashable, work: Callable[[Report], Any], label: str, button: str, seconds: float, results,
          button_key: str, memory_bytes: int = 0) -> Any:
    """work(report)'s result for `key` if it was made already (results: a core.models.loading.store.SharedResults
    shared by every session) or this session asked for it and it is still in the line (a rerun
    while it waits keeps waiting); else a button "{button} (about N s)" and None until it is clicked.
    On the click the work goes into the server-wide line (run_heavy: place shown, shared with
    anyone asking for the same key) on one torch thread, so a light step of another visitor keeps
    the other core; its result goes into `results` for everyone. `seconds`: the rough cost of the
    work alone (core.models.costs). Exceptions as run_heavy's."""
    from core.models.costs import rough

    found = results.get(key)
    if found is not None:
        return found
    mine = heavy_queue().job_of(session_id())
    waiting = mine is not None and mine.key == key and mine.state in (QUEUED, RUNNING)
    if not waiting:
        slot = st.empty()                     # the button leaves once clicked: the progress takes its place
        if not slot.button(f"{button} ({rough(seconds)})", key=button_key, type="primary",
                           help="Heavy work: it runs only when asked, one job at a time on this server, and its "
                                "result is kept for everyone who asks the same."):
            return None
        slot.empty()
    return run_heavy(key, kept(key, work, results), label, memory_bytes)


def kept(key: Hashable, work: Callable[[Report], Any], results) -> Callable[[Report], Any]:
    """work as the line runs it (in the line's thread: no drawing): on one torch thread, so the
    other core stays free for other visitors' light steps; its temporaries given back to the
    system; its result put into `results` for everyone."""
    from core.torch_state import one_torch_thread

    def made(report: Report) -> Any:
        from ui.cached import release_memory

        try:
            with one_torch_thread():
                result = work(report)
        finally:
            release_memory()
        results.put(key, result)
        return result
    return made
