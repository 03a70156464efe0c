"""`sitegen serve`: the local preview server and its live reload."""
