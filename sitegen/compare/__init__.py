"""Comparing two reports: the diff items, every case's change, and their Markdown and job-summary texts."""
