"""Exports named after what they hold (issue 31): the table and the view each file came from, and a
download button's label says the file it saves. Training's lab table downloaded as
'table-gradient-minilm.csv', the seed 003 arrows preset as 'geo-arrows-minilm.png'."""
from __future__ import annotations

import json

from helpers import assert_clean, open_page, scoped


def image_names(at) -> list[str]:
    return [json.loads(chart.proto.config)["toImageButtonOptions"]["filename"] for chart in at.get("plotly_chart")]


def test_training_exports_name_the_lab_table_not_the_sidebars():
    at = open_page("training", table="seed004")
    assert_clean(at)
    names = image_names(at)
    assert "table-gradient-seed001-lab" in names and "train-table-change-seed001-lab" in names
    assert not any("seed004" in name for name in names)
    labels = [button.proto.label for button in at.get("download_button")]
    assert "⬇ table-gradient-seed001-lab.csv" in labels and not any("seed004" in label for label in labels)


def test_the_arrows_preset_is_named_as_the_preset():
    at = open_page("geometry", table="seed004")
    assert "geo-arrows-seed004" in image_names(at)
    scoped(at, "toggle", "geo_preset_h_w").set_value(True).run()
    assert_clean(at)
    names = image_names(at)
    assert "geo-arrows-seed003-preset" in names and "geo-arrows-seed004" not in names


def test_the_candidates_button_says_the_file_it_saves():
    at = open_page("hidden", table="seed004", pct="5")
    assert_clean(at)
    label = next(b.proto.label for b in at.get("download_button") if "undertrained" in b.proto.label)
    assert label.startswith("⬇ undertrained-norm-lowest-5pct-seed004.csv (") and label.endswith(" rows)")
