"""Compare tables: two tables compared on the words they share."""
