"""Plotly only: arrays in, go.Figure out. The only package that imports plotly."""
