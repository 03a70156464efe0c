"""The site's size: its bytes, counted as they are written, against GitHub Pages' limit (docs/big-suites.md)."""

from __future__ import annotations

import os

from sitegen.defaults import PAGES_SITE_LIMIT, SITE_SIZE_WARNING, CasePages


def bytes_outside(root: str, folder: str) -> int:
    """The bytes of the files under `root` outside its sub-folder `folder` (whose files are counted as written).

    A few dozen files (the reports, the index pages, the assets): looked at here rather than counted at every
    write, so each step keeps returning what it wrote and nothing else."""
    total = 0
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != folder:
                    total += bytes_outside(entry.path, "")
            else:
                total += entry.stat(follow_symlinks=False).st_size
    return total


def size_warning(size: int, case_pages: CasePages) -> str | None:
    """A warning when a site of `size` bytes nears or passes GitHub Pages' limit for a published site, with what
    to do about it under `--case-pages case_pages`; None while it is well within."""
    share = size / PAGES_SITE_LIMIT
    if share < SITE_SIZE_WARNING:
        return None
    limit = f"GitHub Pages' {PAGES_SITE_LIMIT / 1e9:g} GB limit for a published site"
    against = f"over {limit}" if share > 1 else f"{share:.0%} of {limit}"
    return f"the site is {size / 1e9:.2f} GB, {against}: {CasePages(case_pages).next_step} (docs/big-suites.md)"
