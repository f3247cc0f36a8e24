"""The README a newcomer reads in two minutes (issue 34): short, its two commands on the first
screen (the test command the same one CI runs), every docs/ link and picture present, and every
operator setting of core/settings.py documented in docs/operating.md."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SETUP_AND_RUN = "bash scripts/setup.sh && .venv/bin/streamlit run app.py"
SETUP_AND_TEST = "bash scripts/test.sh"


def test_readme_is_at_most_25_kb():
    assert len(README.encode()) <= 25 * 1024


def test_both_commands_are_on_the_first_screen():
    first_screen = "\n".join(README.splitlines()[:40])
    assert SETUP_AND_RUN in first_screen
    assert SETUP_AND_TEST in first_screen


def test_the_readme_test_command_is_the_one_ci_runs():
    ci_commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
                   if line.strip() and not line.lstrip().startswith("#")]
    assert SETUP_AND_TEST in ci_commands


def test_every_local_link_and_picture_exists():
    targets = re.findall(r"\]\(([^)#\s]+)", README)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert any(t.startswith("docs/") and t.endswith(".md") for t in local)
    assert any(t.startswith("docs/images/") for t in local), "a picture of the app at the top"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_pictures_stay_small():
    for image in (ROOT / "docs" / "images").glob("*.png"):
        assert image.stat().st_size < 300 * 1024, image.name


def test_every_setting_is_documented_in_operating():
    settings = set(re.findall(r"EMBEDDING_LENS_[A-Z_]+", (ROOT / "core" / "settings.py").read_text()))
    assert "EMBEDDING_LENS_CGROUP_ROOT" in settings
    operating = (ROOT / "docs" / "operating.md").read_text()
    documented = set(re.findall(r"EMBEDDING_LENS_[A-Z_]+", operating))
    assert settings <= documented, sorted(settings - documented)
    assert re.search(r"EMBEDDING_LENS_CGROUP_ROOT.*test", operating), "CGROUP_ROOT is said to be test-only"


def test_links_between_the_docs_exist():
    missing = []
    for doc in (ROOT / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([^)#\s]+)", doc.read_text()):
            if not re.match(r"[a-z]+:", target) and not (doc.parent / target).exists():
                missing.append(f"{doc.name}: {target}")
    assert not missing, missing
