"""A session's uploads: parsed once per file, at most MAX_SESSION_UPLOADS kept, the oldest closed
with a message. Driven through AppTest scripts that call the shared helpers as the sidebar does."""
from __future__ import annotations

from helpers import TIMEOUT, texts
from streamlit.testing.v1 import AppTest


def keep_four_uploads():
    import numpy as np
    import streamlit as st

    from core.tables import EmbeddingTable
    from ui import state, tables

    for number in range(4):
        table = EmbeddingTable(f"t{number}.npy", np.eye(3) * (number + 1), ("a", "b", "c"), np.arange(3),
                               key=f"upload:t{number}")
        tables.keep_upload(table)
    state.show_pending_warnings()
    st.write(list(st.session_state["uploads"]))


def test_a_session_keeps_three_uploads():
    at = AppTest.from_function(keep_four_uploads, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.session_state["uploads"]) == ["upload:t1", "upload:t2", "upload:t3"]
    assert "upload:t0" not in at.session_state["extra_tables"]
    assert at.session_state["keep_table"] == "upload:t3"
    assert any("'t0.npy' was closed: a session keeps 3 uploads" in w for w in texts(at.warning))


def parse_twice():
    import io

    import numpy as np
    import streamlit as st

    import core.uploads
    from ui import tables

    calls = []
    original = core.uploads.parse_upload
    core.uploads.parse_upload = lambda *args: calls.append(1) or original(*args)

    class Upload:          # what st.file_uploader returns: a name, an id, the bytes
        name, file_id = "w.npy", "file-1"

        def getvalue(self):
            buffer = io.BytesIO()
            np.save(buffer, np.eye(3, dtype=np.float32))
            return buffer.getvalue()

    try:
        first = tables.parsed_upload(Upload(), None, None)
        again = tables.parsed_upload(Upload(), None, None)
    finally:
        core.uploads.parse_upload = original
    st.write(f"parses={len(calls)} same={first is again}")


def test_an_upload_is_parsed_once():
    at = AppTest.from_function(parse_twice, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.markdown[0].value == "parses=1 same=True"
