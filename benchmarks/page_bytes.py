#!/usr/bin/env python3
"""Where a built site's bytes go: each case page split into its sections, pages against their raw traces, the
site's files by kind.

For each case page: its bytes per section (the head and frame, the result box, the comparison, each `<section
id=…>` card, the footer), each split into text (what a reader sees, entities decoded) and markup (tags,
attributes, whitespace between tags); its size against its raw trace file's (`cases/<slug>.trace.json`) and
against the per-page target (a page at most 1.5 × its trace's bytes + 6 KB; benchmarks/RESULTS.md). For the
whole site: the bytes of case pages, raw traces, assets and data files, and the site against the traces it shows
(target: 2 ×).

Example: python benchmarks/page_bytes.py site/ --pages 3
"""

from __future__ import annotations

import argparse
import html
import re
import statistics
from collections import defaultdict
from pathlib import Path

# Where a section of a case page begins, in page order; everything up to the first is the head and the frame.
_BOUNDARIES = re.compile(
    r'<main id="content"|<section class="card[^"]*" id="(?P<card>[a-z-]+)"|<p class="compare-line"|'
    r'<div class="case-layout">|</main>'
)
_TAG = re.compile(r"<[^>]*>")
PAGE_TARGET_RATIO, PAGE_TARGET_EXTRA = 1.5, 6 * 1024
SITE_TARGET_RATIO = 2.0


def sections(page: str) -> list[tuple[str, str]]:
    """The page cut into (name, text) pieces at its section boundaries."""
    pieces, name, start = [], "head and frame", 0
    for match in _BOUNDARIES.finditer(page):
        pieces.append((name, page[start:match.start()]))
        token = match.group(0)
        if match.group("card"):
            name = f"#{match.group('card')}"
        elif token.startswith("<main"):
            name = "pager"
        elif token.startswith("<p"):
            name = "#comparison (one line)"
        elif token.startswith("<div"):
            name = "toc"
        else:
            name = "footer"
        start = match.start()
    pieces.append((name, page[start:]))
    return [(n, p) for n, p in pieces if p]


def text_bytes(piece: str) -> int:
    """The bytes of what a reader sees: the text between tags, entities decoded, runs of whitespace as one."""
    text = html.unescape(_TAG.sub(" ", piece))
    return len(re.sub(r"\s+", " ", text).strip().encode("utf-8"))


def page_table(path: Path) -> list[tuple[str, int, int]]:
    """(section, bytes, text bytes) of one page."""
    page = path.read_text(encoding="utf-8")
    return [(name, len(piece.encode("utf-8")), text_bytes(piece)) for name, piece in sections(page)]


def print_page(path: Path) -> None:
    """One page's sections, largest first."""
    rows = page_table(path)
    total = sum(size for _, size, _ in rows)
    trace = path.with_name(path.name[: -len(".html")] + ".trace.json")
    trace_size = trace.stat().st_size if trace.exists() else 0
    print(f"\n{path.name}: {total:,} B (trace {trace_size:,} B, target {_target(trace_size):,} B)")
    print(f"  {'section':<24}{'bytes':>8}{'text':>8}{'markup':>8}")
    for name, size, text in sorted(rows, key=lambda row: -row[1]):
        print(f"  {name:<24}{size:>8,}{text:>8,}{size - text:>8,}")


def _target(trace_size: int) -> int:
    return int(PAGE_TARGET_RATIO * trace_size + PAGE_TARGET_EXTRA)


def site_kinds(site: Path) -> dict[str, list[int]]:
    """Sizes of the site's files grouped by kind."""
    kinds: dict[str, list[int]] = defaultdict(list)
    for path in site.rglob("*"):
        if not path.is_file():
            continue
        rel = path.relative_to(site).as_posix()
        if rel.startswith("cases/") and rel.endswith(".html"):
            kind = "case pages"
        elif rel.startswith("cases/"):
            kind = "raw traces"
        elif re.fullmatch(r"index(-\d+)?\.html", rel):
            kind = "index and case list pages"
        elif rel.startswith("assets/"):
            kind = rel if rel in ("assets/search-text.js", "assets/history-data.js") else "assets (CSS, JS, plotly.js)"
        else:
            kind = rel
        kinds[kind].append(path.stat().st_size)
    return kinds


def main() -> None:
    """Print the per-section split of a few pages, the page/trace ratios and the site's bytes by kind."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--pages", type=int, default=2, help="how many case pages to split into sections")
    args = parser.parse_args()
    pages = sorted((args.site / "cases").glob("*.html"))
    for path in pages[: args.pages]:
        print_page(path)
    ratios, over, sizes = [], [], []
    for path in pages:
        trace = path.with_name(path.name[: -len(".html")] + ".trace.json")
        if not trace.exists():
            continue
        size, trace_size = path.stat().st_size, trace.stat().st_size
        sizes.append(size)
        ratios.append(size / trace_size)
        if size > _target(trace_size):
            over.append((path.name, size, _target(trace_size)))
    if ratios:
        print(f"\n{len(ratios)} case pages with a raw trace: page/trace median {statistics.median(ratios):.2f}, "
              f"max {max(ratios):.2f}; page median {statistics.median(sizes):,} B, max {max(sizes):,} B; "
              f"over the target (1.5 × trace + 6 KB): {len(over)}")
        for name, size, target in over[:5]:
            print(f"  {name}: {size:,} B > {target:,} B")
    kinds = site_kinds(args.site)
    total = sum(sum(v) for v in kinds.values())
    traces = sum(kinds.get("raw traces", []))
    print(f"\nsite {total:,} B in {sum(len(v) for v in kinds.values()):,} files; raw traces {traces:,} B"
          + (f"; site/traces {total / traces:.2f} (target {SITE_TARGET_RATIO:g})" if traces else ""))
    for kind, values in sorted(kinds.items(), key=lambda item: -sum(item[1])):
        share = f"{sum(values) / traces:.3f} × traces" if traces else ""
        print(f"  {kind:<32}{sum(values):>14,} B{len(values):>8} files  {share}")


if __name__ == "__main__":
    main()
