"""The Maps page's sections: which points, the settings, making a map, drawing it with its clusters, how faithful it is."""
