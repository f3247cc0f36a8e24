"""Analogies & axes: directions named by words."""
