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
DRAWN_SHARE = 0.01      # of a picture's pixels at least this share differs from its commonest colour


@pytest.fixture(scope="module")
def server():
    """The app as the script starts it: no warm-up (no banner over the pages)."""
    port = free_port()
    process = start_server(port, env={"EMBEDDING_LENS_WARM": "none"})
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


def fingerprints(folder) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.glob("*.png"))}


def drawn_share(path) -> float:
    """The share of the picture's pixels that differ from its commonest colour (0 for a blank one)."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = image.convert("RGB")
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
    """drawn_share can fail: one colour everywhere is 0, a picture with text on it is not."""
    from PIL import Image, ImageDraw

    Image.new("RGB", (200, 100), "white").save(tmp_path / "blank.png")
    assert drawn_share(tmp_path / "blank.png") == 0
    image = Image.new("RGB", (200, 100), "white")
    ImageDraw.Draw(image).rectangle((10, 10, 60, 40), fill="black")
    image.save(tmp_path / "drawn.png")
    assert drawn_share(tmp_path / "drawn.png") > DRAWN_SHARE
