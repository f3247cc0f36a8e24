"""The Maps page's CSV: settings in '# ' lines first, then token, id, coordinates, cluster; tokens a
spreadsheet would run as formulas neutralised (ui.render.spreadsheet_safe). Read back with the csv
module, as a spreadsheet would."""
from __future__ import annotations

import csv
import io

import numpy as np

from core.maps.clusters import describe_clusters
from core.tables import EmbeddingTable
from core.tokens.props import property_matrix
from ui.map_clusters import map_csv

HOSTILE = ["=1+1", "@SUM(A1)", "plain", "-2", "a\rb", "7"]


def test_the_csv_reads_back_with_its_settings_coordinates_and_clusters():
    weight = np.arange(len(HOSTILE) * 3, dtype=np.float32).reshape(-1, 3)
    table = EmbeddingTable("evil\n=name", weight, tuple(HOSTILE), np.arange(100, 100 + len(HOSTILE)), key="upload:x")
    points = np.array([5, 0, 2, 3])
    coords = np.array([[0.1, -2.5, 3.0], [1e-9, 2.0, -1.0], [0.0, 0.0, 0.0], [4.0, 4.0, 4.0]])
    labels = np.array([0, 0, -1, 1])
    clusters = describe_clusters(coords, labels, property_matrix([HOSTILE[r] for r in points]))
    text = map_csv(table, points, coords, labels, clusters, ["table evil\n=name", "map: UMAP, seed 0"])
    lines = text.split("\n")
    assert lines[:2] == ['"# table evil =name"', '"# map: UMAP, seed 0"']   # a line break cannot start a row
    rows = list(csv.reader(io.StringIO("\n".join(lines[2:])), quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == ["token", "id", "x", "y", "z", "cluster", "cluster label"]
    body = rows[1:]
    assert [r[0] for r in body] == ["7", "'=1+1", "plain", "'-2"]
    assert [r[1] for r in body] == [105, 100, 102, 103]                  # numbers stay numbers
    assert np.array_equal(np.array([r[2:5] for r in body]), coords)      # full precision
    assert [r[5] for r in body] == [1, 1, 0, 2] and body[2][6] == "no cluster"
    assert body[0][6] == clusters[0].label


HOSTILE_NAME = 'x,=2+3,@SUM(1+1),+A1,-B2,=HYPERLINK("http:evil"),y.tsv'


def test_a_hostile_table_name_in_the_settings_lines_makes_no_formula_cell():
    """Issue 32 item 4: the settings lines were written raw, so a spreadsheet split the upload's name at
    its commas into formula cells. Read back with the csv module (quoted cells are text, unquoted are
    numbers, as a spreadsheet reads them): no text cell starts with = + - @ tab or CR, and the name
    stays whole inside its line's one cell."""
    weight = np.arange(len(HOSTILE) * 2, dtype=np.float32).reshape(-1, 2)
    table = EmbeddingTable(HOSTILE_NAME, weight, tuple(HOSTILE), np.arange(len(HOSTILE)), key="upload:x")
    points = np.arange(len(HOSTILE))
    coords = np.linspace(-3, 3, len(HOSTILE) * 2).reshape(-1, 2)
    settings = [f"Embedding Lens map of table {HOSTILE_NAME} (6 x 2)", "=cmd|' /C calc'!A0", "map: PCA"]
    text = map_csv(table, points, coords, None, [], settings)
    rows = list(csv.reader(io.StringIO(text, newline=""), quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == [f"# Embedding Lens map of table {HOSTILE_NAME} (6 x 2)"]     # one cell, not split
    assert rows[1] == ["# =cmd|' /C calc'!A0"] and rows[2] == ["# map: PCA"]
    text_cells = [cell for row in rows for cell in row if isinstance(cell, str)]
    assert not [cell for cell in text_cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert [row[0] for row in rows[4:]] == ["'=1+1", "'@SUM(A1)", "plain", "'-2", "a\rb", "7"]
    assert np.array_equal(np.array([row[2:4] for row in rows[4:]]), coords)     # numbers stay numbers
    assert [row[4] for row in rows[4:]] == [0] * len(HOSTILE)                    # no clusters: cluster 0
