"""Pictures for the README and docs/: start the app as the README does, open a few pages on toy
tables in Debian's Chromium (Playwright's sync API) and save them into docs/images/.

    .venv/bin/python scripts/screenshots.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_helpers import CHROMIUM, FLAGS, free_port, start_server, stop_server, wait_until_idle  # noqa: E402

IMAGES = ROOT / "docs" / "images"
SHOTS = [   # (file, address, figures to wait for)
    ("home.png", "/", 0),
    ("lookup.png", "/lookup?table=seed003", 0),
    ("geometry.png", "/geometry?table=seed001-lab&dims=2&query=zamek", 1),
]


def main() -> None:
    from playwright.sync_api import sync_playwright

    IMAGES.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start_server(port, env={"EMBEDDING_LENS_WARM": "none"})   # no warm-up banner
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for name, address, plots in SHOTS:
                page.goto(f"http://127.0.0.1:{port}{address}")
                page.wait_for_selector('[data-testid="stApp"]')
                wait_until_idle(page, plots=plots)
                page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
                wait_until_idle(page, plots=plots)
                page.screenshot(path=str(IMAGES / name))
                print(IMAGES / name, (IMAGES / name).stat().st_size, "bytes")
            browser.close()
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
