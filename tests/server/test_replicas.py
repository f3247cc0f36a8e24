"""Two app servers behind Debian's nginx (deploy/nginx-replicas.conf) on loopback: the protocol
load client runs through it, every session stays on the replica that made it, and stopping one
replica leaves the other's sessions working while its own visitors get a fresh session on the
other one, their view coming back from the URL."""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from bench.load_protocol import scenario
from bench.protocol import Session
from bench.rounds import Step
from browser_helpers import ROOT, free_port, start_server, stop_server

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SHORT_ROUND = (
    Step("home", "light", "open", "", "table=seed004"),
    Step("geometry: open", "light", "open", "geometry"),
    Step("geometry: colour", "light", "set", "geo_colour", "vector norm"),
)


def _nginx_config(prefix: Path, listen: int, replicas: list[int]) -> Path:
    servers = "\n".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;" for port in replicas)
    pinned = "\n".join(f'        "127.0.0.1:{port}" "127.0.0.1:{port}";' for port in replicas)
    text = (ROOT / "deploy" / "nginx-replicas.conf").read_text()
    text = (text.replace("@PREFIX@", str(prefix)).replace("@LISTEN@", f"127.0.0.1:{listen}")
            .replace("@SERVERS@", servers).replace("@PINNED@", pinned))
    path = prefix / "nginx.conf"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not os.path.exists(NGINX):
        if os.environ.get("CI") == "true":
            raise RuntimeError("CI must run the replica test: install Debian's nginx (scripts/setup.sh --dev)")
        pytest.skip("Debian's nginx is not installed", allow_module_level=True)
    prefix = tmp_path_factory.mktemp("nginx")
    ports = [free_port(), free_port()]
    replicas, proxy = {}, None
    try:
        for port in ports:
            replicas[port] = start_server(port)
        listen = free_port()
        config = _nginx_config(prefix, listen, ports)
        proxy = subprocess.Popen([NGINX, "-c", str(config), "-p", str(prefix)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{listen}"
        _wait_for(url + "/_stcore/health", proxy)
        yield url, replicas, prefix
    finally:
        if proxy is not None and proxy.poll() is None:
            proxy.terminate()
            proxy.wait(timeout=10)
        for process in replicas.values():
            if process.poll() is None:
                stop_server(process)


def _wait_for(health: str, proxy: subprocess.Popen) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(health, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            if proxy.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start: {proxy.stderr.read().decode(errors='replace')[-500:]}")
            time.sleep(0.2)


def _requests(prefix: Path) -> list[tuple[str, str, str, str]]:
    """(cookie, upstream, status, uri) of every request nginx logged so far."""
    lines = (prefix / "access.log").read_text().splitlines()
    return [tuple(line.split("|", 3)) for line in lines if line.count("|") >= 3]


def test_the_load_client_runs_through_nginx_and_sessions_stay_on_their_replica(cluster):
    url, replicas, prefix = cluster
    run = asyncio.run(scenario(url, None, 4, SHORT_ROUND, arrive=1.0, think=0.1, seed=1, timeout=90))
    assert run["errors"] == [] and run["complete_rounds"] == 4
    time.sleep(0.5)                                    # websocket lines are logged when they close
    streams = [(cookie, upstream) for cookie, upstream, _, uri in _requests(prefix) if uri == "/_stcore/stream"]
    assert len(streams) >= 4
    for cookie, upstream in streams:
        assert cookie and upstream == cookie           # every websocket went to its visitor's replica
    assert {upstream for _, upstream in streams} == {f"127.0.0.1:{port}" for port in replicas}   # both used


async def _visit(url: str):
    session = Session(url, timeout=60)
    await session.connect()
    await session.open("geometry", "table=seed004")
    changed = await session.set("geo_colour", "vector norm")
    assert changed.errors == []
    return session


def test_stopping_one_replica_leaves_the_others_sessions_working(cluster):
    url, replicas, prefix = cluster

    async def scenario_with_a_failure():
        sessions = [await _visit(url) for _ in range(2)]        # turn by turn: one on each replica
        pinned = {session.cookie.split("lens_replica=")[1].split(";")[0]: session for session in sessions}
        assert len(pinned) == 2, pinned.keys()
        victim_port = next(iter(replicas))
        victim = pinned[f"127.0.0.1:{victim_port}"]
        survivor = next(session for address, session in pinned.items() if address != f"127.0.0.1:{victim_port}")
        stop_server(replicas[victim_port])
        still = await survivor.set("geo_colour", "token kind")
        lost = await victim.set("geo_colour", "token kind")
        # The stopped replica's visitor reconnects (same cookie), gets a fresh session on the
        # other replica, and its view comes back from the URL the page showed.
        again = Session(url, timeout=60, cookie=victim.cookie)
        await again.connect()
        back = await again.open("geometry", victim.query_string)
        query = again.query_string
        for session in (survivor, victim, again):
            await session.close()
        return still, lost, back, query

    still, lost, back, query = asyncio.run(scenario_with_a_failure())
    assert still.errors == [] and still.runs >= 1
    assert lost.errors and "connection closed" in lost.errors[0]
    # a session that ignored the URL would have rewritten it to its defaults (colour=id, seed000)
    assert back.errors == [] and "colour=norm" in query and "table=seed004" in query
