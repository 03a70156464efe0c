"""Plumbing every stage uses: atomic file writes, strict JSON reading and writing, downloads within a deadline, progress, the paused cycle collector."""
