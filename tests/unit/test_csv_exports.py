"""CSV exports (issue 22 item 4, issue 21 "Exports"): labels a spreadsheet would run as formulas
are neutralised with a leading apostrophe (OWASP), numbers stay numbers, files are named after
figure and table. Checked by reading the CSV back with the csv module, as a spreadsheet would."""
from __future__ import annotations

import csv
import io

import numpy as np
from helpers import open_page

import pandas as pd

from ui.render import csv_text, frame_csv_text, spreadsheet_safe

HOSTILE = ['=HYPERLINK("http://127.0.0.1:9/x","click")', "+1+1", "@SUM(1+1)", "=1+1", "-2+3",
           "\tx", "\rx", "plain", "a=b"]


def test_every_formula_start_is_neutralised():
    for text in HOSTILE:
        safe = spreadsheet_safe(text)
        assert safe == (text if text in ("plain", "a=b") else "'" + text)
        assert not safe.startswith(("=", "+", "-", "@", "\t", "\r"))


def test_csv_read_back_has_safe_labels_and_numeric_numbers():
    n = len(HOSTILE)
    matrix = np.linspace(-1.5, 2.25, n * n, dtype=np.float32).reshape(n, n)
    rows = list(csv.reader(io.StringIO(csv_text(matrix, HOSTILE, HOSTILE), newline="")))
    header, body = rows[0], rows[1:]
    assert header[0] == "row" and len(body) == n
    labels = header[1:] + [row[0] for row in body]
    for label in labels:
        assert not label.startswith(("=", "+", "-", "@", "\t", "\r")), label
    assert "'=HYPERLINK(\"http://127.0.0.1:9/x\",\"click\")" in labels and "'-2+3" in labels and "plain" in labels
    numbers = np.array([[float(cell) for cell in row[1:]] for row in body], dtype=np.float32)
    np.testing.assert_array_equal(numbers, matrix)     # full precision: float32 round-trips exactly
    negative = [cell for row in body for cell in row[1:] if float(cell) < 0]
    assert negative and all(cell.startswith("-") for cell in negative)   # -1.5 stays a number, not '-1.5


def test_numbers_are_unquoted_and_labels_quoted_in_the_raw_text():
    """A spreadsheet reads an unquoted cell as a number; a quoted CR stays inside its cell."""
    raw = csv_text(np.array([[-1.5, 2.0]], dtype=np.float32), ["-2+3"], ["=a", "b\rc"])
    assert raw.splitlines()[0] == '"row","\'=a","b'       # the CR is inside the quoted header cell
    assert raw.endswith('"\'-2+3",-1.5,2.0\n')


def test_a_frame_with_repeated_names_missing_values_and_settings_lines():
    """The one writer of every download (candidates, maps): any frame, its text made safe by position
    (a text's tokens repeat as column names), settings lines first, numbers and blanks left as they are."""
    frame = pd.DataFrame([["=1+1", 1, -0.5, None], ["+cmd", 2, np.nan, "ok"]], columns=["the", "id", "the", "@x"])
    raw = frame_csv_text(frame, preamble=["=evil", "pct: 2"])
    rows = list(csv.reader(io.StringIO(raw, newline="")))
    assert rows[:2] == [["'=evil"], ["pct: 2"]]
    assert rows[2] == ["the", "id", "the", "'@x"]
    assert rows[3][:3] == ["'=1+1", "1", "-0.5"] and rows[4][:3] == ["'+cmd", "2", ""]
    assert raw.splitlines()[3].startswith('"\'=1+1",1,-0.5,')      # numbers unquoted, text quoted
    assert frame.iloc[0, 0] == "=1+1"                                # the shown frame is not changed


def test_lookup_csv_is_named_after_figure_and_table():
    at = open_page("lookup", table="seed004")
    buttons = at.get("download_button")
    names = [button.proto.label for button in buttons]
    assert "⬇ x-lookup-seed004.csv" in names and "⬇ s-one-hot-seed004.csv" in names, names


