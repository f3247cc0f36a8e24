"""One limit, one place (issue 22 item 6): Streamlit's upload limit is core.limits' limit, and ids
from a URL are cut at MAX_ID_CHARS (the widget's own limit), not at the free text's 2,000."""
from __future__ import annotations

import tomllib

from helpers import ROOT, open_page, texts

from core.limits import MAX_ID_CHARS, MAX_TEXT_CHARS, MAX_UPLOAD_BYTES, MAX_UPLOAD_MB


def test_streamlit_upload_limit_is_core_limits_limit():
    """Streamlit's browser side refuses files over maxUploadSize decimal megabytes (measured: a
    200,000,001-byte file is refused at 200); the parser's own check is the same number."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB
    assert MAX_UPLOAD_BYTES == config["server"]["maxUploadSize"] * 1_000_000


def entries_in_x(at) -> str:
    return {m.label: f"{m.delta} = {m.value}" for m in at.metric}["Entries in X (T × d)"]     # "T × d = count"


def test_ids_from_a_link_are_cut_at_max_id_chars():
    ids = " ".join(["1"] * 3000)                   # 5,999 characters: more than a text may have
    assert MAX_TEXT_CHARS < len(ids) < MAX_ID_CHARS
    at = open_page("lookup", mode="ids", ids=ids)
    assert not at.exception and not at.error, texts(at.error)
    assert entries_in_x(at).startswith("3000 × 4"), entries_in_x(at)   # all 3,000 ids kept
    assert not any("characters; the first" in w for w in texts(at.warning))
    longer = open_page("lookup", mode="ids", ids="1 " * (MAX_ID_CHARS // 2 + 10))
    assert any(f"the first {MAX_ID_CHARS:,} are used" in w for w in texts(longer.warning)), texts(longer.warning)
