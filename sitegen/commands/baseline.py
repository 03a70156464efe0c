"""`sitegen baseline`: regenerate the saved baseline (report.json + report.md) from the current traces."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.console import Console, write_outputs
from sitegen.defaults import DEFAULT_BASELINE_DIR
from sitegen.suite.discovery import suite_folder, suite_inputs


def run(cases: Path | None, fixtures: Path | None, config: Path | None, out_dir: Path | None, console: Console) -> int:
    """Write `out_dir` (default: the suite's eval/baseline)/report.json and report.md, both or neither."""
    from sitegen.evaluation.engine import evaluate_files
    from sitegen.report.report_text import baseline_texts

    cases, fixtures, config = suite_inputs(cases, fixtures, config)
    out_dir = out_dir if out_dir is not None else suite_folder().default(DEFAULT_BASELINE_DIR)
    json_text, md_text, summary = baseline_texts(evaluate_files(cases, fixtures, config))
    write_outputs([(out_dir / "report.json", json_text), (out_dir / "report.md", md_text)], console)
    console.say(f"baseline written to {out_dir}/report.json and report.md ({summary})")
    return 0
