"""From vectors to words: sampling rules, generation with the key/value cache, steering, commitment."""
