"""Maps and neighbour lists that say where they lie: hubness, each point's faithfulness, clusters' stability."""
