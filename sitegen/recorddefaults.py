"""Defaults of `sitegen record`, kept apart so the command line can show them without importing httpx."""

from __future__ import annotations

DEFAULT_TRIALS = 1
MAX_TRIALS = 999  # trial-NNN.json: three digits keep name order equal to trial order
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 64
DEFAULT_TIMEOUT = 120.0  # seconds for one request, the whole answer included
DEFAULT_RETRIES = 3
MAX_RETRIES = 20
DEFAULT_BACKOFF = 0.5  # seconds: the longest wait before the first retry; doubles with each retry
MAX_BACKOFF = 30.0