def test_every_csv_in_product_code_is_written_by_the_one_writer():
    """Issue 32 item 4: one writer for every download. No product module writes CSV itself (to_csv,
    csv.writer, csv.DictWriter) except ui/render.py's frame_csv_text, and every "text/csv" download
    button's data comes from it (render.csv_text, render.frame_csv_text or map_clusters.map_csv)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    product = [p for folder in ("ui", "app_pages", "core") for p in (root / folder).rglob("*.py")]
    product.append(root / "app.py")
    writers = {str(p.relative_to(root)) for p in product
               if re.search(r"\.to_csv\(|csv\.(writer|DictWriter)\(", p.read_text(encoding="utf-8"))}
    assert writers == {"ui/render.py"}, writers
    source = (root / "ui" / "render.py").read_text(encoding="utf-8")
    body = source[source.index("def frame_csv_text"):source.index("def csv_text")]
    assert source.count(".to_csv(") == body.count(".to_csv(") == 1      # only inside frame_csv_text
    assert source.count("csv.writer(") == body.count("csv.writer(") == 1
    for path in product:
        text = path.read_text(encoding="utf-8")
        for call in re.finditer(r'mime="text/csv"', text):
            start = text.rfind("download_button(", 0, call.start())
            assert re.search(r"csv_text\(|frame_csv_text\(|map_csv\(", text[start:call.start()]), path


def test_streamlits_own_table_download_is_off():
    """st.dataframe's toolbar would download a table's cells raw; the app's config turns it off
    (client.disableDataExport, Streamlit 1.67), every download being the app's own CSV button."""
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["client"]["disableDataExport"] is True
    from streamlit import config as streamlit_config
    assert "client.disableDataExport" in streamlit_config._config_options_template    # the name is real


def test_lookups_tables_have_their_own_csv():
    """Streamlit's toolbar download is off, so Lookup's two tables (token <-> id, rows of E) get the
    app's CSV of the rows they show: every row of a small table, text safe, numbers exact."""
    from core.tables import EmbeddingTable
    from ui.render import table_rows_frame

    weight = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    table = EmbeddingTable("t", weight, ("=1+1", "b", "-c", "d"), np.array([7, 8, 9, 10]))
    rows = list(csv.reader(io.StringIO(frame_csv_text(table_rows_frame(table, [1])), newline=""),
                           quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == ["token id", "token", "row", "x0", "x1", "x2"]
    assert [r[:3] for r in rows[1:]] == [[7, "'=1+1", 0], [8, "b", 1], [9, "'-c", 2], [10, "d", 3]]
    np.testing.assert_array_equal(np.array([r[3:] for r in rows[1:]], dtype=np.float32), weight)
    at = open_page("lookup", table="seed004")
    assert "⬇ rows-seed004.csv (the rows shown: token id, token, row, vector)" in \
        [button.proto.label for button in at.get("download_button")]


def test_a_csv_is_written_when_its_button_is_clicked_not_on_every_run(monkeypatch):
    """Issue 35: writing every CSV on every run was ~3 ms of a page run. The buttons hold Streamlit's
    deferred downloads; clicked, each gives the figure's or table's CSV, read back as a spreadsheet would."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import app_test

    made = []

    class KeptManager(MediaFileManager):       # AppTest makes one per run and drops it after
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
    monkeypatch.setattr(app_test, "MediaFileManager", KeptManager)
    at = open_page("lookup", table="seed004")
    files = made[-1]
    buttons = [b for b in at.get("download_button") if b.proto.label.endswith(".csv")
               or ".csv (" in b.proto.label]
    assert len(buttons) == 3, [b.proto.label for b in at.get("download_button")]
    for button in buttons:
        assert button.proto.deferred_file_id and not button.proto.url
        url = files.execute_deferred(button.proto.deferred_file_id)
        text = files._storage.get_file(url.rsplit("/", 1)[-1]).content.decode("utf-8")
        header, *rows = list(csv.reader(io.StringIO(text, newline="")))
        assert rows and all(len(row) == len(header) for row in rows), button.proto.label
    rows_csv = [b for b in buttons if "rows-seed004" in b.proto.label][0]
    text = files._storage.get_file(files.execute_deferred(rows_csv.proto.deferred_file_id).rsplit("/", 1)[-1])
    header, *rows = list(csv.reader(io.StringIO(text.content.decode("utf-8"), newline="")))
    from ui import cached

    table = cached.toy_table_named("seed004")                  # a small table: every row is shown
    assert header[:3] == ["token id", "token", "row"] and [r[1] for r in rows] == list(table.tokens)
    assert [float(x) for x in rows[1][3:]] == [float(x) for x in table.weight[1]]
