"""Model loading a stranger can reach: operator settings, names checked before any file or
network access, sizes checked before any weight is read, a memory-bounded shared store, and
a one-time conversion that runs once and cleans up after a kill."""
from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import ROOT

from core.limits import MAX_HUB_ID_CHARS, MIB
from core.models.loading import smollm2_cache as model_cache
from core.models.loading.hf import (
    FOLDERS_OFF,
    ModelSource,
    folder_size,
    looks_like_path,
    model_source,
)
from core.models.loading.store import ModelStore
from core.settings import OperatorSettings, operator_settings

PUBLIC = OperatorSettings()
LOCAL = OperatorSettings(local_folders=True)


def test_settings_come_from_the_environment(monkeypatch, tmp_path):
    assert operator_settings(tmp_path) == OperatorSettings()
    assert not PUBLIC.local_folders and PUBLIC.hub and PUBLIC.max_model_params == 500_000_000
    monkeypatch.setenv("EMBEDDING_LENS_LOCAL_FOLDERS", "1")
    monkeypatch.setenv("EMBEDDING_LENS_HUB", "off")
    monkeypatch.setenv("EMBEDDING_LENS_MAX_MODEL_PARAMS", "200_000_000")
    monkeypatch.setenv("EMBEDDING_LENS_MODEL_MEMORY_MB", "800")
    assert operator_settings(tmp_path) == OperatorSettings(True, False, 200_000_000, 800 * MIB)
    monkeypatch.setenv("EMBEDDING_LENS_MAX_MODEL_PARAMS", "lots")      # unreadable: the default
    monkeypatch.setenv("EMBEDDING_LENS_LOCAL_FOLDERS", "maybe")
    assert operator_settings(tmp_path).max_model_params == 500_000_000
    assert not operator_settings(tmp_path).local_folders


@pytest.mark.parametrize("raw", ["/etc", "/nonexistent", "~/.cache/embedding-lens/smollm2-v2", "./models",
                                 "../../etc/passwd", "C:\\\\models", "C:/models", "//etc", "\\\\server\\share"])
def test_folders_are_refused_without_looking_when_switched_off(raw, monkeypatch):
    monkeypatch.setattr(os.path, "realpath", lambda *_: pytest.fail("the filesystem was consulted"))
    assert looks_like_path(raw)
    with pytest.raises(ValueError) as refused:
        model_source(raw, PUBLIC)
    assert str(refused.value) == FOLDERS_OFF          # the same answer whether the folder exists or not


def test_one_folder_is_one_name(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    spellings = [str(folder), f"{folder}/", f"{folder}/.", f"/{folder}", f"{folder}/../model"]
    assert {model_source(s, LOCAL) for s in spellings} == {ModelSource("folder", str(folder.resolve()))}


@pytest.mark.parametrize("raw, message", [
    ("x" * (MAX_HUB_ID_CHARS + 1), "is not a Hugging Face model id"),
    ("a" * 3000, "is not a Hugging Face model id"),
    ("gpt2; rm -rf", "is not a Hugging Face model id"),
    ("[x](http", "is not a Hugging Face model id"),
    ("org/..", "is not a Hugging Face model id"),
    ("a/b/c", "is not a Hugging Face model id"),
    ("x/", "is not a Hugging Face model id"),
    ("[Session expired](http://127.0.0.1:9/phish)", "is not a Hugging Face model id"),
    ("", "type a Hugging Face model id"),
])
def test_bad_hub_ids(raw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        model_source(raw, PUBLIC)


def test_hub_switched_off():
    with pytest.raises(ValueError, match="hub is switched off"):
        model_source("gpt2", OperatorSettings(hub=False))
    assert model_source("HuggingFaceTB/SmolLM2-135M", PUBLIC) == ModelSource("hub", "HuggingFaceTB/SmolLM2-135M")


def fake_safetensors(path: Path, shapes: dict[str, list[int]], dtype: str = "F32") -> None:
    """Only a header: it declares tensors whose bytes the file does not hold."""
    header = {name: {"dtype": dtype, "shape": shape, "data_offsets": [0, 0]} for name, shape in shapes.items()}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def test_model_size_is_read_from_headers_and_refused_before_loading(tmp_path, monkeypatch):
    from core.models.loading.pretrained import load_model

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    fake_safetensors(tmp_path / "model.safetensors", {"emb": [250_000, 4096], "out": [4096, 4096]}, "BF16")
    size = folder_size(tmp_path)
    # bf16 is loaded as float32 (numpy has no bfloat16): 4 bytes a parameter in memory
    assert size.parameters == 250_000 * 4096 + 4096 * 4096 and size.bytes == 4 * size.parameters

    def never(*_, **__):
        pytest.fail("weights were loaded")

    monkeypatch.setattr("core.models.loading.hf.load_transformer", never)
    with pytest.raises(ValueError, match="1,041 million parameters: this server loads models of at most 500"):
        load_model(str(tmp_path), settings=LOCAL)
    with pytest.raises(ValueError, match="needs 3,970 MB of memory"):
        load_model(str(tmp_path), settings=OperatorSettings(local_folders=True, max_model_params=2 * 10**9))


@pytest.mark.parametrize("files, message", [
    ({}, "no .safetensors weights"),
    ({"pytorch_model.bin": b"\x80\x04pickle"}, "no .safetensors weights"),
    ({"model.safetensors": b"\xff" * 16, "config.json": b"{}"}, "not valid safetensors"),
])
def test_folders_without_safe_weights(tmp_path, files, message):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    with pytest.raises(ValueError, match=message):
        folder_size(tmp_path)


def test_pickled_weights_in_a_folder_get_our_words(tmp_path):
    """A folder with safetensors that transformers cannot use, plus a pickle: no library text,
    no path, no advice to switch weights_only off."""
    from core.models.loading.pretrained import load_model

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "not-a-model"}))
    fake_safetensors(tmp_path / "model.safetensors", {"w": [2, 2]})
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04junk")
    with pytest.raises(ValueError) as refused:
        load_model(str(tmp_path), settings=LOCAL)
    text = str(refused.value)
    assert "could not be loaded" in text and str(tmp_path) not in text and "weights_only" not in text
    assert "not-a-model" not in text                      # a crafted config is not echoed


