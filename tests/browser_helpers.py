"""Start the app as the README does and drive it with Debian's Chromium through Playwright."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = ROOT / "tests" / "screenshots"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, env: dict | None = None, module: list[str] | None = None,
                 script: str = "app.py") -> subprocess.Popen:
    """`streamlit run app.py` on 127.0.0.1:port; returns once /_stcore/health answers.
    `module`: another `python -m` entry that takes streamlit's arguments (bench/load_profile.py);
    `script`: serve.py starts the warm-up with the server."""
    command = [sys.executable, "-m", *(module or ["streamlit"]), "run", script, "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true"]
    log = open(ROOT / "tests" / f".server-{port}.log", "w")
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, **(env or {})})
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"the Streamlit server did not start on port {port}")


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


def wait_until_idle(page, plots: int = 0, timeout: float = 90.0) -> None:
    """Wait until the script stopped running and at least `plots` figures are drawn (for 1 s)."""
    try:
        page.evaluate(RESET_IDLE_JS)     # idle from now on, not since an earlier wait
        page.wait_for_function(IDLE_JS, arg=[plots, 1000], timeout=timeout * 1000, polling=200)
    except Exception as error:  # playwright's TimeoutError: say what the page showed
        drawn = page.locator(".js-plotly-plot").count()
        raise AssertionError(f"page not idle after {timeout} s ({drawn} plots)") from error


# In-page probes (evaluated by the renderer itself: no driver round trip per poll).
MARK_FIGURE_JS = """(i) => { const gd = document.querySelectorAll('.js-plotly-plot')[i];
  window.__probe = {gd, data: gd.data, json: JSON.stringify(gd.data)}; }"""
# True once figure i shows other data than when marked. JSON is compared only after Plotly
# replaced the figure or its data, so polling stays cheap while nothing happens.
FIGURE_CHANGED_JS = """(i) => { const gd = document.querySelectorAll('.js-plotly-plot')[i], p = window.__probe;
  if (!gd || (gd === p.gd && gd.data === p.data)) return false;
  if (JSON.stringify(gd.data) !== p.json) return true;
  p.gd = gd; p.data = gd.data; return false; }"""
RESET_IDLE_JS = "() => { window.__idleSince = null; }"
# True once no script runs, no spinner shows and at least `plots` figures are drawn, for `stable` ms.
IDLE_JS = """([plots, stable]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app && app.getAttribute('data-test-script-state');   // the script runner's own state
  const busy = document.querySelector('[data-testid="stStatusWidget"], [data-testid="stSpinner"]') ||
               ['initial', 'running', 'rerunRequested'].includes(state);
  const ready = !busy && app && document.querySelectorAll('.js-plotly-plot').length >= plots;
  if (!ready) { window.__idleSince = null; return false; }
  window.__idleSince = window.__idleSince || performance.now();
  return performance.now() - window.__idleSince > stable; }"""


def require_chromium() -> None:
    """Skip a browser module without Chromium, except in CI, where browser tests must run."""
    import pytest

    if not chromium_available():
        if os.environ.get("CI") == "true":
            raise RuntimeError("CI must run the browser tests: install Debian's chromium (apt-get install -y chromium)")
        pytest.skip("Debian's chromium is not installed", allow_module_level=True)


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def server_log(port: int) -> str:
    return (ROOT / "tests" / f".server-{port}.log").read_text(errors="replace")


def resident_mb(process: subprocess.Popen) -> float:
    """The server's resident memory now, from /proc."""
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


# What a page lets a stranger's text become: links, images, bold, and what the page says.
PAGE_PROBE_JS = """() => {
  const href = a => a.getAttribute('href') || a.getAttribute('xlink:href') || '';
  return {
    links: [...document.querySelectorAll('a')].map(href).filter(h => h.includes('127.0.0.1:9') || /^javascript:/i.test(h)),
    images: [...document.querySelectorAll('img')].map(i => i.getAttribute('src') || '').filter(s => s.includes('127.0.0.1:9') || s === 'x'),
    // a payload made bold shows 'bold' without its asterisks; our own bold around a literal token keeps them
    bold: [...document.querySelectorAll('strong, b')].map(b => b.textContent).filter(t => t.includes('bold') && !t.includes('**bold**')),
    text: document.body.innerText,
  }; }"""
