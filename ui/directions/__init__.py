"""Axes & analogies page sections beyond the page script: CSLS ranking of analogies."""
