"""Widgets and caches of the Context & position page."""
