"""`sitegen serve`: preview the site on the loopback interface, rebuilding it on every change with --watch
(docs/cli.md, "Previewing the site"); the server is site/preview/server.py."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.output import Console


def run(
    out: Path,
    port: int,
    console: Console,
    *,
    watch: bool = False,
    cases: Path,
    fixtures: Path,
    config: Path | None = None,
    baseline: Path | None = None,
) -> int:
    """Serve `out` until Ctrl+C; with `watch`, build it from the inputs first and again whenever they change."""
    from sitegen.site.preview.server import run_preview

    options = None
    if watch:
        from sitegen.site.pipeline import BuildOptions

        # A fixed run id: each preview rebuild replaces the previous preview run in the history.
        options = BuildOptions(
            cases=cases, fixtures=fixtures, config=config, baseline=baseline, out=out,
            run_id="local-preview", run_label="local preview",
        )
    run_preview(
        out, port, build_options=options, announce=console.say, report=console.progress,
        log=console.tell if console.verbose else None,
    )
    return 0
