"""Maps: t-SNE and UMAP of a set of rows, their clusters, and the child process that makes them."""
