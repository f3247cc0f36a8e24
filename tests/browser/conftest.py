"""Fixtures of the browser tests: one Chromium per module, a fresh context (no shared cookies or
session) per test."""
from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, FLAGS


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
