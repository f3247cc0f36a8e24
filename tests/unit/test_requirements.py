"""requirements.txt deploys on Streamlit Community Cloud as it is, and installs offline here."""
from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def test_requirements_name_the_cpu_index_as_an_extra_index_and_pin_torch():
    lines = requirement_lines(ROOT / "requirements.txt")
    # an *extra* index: PyPI stays the default index for pip; uv gives extra indexes priority
    assert f"--extra-index-url {CPU_INDEX}" in lines
    assert not any(line.startswith(("--index-url", "-i ")) for line in lines)  # PyPI stays
    torch = [Requirement(line) for line in lines if re.match(r"torch\b", line)]
    assert [str(r.specifier) for r in torch] == ["==2.13.0"]  # no "+cpu": macOS wheels have no label
    assert torch[0].marker is None


def test_uv_takes_each_package_at_its_best_version_over_both_indexes():
    config = tomllib.loads((ROOT / "uv.toml").read_text())
    assert config["pip"]["index-strategy"] == "unsafe-best-match"


def test_pypi_copy_drops_only_the_index_line(tmp_path):
    subprocess.run(["bash", str(ROOT / "scripts/pypi_requirements.sh"), str(tmp_path)], check=True)
    original, copy = requirement_lines(ROOT / "requirements.txt"), requirement_lines(tmp_path / "requirements.txt")
    assert [line for line in original if not line.startswith("--")] == copy
    assert not any("download.pytorch.org" in line for line in copy)
    for line in copy:
        Requirement(line)  # every line left is a plain requirement pip and uv both read
    assert "-r requirements.txt" in requirement_lines(tmp_path / "requirements-dev.txt")  # the copy's


def test_setup_installs_from_the_pypi_copy_never_from_the_index_line():
    setup = (ROOT / "scripts/setup.sh").read_text()
    assert "pypi_requirements.sh" in setup
    assert not re.search(r"pip install[^\n]*-r requirements(-dev)?\.txt", setup)


def test_installed_torch_is_the_pinned_version():
    import torch

    assert torch.__version__.split("+")[0] == "2.13.0"
