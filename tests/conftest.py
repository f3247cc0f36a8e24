"""Test setup: offline model hubs, and the model cache prepared before any test opens a page.
Shared helpers live in helpers.py (AppTest) and browser_helpers.py (Chromium), not here."""
from __future__ import annotations

import os

import pytest

# Tests never download weights: the hub is off for every test.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def prepared_models():
    """The SmolLM2 cache exists before any test opens a page: on a fresh machine (an empty
    EMBEDDING_LENS_CACHE) it is converted here once, within the conversion's own time limit,
    not inside a page test that would time out while it runs."""
    from core.models.smollm2_cache import ensure_smollm2_cache

    ensure_smollm2_cache()
