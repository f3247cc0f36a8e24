"""ui/server/downloads.py against Streamlit's own MediaFileManager: a file made by a click survives
other sessions' runs until the clicking session's next run, as an eager download's does; and every
download button of the app leaves the page alone when clicked (no rerun)."""
from __future__ import annotations

import ast
import urllib.parse
from pathlib import Path

import pytest
from helpers import open_page
from streamlit.runtime import media_file_manager as streamlit_media
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from ui.server import downloads

ROOT = Path(__file__).resolve().parents[2]
BUTTON = "dl-button-coordinates"


@pytest.fixture
def manager(monkeypatch):
    """A media manager with one student ('alice') whose run drew a deferred CSV button."""
    downloads.install()
    downloads.install()                 # twice: still one wrapper around Streamlit's method
    media = MediaFileManager(MemoryMediaFileStorage("/media"))
    monkeypatch.setattr(streamlit_media, "_get_session_id", lambda: "alice")
    media.placeholder = media.add_deferred(lambda: "token,id\nthe,1\n", "text/csv", BUTTON, file_name="rows.csv")
    return media


def other_sessions_runs(media: MediaFileManager, count: int) -> None:
    """What the end of any session's script run does to files no session refers to."""
    for _ in range(count):
        media.remove_orphaned_files()


def served(media: MediaFileManager, url: str) -> bytes | None:
    file = media.read_file(downloads.stored_id(urllib.parse.urlparse(url).path))
    return None if file is None else file.content


def test_a_clicked_file_outlives_other_sessions_runs_until_its_sessions_next_run(manager):
    url = manager.execute_deferred(manager.placeholder)
    assert downloads.installed() and url.startswith("/media/") and url.endswith(".csv")
    other_sessions_runs(manager, 5)     # Streamlit alone deletes it at the second
    assert served(manager, url) == b"token,id\nthe,1\n"
    again = manager.execute_deferred(manager.placeholder)        # a second click: the same file, one reference
    assert again == url and list(manager._files_by_session_and_coord["alice"]) == [BUTTON, BUTTON + ":clicked"]
    manager.clear_session_refs("alice")  # alice's next run starts, then ends with the cleanup
    other_sessions_runs(manager, 2)
    assert served(manager, url) is None


def test_nothing_is_kept_for_a_session_that_has_ended(manager):
    manager.clear_session_refs("alice")  # the tab closed while the click's request was on its way
    url = manager.execute_deferred(manager.placeholder)
    assert served(manager, url) is not None and "alice" not in manager._files_by_session_and_coord
    other_sessions_runs(manager, 2)
    assert served(manager, url) is None


def test_the_stored_id_is_read_from_streamlits_url():
    storage = MemoryMediaFileStorage("/media")
    file_id = storage.load_and_get_id(b"a,b\n", "text/csv", streamlit_media.MediaFileKind.DOWNLOADABLE, "x.csv")
    assert downloads.stored_id(storage.get_url(file_id)) == file_id


def _download_calls() -> list[tuple[str, ast.Call]]:
    product = [p for folder in ("ui", "app_pages", "core") for p in (ROOT / folder).rglob("*.py")]
    calls = []
    for path in product + [ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "download_button":
                calls.append((f"{path.relative_to(ROOT)}:{node.lineno}", node))
    return calls


def test_every_download_button_leaves_the_page_alone_when_clicked():
    """A rerun on a click would redraw the same page, and retire the button's file id while the
    click's request is on its way (the download then fails)."""
    calls = _download_calls()
    assert len(calls) >= 8, calls
    ignoring = {place for place, call in calls
                if any(k.arg == "on_click" and isinstance(k.value, ast.Constant) and k.value.value == "ignore"
                       for k in call.keywords)}
    assert ignoring == {place for place, _ in calls}


def test_lookups_buttons_say_so_to_the_browser():
    buttons = open_page("lookup", table="seed004").get("download_button")
    assert buttons and all(button.proto.ignore_rerun for button in buttons)
    assert all(button.proto.deferred_file_id for button in buttons)
