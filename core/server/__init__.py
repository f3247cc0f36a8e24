"""Server runtime: the heavy-job line, the derived-array store, warm-up, the long-lived heap and cache files."""
