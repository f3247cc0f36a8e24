"""The first visitors of a server that never ran: SmolLM2 on an empty model cache.

Two people open it at the same moment (one conversion, both served), a third comes after;
nobody sees an exception, and the server's log has no CacheReplayClosureError: progress is
drawn outside every cached function."""
from __future__ import annotations

import re

import pytest
from browser_helpers import (
    CHROMIUM,
    FLAGS,
    SCREENSHOTS,
    free_port,
    require_chromium,
    server_log,
    start_server,
    stop_server,
    wait_until_idle,
)

require_chromium()
CONVERSION_TIMEOUT = 400.0   # seconds: dequantising takes ~30 s alone, more while browsers run


@pytest.fixture
def fresh_server(tmp_path):
    cache = tmp_path / "empty-model-cache"
    cache.mkdir()
    port = free_port()
    process = start_server(port, env={"EMBEDDING_LENS_CACHE": str(cache)})
    yield f"http://127.0.0.1:{port}", port, cache
    stop_server(process)


def test_smollm2_on_an_empty_cache_for_three_visitors(fresh_server):
    from playwright.sync_api import sync_playwright

    url, port, cache = fresh_server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            visitors = [browser.new_context(viewport={"width": 1400, "height": 1600}).new_page() for _ in range(3)]
            for first in visitors[:2]:                        # both ask before either is served
                first.goto(f"{url}/?table=smollm2")
            for number, visitor in enumerate(visitors[:2]):
                wait_until_idle(visitor, timeout=CONVERSION_TIMEOUT)
                visitor.screenshot(path=str(SCREENSHOTS / f"first-visit-{number}.png"))
            visitors[2].goto(f"{url}/models?table=smollm2")
            wait_until_idle(visitors[2], plots=2, timeout=120)
            for visitor in visitors:
                assert visitor.locator('[data-testid="stException"]').count() == 0
                assert "49,152 × 576" in visitor.locator('[data-testid="stSidebar"]').inner_text()
        finally:
            browser.close()
    log = server_log(port)
    assert "CacheReplayClosureError" not in log and "Traceback" not in log
    # converted once: tqdm draws a bar's empty start (0/N) once, but may draw "100%" twice for one
    # conversion (its last update and its close), as a loaded machine showed
    assert len(re.findall(r"GGUF tensors\.\.\.:\s+0%\|[^|]*\| 0/\d+ ", log)) == 1
    assert (cache / "smollm2-v2" / "complete.json").is_file()
    assert not list(cache.glob(".smollm2-*"))
