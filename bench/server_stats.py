"""The app server's own CPU time and memory, read from /proc (Linux): the server process and its
children (the map process), so a load run states what the server spent, not the clients."""
from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()        # after "pid (comm) "; comm may hold spaces


def family(pid: int) -> list[int]:
    """pid and every live descendant."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int(_stat_fields(int(entry.name))[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of pid and its live descendants (children that ended and were
    waited for count in the parent's cutime/cstime, added too)."""
    total = 0.0
    for member in family(pid):
        try:
            fields = _stat_fields(member)
        except OSError:
            continue
        # fields[11..14] = utime, stime, cutime, cstime (proc(5) numbers 14..17)
        total += sum(int(value) for value in fields[11:15]) / TICKS
    return total


def rss_mb(pid: int) -> float:
    """Resident memory of pid alone, MB (the app server; the map process is counted apart)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def family_rss_mb(pid: int) -> float:
    total = 0.0
    for member in family(pid):
        try:
            total += rss_mb(member)
        except OSError:
            continue
    return total


def children_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of pid's live descendants alone (the map process): the shared
    heavy work, apart from the page runs of the server process."""
    return cpu_seconds(pid) - own_cpu_seconds(pid)


def own_cpu_seconds(pid: int) -> float:
    """pid's own user + system CPU seconds (its threads: page runs, websockets, warm-up, jobs)."""
    fields = _stat_fields(pid)
    return sum(int(value) for value in fields[11:13]) / TICKS
