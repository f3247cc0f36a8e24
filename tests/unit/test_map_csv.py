"""The Maps page's CSV: settings in '# ' lines first, then token, id, coordinates, cluster; tokens a
spreadsheet would run as formulas neutralised (ui.render.spreadsheet_safe). Read back with the csv
module, as a spreadsheet would."""
from __future__ import annotations

import csv
import io

import numpy as np

from core.clusters import describe_clusters
from core.tables import EmbeddingTable
from core.token_props import property_matrix
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
    assert lines[:2] == ["# table evil =name", "# map: UMAP, seed 0"]       # a line break cannot start a row
    rows = list(csv.reader(io.StringIO("\n".join(lines[2:])), quoting=csv.QUOTE_NONNUMERIC))
    assert rows[0] == ["token", "id", "x", "y", "z", "cluster", "cluster label"]
    body = rows[1:]
    assert [r[0] for r in body] == ["7", "'=1+1", "plain", "'-2"]
    assert [r[1] for r in body] == [105, 100, 102, 103]                  # numbers stay numbers
    assert np.array_equal(np.array([r[2:5] for r in body]), coords)      # full precision
    assert [r[5] for r in body] == [1, 1, 0, 2] and body[2][6] == "no cluster"
    assert body[0][6] == clusters[0].label
