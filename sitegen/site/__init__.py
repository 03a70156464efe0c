"""The static site: the build's steps, pages, incremental state, staging, workers, history and preview."""
