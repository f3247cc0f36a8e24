"""The seeds' worked demos, computed exactly as the articles give them."""
