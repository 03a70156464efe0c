"""`sitegen build`: evaluate, diff against the baseline, record the run and write the site; the build itself is
site/pipeline.py's, this is what the command prints and writes around it."""

from __future__ import annotations

import sys
from pathlib import Path

from sitegen.commands.diff import diff_lines
from sitegen.commands.evaluate import junit_text
from sitegen.commands.output import Console, write_outputs
from sitegen.compare.job_summary import append_step_summary, build_summary_markdown
from sitegen.defaults import DEFAULT_JUNIT_KNOWN_FAILURES
from sitegen.formatting import byte_size, percent
from sitegen.plumbing.progress import progress_for
from sitegen.site import pipeline
from sitegen.site.pipeline import BuildOptions

__all__ = ["BuildOptions", "run"]  # the command line fills BuildOptions from its options


def run(
    options: BuildOptions, console: Console, *, junit_out: Path | None = None,
    junit_known_failures: str = DEFAULT_JUNIT_KNOWN_FAILURES,
) -> int:
    """Build the site, then the JUnit file inside or beside it, the result lines and the job summary; 1 when
    --fail-on-regression was given and anything regressed, else 0."""
    result = pipeline.build_site(options, progress_for(sys.stderr, quiet=console.quiet))
    report, diff = result.report, result.diff
    for warning in result.warnings:
        console.warn(warning)
    if junit_out is not None:
        # After the site is swapped in, so a JUnit file inside --out is part of the new site.
        write_outputs([(junit_out, junit_text(report, options.cases, diff, junit_known_failures))], console)
    unchanged = f", {result.reused_pages} unchanged since the last build" if result.reused_pages else ""
    size = byte_size(result.site_bytes)
    console.say(
        f"site written to {options.out}/ ({size}: {result.case_pages} case pages{unchanged}); "
        f"pass rate {percent(report.passRate)}"
    )
    if diff is not None:
        console.say(f"against {result.baseline}: {diff_lines(diff, result.baseline)[0]}")
    if append_step_summary(build_summary_markdown(report, diff, by_rule=result.by_rule, warnings=result.warnings)):
        console.detail("appended the build summary to $GITHUB_STEP_SUMMARY")
    if result.exit_code:
        console.tell(diff_lines(diff, result.baseline)[1])
    return result.exit_code
