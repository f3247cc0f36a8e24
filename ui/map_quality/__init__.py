"""Page sections of map quality: hubness (Geometry), each point's faithfulness and clusters' stability (Maps)."""