def test_hub_size_is_checked_before_download(monkeypatch):
    """The hub's listing says how big a model is; a large one is refused before snapshot_download."""
    from types import SimpleNamespace

    import huggingface_hub

    from core.models.loading import hf as hub

    listing = SimpleNamespace(siblings=[SimpleNamespace(rfilename="model.safetensors", size=3_000_000_000),
                                        SimpleNamespace(rfilename="pytorch_model.bin", size=9)],
                              safetensors=SimpleNamespace(total=1_500_000_000))
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, *a, **k: listing)
    monkeypatch.setattr(hub, "require_hub_network", lambda: None)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda *a, **k: pytest.fail("downloaded"))
    with pytest.raises(ValueError, match="1,500 million parameters"):
        hub.fetch_hub_model("big/model", PUBLIC)
    listing.siblings = listing.siblings[1:]            # pickles only
    with pytest.raises(ValueError, match="publishes no .safetensors"):
        hub.fetch_hub_model("pickled/model", PUBLIC)


def test_store_evicts_least_recently_used_by_bytes():
    sizes = {"a": 400, "b": 300, "c": 500, "huge": 2000}
    loads = []
    store = ModelStore(1000, size_of=lambda name: sizes[name])

    def load(name):
        return store.load(name, lambda: loads.append(name) or name)

    load("a"), load("b")
    load("a")                                  # a is now the most recently used
    load("c")                                  # 1200 > 1000: b leaves, not a
    assert store.names() == ["a", "c"] and store.used_bytes == 900
    with pytest.raises(ValueError, match="this server keeps at most"):
        load("huge")
    assert store.names() == ["a", "c"] and loads == ["a", "b", "c", "huge"]


def test_store_loads_once_for_sessions_asking_together():
    store = ModelStore(10, size_of=lambda _: 1)
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.3)
        return object()

    results = []
    threads = [threading.Thread(target=lambda: results.append(store.load("m", slow))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len({id(r) for r in results}) == 1


def test_two_sessions_convert_once(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    builds = []

    def fake_build(report):
        builds.append(1)
        time.sleep(0.5)
        folder = model_cache.smollm2_cache_dir()
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"0" * 10)
        (folder / "config.json").write_text("{}")
        (folder / "tokenizer.json").write_text("{}")
        model_cache._write_marker(folder, "fake")     # every file's size and hash, as a real build
        return folder

    monkeypatch.setattr(model_cache, "build_smollm2_cache", fake_build)
    messages, results = [], []
    threads = [threading.Thread(target=lambda: results.append(model_cache.ensure_smollm2_cache(messages.append)))
               for _ in range(3)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert builds == [1] and sorted(rebuilt for _, rebuilt in results) == [False, False, True]
    assert any("Another visitor is preparing SmolLM2" in m for m in messages)


def test_staging_of_a_killed_conversion_is_removed(tmp_path, monkeypatch):
    """A real conversion, killed with SIGKILL while it writes: its staging folder is removed at
    the next start, and the next conversion completes."""
    env = {**os.environ, "EMBEDDING_LENS_CACHE": str(tmp_path)}
    script = "from core.models.loading.smollm2_cache import ensure_smollm2_cache; ensure_smollm2_cache()"
    root = ROOT
    child = subprocess.Popen([sys.executable, "-c", script], cwd=root, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and not list(tmp_path.glob(".smollm2-*")):
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert list(tmp_path.glob(".smollm2-*")), "the conversion did not reach its staging folder"
    assert not model_cache.cache_is_complete(tmp_path / f"smollm2-v{model_cache.CACHE_VERSION}")
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    model_cache.clean_interrupted_conversions()
    assert not list(tmp_path.glob(".smollm2-*"))


def test_cleaning_waits_for_a_running_conversion(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    staging = tmp_path / ".smollm2-running"
    staging.mkdir()
    with model_cache.conversion_lock():
        done = threading.Thread(target=model_cache.clean_interrupted_conversions)
        done.start()
        done.join()
        assert staging.exists()                 # in use by the lock's holder: left alone
    model_cache.clean_interrupted_conversions()
    assert not staging.exists()


def test_public_config_shows_no_error_details():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
