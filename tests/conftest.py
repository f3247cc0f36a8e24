"""Test setup: offline model hubs, and the model cache prepared before any test opens a page.
Shared helpers live in helpers.py (AppTest) and browser_helpers.py (Chromium), not here."""
from __future__ import annotations

import os

import pytest

# Tests never download weights: the hub is off for every test.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# No warm-up in tests (AppTest in this process, and the servers tests start): a test that wants
# one sets EMBEDDING_LENS_WARM itself.
os.environ.setdefault("EMBEDDING_LENS_WARM", "none")


@pytest.fixture(scope="session", autouse=True)
def prepared_models():
    """The SmolLM2 cache exists before any test opens a page: on a fresh machine (an empty
    EMBEDDING_LENS_CACHE) it is converted here once, within the conversion's own time limit,
    not inside a page test that would time out while it runs."""
    from core.models.loading.smollm2_cache import ensure_smollm2_cache

    ensure_smollm2_cache()
