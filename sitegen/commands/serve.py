"""`sitegen serve`: preview the site on the loopback interface, rebuilding it on every change with --watch
(docs/cli.md, "Previewing the site"); the server is site/preview/server.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from sitegen import defaults
from sitegen.commands.console import command_console
from sitegen.commands.options import BaselineOpt, CasesOpt, ConfigOpt, FixturesOpt, QuietOpt, VerboseOpt
from sitegen.defaults import DEFAULT_BASELINE, DEFAULT_OUT


def run(
    out: Annotated[
        Optional[Path],
        typer.Option("--out", help=f"The site folder to serve. Default: {DEFAULT_OUT} in the suite's folder, else here."),
    ] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = defaults.DEFAULT_PORT,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Build the site, then rebuild it whenever cases, fixtures, config or templates change: one result "
            "line per rebuild, and the page open in the browser reloads.",
        ),
    ] = False,
    cases: CasesOpt = None,
    fixtures: FixturesOpt = None,
    config: ConfigOpt = None,
    baseline: BaselineOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Preview the site on http://127.0.0.1:PORT/ (loopback only) until Ctrl+C.

    --cases, --fixtures, --config and --baseline are used by --watch, which needs the watchfiles package
    (pip install watchfiles).

    Example: sitegen serve --out site --port 8000 --watch
    """
    from sitegen.site.preview.server import run_preview
    from sitegen.suite.discovery import suite_folder, suite_inputs

    console = command_console()
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
