"""The docs' pictures are made by scripts/screenshots.py from the running app: the script, run as the
README says (its own process, its own Chromium) against a test server into a temporary folder, writes
each picture of its list, each the size of its window and not blank; docs/images is left as it is."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from browser_helpers import ROOT, free_port, require_chromium, start_server, stop_server

require_chromium()
SCRIPT = ROOT / "scripts" / "screenshots.py"
DOCS_IMAGES = ROOT / "docs" / "images"
# Right of the sidebar (300 px wide at 1280 px), at least this share of a picture's pixels differs from
# its commonest colour: a page whose main column stayed empty fails (measured when written: 8 % on
# Geometry, 13 % on Home, 26 % on Lookup; an empty main column is 0).
MAIN_FROM_X = 320
DRAWN_SHARE = 0.02


@pytest.fixture(scope="module")
def server():
    """The app as the script starts it: no warm-up (no banner over the pages)."""
    port = free_port()
    process = start_server(port, env={"EMBEDDING_LENS_WARM": "none"})
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


def fingerprints(folder) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.glob("*.png"))}


def drawn_share(path, left: int = MAIN_FROM_X) -> float:
    """The share of the picture's pixels right of x = left that differ from their commonest colour (0
    for a blank one)."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = image.convert("RGB").crop((left, 0, image.width, image.height))
        colours = pixels.getcolors(maxcolors=pixels.width * pixels.height)
        return 1 - max(count for count, _ in colours) / (pixels.width * pixels.height)


def test_the_script_makes_every_picture_and_none_is_blank(server, tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import screenshots
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    before = fingerprints(DOCS_IMAGES)
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "images"), "--url", server],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    made = sorted(path.name for path in (tmp_path / "images").glob("*.png"))
    assert made == sorted(name for name, _, _ in screenshots.SHOTS)
    from PIL import Image

    for name in made:
        with Image.open(tmp_path / "images" / name) as image:
            assert image.format == "PNG" and image.size == (screenshots.VIEWPORT["width"],
                                                            screenshots.VIEWPORT["height"]), name
        assert drawn_share(tmp_path / "images" / name) > DRAWN_SHARE, name
    assert fingerprints(DOCS_IMAGES) == before


def test_the_blank_check_sees_a_blank_picture(tmp_path):
    """drawn_share can fail: a sidebar beside an empty page is 0, something drawn in the page is not."""
    from PIL import Image, ImageDraw

    only_sidebar = Image.new("RGB", (1280, 800), "white")
    ImageDraw.Draw(only_sidebar).rectangle((0, 0, 299, 799), fill="#f0f2f6")     # a sidebar, an empty page
    only_sidebar.save(tmp_path / "blank.png")
    assert drawn_share(tmp_path / "blank.png") == 0
    ImageDraw.Draw(only_sidebar).rectangle((400, 100, 700, 300), fill="black")
    only_sidebar.save(tmp_path / "drawn.png")
    assert drawn_share(tmp_path / "drawn.png") > DRAWN_SHARE
