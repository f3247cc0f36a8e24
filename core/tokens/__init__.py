"""Tokens: what kind a token string is (the one special-token rule), its pieces and its properties."""
