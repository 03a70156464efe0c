"""`sitegen serve`: preview the site on the loopback interface, rebuilding it on every change with --watch
(docs/cli.md, "Previewing the site"); the server is site/preview/server.py."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.console import Console
from sitegen.defaults import DEFAULT_BASELINE, DEFAULT_OUT
from sitegen.suite.discovery import suite_folder, suite_inputs


def run(
    out: Path | None,
    port: int,
    console: Console,
    *,
    watch: bool = False,
    cases: Path | None = None,
    fixtures: Path | None = None,
    config: Path | None = None,
    baseline: Path | None = None,
) -> int:
    """Serve `out` (default: the suite's site folder) until Ctrl+C; with `watch`, build it from the inputs (the
    suite's, when no option names them) first and again whenever they change."""
    from sitegen.site.preview.server import run_preview

    suite = suite_folder()
    out = out if out is not None else suite.default(DEFAULT_OUT)
    options = None
    if watch:
        from sitegen.site.pipeline import BuildOptions

        cases, fixtures, config = suite_inputs(cases, fixtures, config, suite.cwd)
        # A fixed run id: each preview rebuild replaces the previous preview run in the history.
        options = BuildOptions(
            cases=cases, fixtures=fixtures, config=config, baseline=baseline, out=out,
            run_id="local-preview", run_label="local preview", default_baseline=suite.default(DEFAULT_BASELINE),
        )
    run_preview(
        out, port, build_options=options, announce=console.say, report=console.progress,
        log=console.tell if console.verbose else None,
    )
    return 0
