"""Golden snapshot of a whole small site (tests/data/site built with its baseline and history).

Regenerate after an intended change with `SITEGEN_REGEN_GOLDEN=1 python -m pytest tests/test_site_golden.py`
(which rewrites only the files that changed, lists them and fails) and review `git diff tests/golden/site`. The copied assets (plotly.js, the site's CSS/JS, which live in
templates/assets) are listed with a hash in FILES.txt instead of being stored again.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from helpers import REGEN, fail_rewritten, rewrite_golden, snapshot

GOLDEN = Path(__file__).parent / "golden" / "site"
LISTING = "FILES.txt"


# The plotly bundle comes from whatever plotly is installed: keep its version out of the snapshot.
_PLOTLY_NAME = re.compile(rb"plotly-\d+\.\d+\.\d+\.min\.js")
_STYLE_GUARD = re.compile(rb'<meta id="[0-9a-f]+" name="sitegen-style-guard"')


def _normalise(data: bytes) -> bytes:
    data = _PLOTLY_NAME.sub(b"plotly-VERSION.min.js", data)
    return _STYLE_GUARD.sub(b'<meta id="PLOTLY-STYLE-ID" name="sitegen-style-guard"', data)


# The build status (for incremental rebuilds) holds a hash of sitegen's own code: listed, never compared.
_STATUS_FILE = ".sitegen-status.json"


def _listed_only(name: str) -> bool:
    return name == _STATUS_FILE or (name.startswith("assets/") and name != "assets/history-data.js")


def _listing(files: dict[str, bytes]) -> str:
    lines = []
    for name, data in sorted(files.items()):
        if name.startswith("assets/plotly-"):
            lines.append("assets/plotly-VERSION.min.js  (the installed plotly's bundle)")
            continue
        if name == _STATUS_FILE:
            lines.append(f"{name}  (build status: changes with sitegen's code)")
            continue
        digest = hashlib.sha256(data).hexdigest()[:16] if _listed_only(name) else "golden"
        lines.append(f"{name}  {digest}")
    return "\n".join(lines) + "\n"


def test_golden_site(site: Path) -> None:
    files = snapshot(site)
    expected = {name: _normalise(data) for name, data in files.items() if not _listed_only(name)}
    expected[LISTING] = _listing(files).encode("utf-8")
    if REGEN:
        stale = set(snapshot(GOLDEN)) - set(expected) if GOLDEN.is_dir() else set()
        changed = [GOLDEN / name for name, data in sorted(expected.items()) if rewrite_golden(GOLDEN / name, data)]
        changed += [GOLDEN / name for name in sorted(stale) if rewrite_golden(GOLDEN / name, None)]
        fail_rewritten(changed)
        return
    assert GOLDEN.is_dir(), "no golden site; run with SITEGEN_REGEN_GOLDEN=1 to create it"
    golden = snapshot(GOLDEN)
    missing, extra = sorted(set(golden) - set(expected)), sorted(set(expected) - set(golden))
    differing = sorted(name for name in set(golden) & set(expected) if golden[name] != expected[name])
    assert not (missing or extra or differing), (
        f"the site differs from tests/golden/site: missing {missing}, new {extra}, changed {differing}; "
        "if intended, rerun with SITEGEN_REGEN_GOLDEN=1 and review git diff tests/golden/site"
    )
