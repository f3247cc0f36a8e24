"""How a table is drawn: its cells (widths, one notation per column) and a narrow table that wraps."""
