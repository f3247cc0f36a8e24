"""The heavy-job line is fair between visitors (core/server/jobs.py, with real threads): asking again and
again moves only oneself back, one visitor with many sockets or tabs holds one place, and several
rankings never run together with the server's settings."""
from __future__ import annotations

import threading

import pytest

from core.server.jobs import DROPPED, RUNNING, BusyError, JobQueue, VisitorBusyError
from job_gates import Gates, until


def test_a_visitor_asking_again_and_again_cannot_push_back_anothers_job():
    """Three sessions: one job running; a pest asks for a new map 200 times from its own thread
    while a teacher's map waits. The teacher's place never grows, and its map starts next."""
    gates, queue = Gates(), JobQueue(limit=1)
    queue.submit("student", "running", gates.work("running"))
    queue.submit("pest", "pest 0", gates.work("pest 0"))
    teacher = queue.submit("teacher", "teacher's map", gates.work("teacher's map"))
    places = [queue.place(teacher)]
    assert places == [2]

    def pester():
        for i in range(1, 201):
            try:
                queue.submit("pest", f"pest {i}", gates.work(f"pest {i}"))
            except BusyError:              # its own job started: it may not ask for another
                pass
            places.append(queue.place(teacher))
    thread = threading.Thread(target=pester)
    thread.start()
    thread.join(10)
    assert max(places[1:]) <= 1                   # the pest went behind the teacher on its first re-ask
    gates.release("running")
    until(lambda: len(gates.started) == 2)
    assert gates.started == ["running", "teacher's map"]
    assert queue.snapshot()["queued"] == [""]     # one pest job left in line, the last it asked for
    gates.release("teacher's map")
    gates.release("pest 200")
    assert teacher.wait(5)
    until(lambda: "pest 200" in gates.started)
    assert [name for name in gates.started if name.startswith("pest")] == ["pest 200"]


def test_rankings_of_several_sessions_never_run_together_with_the_servers_settings(monkeypatch):
    """Ranking every head declares its peak (ui/jobs.RANK_HEADS_MEMORY_BYTES: four at once took the
    server +2.4 GB); with the default memory limit two rankings never run at once, even when the
    operator allows two heavy jobs, while a map (no declared memory) may run beside one."""
    from core.settings import class_settings
    from ui.server.jobs import RANK_HEADS_MEMORY_BYTES

    monkeypatch.setenv("EMBEDDING_LENS_HEAVY_JOBS", "2")
    monkeypatch.delenv("EMBEDDING_LENS_HEAVY_MEMORY_MB", raising=False)
    settings, _ = class_settings(())
    queue = JobQueue(limit=settings.heavy_jobs, memory_limit_bytes=settings.heavy_memory_bytes)
    gates = Gates()
    rankings = [queue.submit(f"student {n}", ("rank heads", f"text {n}"), gates.work(f"rank {n}"),
                             memory_bytes=RANK_HEADS_MEMORY_BYTES) for n in range(3)]
    shared_map = queue.submit("student 3", ("map",), gates.work("map"))
    until(lambda: gates.started == ["rank 0"])
    assert [queue.place(job) for job in rankings] == [0, 1, 2]
    assert queue.place(shared_map) == 3                    # strict order: nothing jumps the line
    for n in range(3):
        until(lambda: rankings[n].state == RUNNING)
        assert [job.state for job in rankings].count(RUNNING) == 1      # one ranking's memory at a time
        if n == 2:
            until(lambda: "map" in gates.started)          # the second slot: the map runs beside the last one
        gates.release(f"rank {n}")
        assert rankings[n].wait(5) and rankings[n].outcome() == f"rank {n}"
    gates.release("map")
    assert shared_map.wait(5)
    assert gates.started == ["rank 0", "rank 1", "rank 2", "map"]


def test_one_visitor_with_many_sockets_holds_one_place_in_line():
    """Issue 32 (6): a stranger with N websockets (N sessions, one address) queued N long jobs.
    Now its second session's new job is refused while the first's is queued or running; another
    visitor still queues; a job of its own session is replaced as before; joining an identical job
    takes no place; once its job ends, the visitor may ask again."""
    gates, queue = Gates(), JobQueue(limit=1)
    other = queue.submit("other", "other map", gates.work("other map"), visitor="10.0.0.9")
    mine = queue.submit("tab 1", "map a", gates.work("map a"), label="the t-SNE map", visitor="10.0.0.5")
    with pytest.raises(VisitorBusyError, match="Another tab or window of yours already has the t-SNE map"):
        queue.submit("tab 2", "map b", gates.work("map b"), visitor="10.0.0.5")
    assert queue.snapshot()["queued"] == ["the t-SNE map"]                # nothing of tab 2 in line
    third = queue.submit("stranger 2", "map c", gates.work("map c"), visitor="10.0.0.7")
    assert [queue.place(job) for job in (other, mine, third)] == [0, 1, 2]
    assert queue.submit("tab 2", "other map", gates.work("other map"), visitor="10.0.0.5") is other
    replaced = queue.submit("tab 1", "map d", gates.work("map d"), visitor="10.0.0.5")     # its own: to the back
    assert mine.state == DROPPED and queue.place(replaced) == 2
    with pytest.raises(VisitorBusyError):                                  # still one place for the visitor
        queue.submit("tab 3", "map e", gates.work("map e"), visitor="10.0.0.5")
    for name in ("other map", "map c", "map d"):
        gates.release(name)
    for job in (other, third, replaced):
        assert job.wait(5)
    again = queue.submit("tab 2", "map b", gates.work("map b", result="b"), visitor="10.0.0.5")
    gates.release("map b")
    assert again.wait(5) and again.outcome() == "b"


def test_a_visitor_limit_above_one_and_sessions_without_an_address():
    gates, queue = Gates(), JobQueue(limit=1, visitor_limit=2)
    queue.submit("a", "k1", gates.work("k1"), visitor="school")
    queue.submit("b", "k2", gates.work("k2"), visitor="school")
    with pytest.raises(VisitorBusyError, match=r"\(2 places per visitor\)"):
        queue.submit("c", "k3", gates.work("k3"), visitor="school")
    free = [queue.submit(f"local {i}", f"free {i}", gates.work(f"free {i}")) for i in range(3)]   # no address: no limit
    assert [queue.place(job) for job in free] == [2, 3, 4]
    with pytest.raises(ValueError, match="at least 1"):
        JobQueue(visitor_limit=0)
    for name in ("k1", "k2", "free 0", "free 1", "free 2"):
        gates.release(name)


def test_a_closed_tabs_queued_job_gives_its_visitor_place_back():
    alive = {"running": True, "tab 1": True, "tab 2": True}
    gates = Gates()
    queue = JobQueue(limit=1, alive=lambda session: alive.get(session, False))
    queue.submit("running", "first", gates.work("first"), visitor="10.0.0.1")
    queue.submit("tab 1", "a", gates.work("a"), visitor="10.0.0.5")
    alive["tab 1"] = False                                  # the tab closed without leaving
    job = queue.submit("tab 2", "b", gates.work("b"), visitor="10.0.0.5")
    assert queue.place(job) == 1
    for name in ("first", "b"):
        gates.release(name)
    assert job.wait(5)
