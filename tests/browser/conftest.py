"""Fixtures of the browser tests: one Chromium per module, a fresh context (no shared cookies or
session) per test."""
from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, FLAGS, free_port, start_server, stop_server


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 2200})
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture(scope="module")
def server():
    """One app server per module on a free port (a module that needs other settings defines its own)."""
    port = free_port()
    process = start_server(port)
    yield f"http://127.0.0.1:{port}"
    stop_server(process)
