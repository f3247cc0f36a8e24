"""From vectors to words: the page's sections (sampling, branching, commitment, steering)."""
