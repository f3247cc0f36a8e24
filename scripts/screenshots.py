"""Pictures for the README and docs/: start the app as the README does, open a few pages on toy
tables in Debian's Chromium (Playwright's sync API) and save them into docs/images/.

    .venv/bin/python scripts/screenshots.py                      # docs/images/*.png
    .venv/bin/python scripts/screenshots.py --out DIR --url URL  # into DIR, from an app already running

tests/browser/test_screenshots_script.py runs it against a test server into a temporary folder.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser_helpers import CHROMIUM, FLAGS, free_port, start_server, stop_server, wait_until_idle  # noqa: E402

IMAGES = ROOT / "docs" / "images"
VIEWPORT = {"width": 1280, "height": 800}
SHOTS = [   # (file, address, figures to wait for)
    ("home.png", "/", 0),
    ("lookup.png", "/lookup?table=seed003", 0),
    ("geometry.png", "/geometry?table=seed001-lab&dims=2&query=zamek", 1),
]


def take(base_url: str, images: Path) -> list[Path]:
    """Each of SHOTS from the app at base_url, saved into images/ -> the files written."""
    from playwright.sync_api import sync_playwright

    images.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport=VIEWPORT)
        for name, address, plots in SHOTS:
            page.goto(f"{base_url}{address}")
            page.wait_for_selector('[data-testid="stApp"]')
            wait_until_idle(page, plots=plots)
            page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
            wait_until_idle(page, plots=plots)
            page.screenshot(path=str(images / name))
            written.append(images / name)
            print(images / name, (images / name).stat().st_size, "bytes")
        browser.close()
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=IMAGES, help="the folder the pictures go to (docs/images)")
    parser.add_argument("--url", help="an app already running (its warm-up off: EMBEDDING_LENS_WARM=none); "
                                      "by default one is started here")
    arguments = parser.parse_args(argv)
    if arguments.url:
        take(arguments.url.rstrip("/"), arguments.out)
        return
    port = free_port()
    server = start_server(port, env={"EMBEDDING_LENS_WARM": "none"})   # no warm-up banner
    try:
        take(f"http://127.0.0.1:{port}", arguments.out)
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
