"""Hidden in the table: under-trained tokens, anisotropy and rogue dimensions, id gaps, and their check in the model."""
