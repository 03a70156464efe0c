"""Short content digests as sitegen writes them (`traceDigest`, `caseDigest`): `sha256:` and 16 hex digits."""

from __future__ import annotations

import hashlib

DIGEST_PREFIX = "sha256:"
_HEX_DIGITS = 16


def short_digest(data: bytes) -> str:
    """`sha256:` and the first 16 hex digits of the SHA-256 of `data`."""
    return from_hexdigest(hashlib.sha256(data).hexdigest())


def from_hexdigest(hexdigest: str) -> str:
    """The short digest of a SHA-256 already computed (its hex digest), as `short_digest` gives it."""
    return DIGEST_PREFIX + hexdigest[:_HEX_DIGITS]
