"""A CSV made on a click stays on the server until the clicking session's next run.

The app's download buttons write their file when clicked (Streamlit's deferred downloads: writing
every CSV on every run cost ~3 ms a page run). Streamlit 1.67 stores the file a click makes, answers
the browser with its URL, and leaves the file referenced by no session
(`MediaFileManager.execute_deferred`). Every script run of *any* session ends with
`remove_orphaned_files`, which marks an unreferenced downloadable file and deletes it at the next one:
two page runs of other students between the server's answer and the browser's request for the file,
and the download is a 404 — tens of milliseconds on a class's server (60 students: ~12 runs a
second). An eager download's file, by contrast, is referenced by its session until the session's
next run.

This patch gives the clicked file the same life: referenced by the clicking session, at its button's
place, until that session's next full run clears its references (or the session ends). One file per
button and session at most: a repeated click replaces it (the same content is the same file).
A session that has no references left (ended, or between a run's start and its buttons) is not
given one, so nothing is kept for a session that is gone.

The buttons themselves do not rerun the page when clicked (`on_click="ignore"`, tested in
tests/unit/test_downloads.py): a rerun would do nothing for a download, and it would retire the
button's callable while the click's request is on its way.
"""
from __future__ import annotations

import logging

LOG = logging.getLogger("embedding_lens.downloads")
_MARK = "_embedding_lens_kept_download"
KEPT_SUFFIX = ":clicked"        # the kept file's place in the session's references: its button's + this


def installed() -> bool:
    from streamlit.runtime.media_file_manager import MediaFileManager

    return getattr(MediaFileManager.execute_deferred, _MARK, False)


def install() -> None:
    """Keep clicked downloads for their session (once per process; later calls: nothing)."""
    from core.server.objects import shared

    if not installed():
        shared("kept deferred downloads", _patch)       # two first runs at once patch once


def stored_id(url: str) -> str:
    """'/media/<id>.csv' -> '<id>' (MemoryMediaFileStorage.get_url's form)."""
    return url.rsplit("/", 1)[-1].split(".", 1)[0]


def keep_for_session(manager, url: str, session_id: str, coordinates: str) -> bool:
    """Reference the file behind `url` from `session_id` at its button's place; True when kept."""
    file_id = stored_id(url)
    with manager._lock:
        references = manager._files_by_session_and_coord.get(session_id)
        if not references or file_id not in manager._file_metadata:
            return False
        references[coordinates + KEPT_SUFFIX] = file_id
        return True


def _patch() -> bool:
    from streamlit.runtime.media_file_manager import MediaFileManager

    if installed():
        return True
    streamlit_execute = MediaFileManager.execute_deferred

    def execute_and_keep(manager, file_id: str) -> str:
        with manager._lock:
            entry = manager._deferred_callables.get(file_id)
            owner = (entry["session_id"], entry["coordinates"]) if entry else None
        url = streamlit_execute(manager, file_id)
        if owner and not keep_for_session(manager, url, *owner):
            LOG.debug("a clicked download was not kept: its session has no references")
        return url

    setattr(execute_and_keep, _MARK, True)
    MediaFileManager.execute_deferred = execute_and_keep
    return True
