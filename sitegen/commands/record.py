"""`sitegen record`: ask a running agent every case's question and save each answer as a trial (docs/trials.md,
"Recording"); the recorder is recording/recorder.py."""

from __future__ import annotations

import sys
from pathlib import Path

from sitegen.commands.console import Console
from sitegen.defaults import DEFAULT_CASES, DEFAULT_CONFIG_PATH
from sitegen.plumbing.progress import progress_for
from sitegen.recording.recorder import Recorder, RecordOptions, check_url
from sitegen.recording.request import load_record_config, resolve_headers
from sitegen.suite.discovery import suite_folder

_MAX_LISTED_FAILURES = 20
INTERRUPTED_EXIT_CODE = 130  # the shell's code for a command stopped by Ctrl+C (128 + SIGINT)


def run(
    url: str,
    out: Path,
    cases: Path | None,
    config: Path | None,
    console: Console,
    *,
    trials: int,
    concurrency: int,
    timeout: float,
    retries: int,
) -> int:
    """Record every trial not recorded yet (of the suite's cases when --cases is not given); 1 when a trial could not
    be recorded, 130 when interrupted, else 0."""
    suite = suite_folder()
    cases = suite.required(cases, DEFAULT_CASES, "--cases")
    config_path = suite.default(DEFAULT_CONFIG_PATH) if config is None else config
    request = load_record_config(config_path, explicit=config is not None)
    headers = resolve_headers(request, config_path)
    options = RecordOptions(
        url=check_url(url), out=out, trials=trials, concurrency=concurrency, timeout=timeout, retries=retries
    )
    progress = progress_for(sys.stderr, quiet=console.quiet, min_steps=1)
    console.wrote(f"the trials recorded so far in {out}/")  # each whole (an internal error may come after some)
    try:
        summary = Recorder(request, headers, options, progress).record(cases)
    except KeyboardInterrupt:
        console.tell("record: interrupted; every trial written so far is kept: rerun the same command to resume")
        return INTERRUPTED_EXIT_CODE
    console.detail(f"wrote {out / 'cases.json'}, {summary.recorded} trial file(s) and {summary.failed} error file(s) under {out}/")
    console.say(
        f"record: {summary.recorded} recorded, {summary.kept} kept from before, {summary.failed} failed "
        f"({trials} trial(s) per case into {out}/)"
    )
    if not summary.failures:
        return 0
    for failure in summary.failures[:_MAX_LISTED_FAILURES]:
        console.tell(f"  failed: {failure.case_id} trial {failure.trial}: {failure.reason}")
    if summary.failed > _MAX_LISTED_FAILURES:
        console.tell(f"  … and {summary.failed - _MAX_LISTED_FAILURES} more (see the .error.json files)")
    console.tell(f"record: {summary.failed} trial(s) could not be recorded; rerun to retry only those")
    return 1
