"""`sitegen baseline`: regenerate the saved baseline (report.json + report.md) from the current traces."""

from __future__ import annotations

from pathlib import Path

from sitegen.commands.evaluate import evaluated, one_line_summary
from sitegen.commands.console import Console, write_outputs
from sitegen.defaults import DEFAULT_BASELINE_DIR
from sitegen.suite.discovery import suite_folder, suite_inputs

BASELINE_TITLE = "Diagnosis eval baseline"


def baseline_texts(cases: Path, fixtures: Path, config: Path | None) -> tuple[str, str, str]:
    """report.json's and report.md's texts of the baseline of these inputs, and its summary line."""
    from sitegen.report.report_json import report_json
    from sitegen.report.report_markdown import report_markdown

    report = evaluated(cases, fixtures, config)
    return report_json(report), report_markdown(report, title=BASELINE_TITLE), one_line_summary(report).splitlines()[0]


def run(cases: Path | None, fixtures: Path | None, config: Path | None, out_dir: Path | None, console: Console) -> int:
    """Write `out_dir` (default: the suite's eval/baseline)/report.json and report.md, both or neither."""
    cases, fixtures, config = suite_inputs(cases, fixtures, config)
    out_dir = out_dir if out_dir is not None else suite_folder().default(DEFAULT_BASELINE_DIR)
    json_text, md_text, summary = baseline_texts(cases, fixtures, config)
    write_outputs([(out_dir / "report.json", json_text), (out_dir / "report.md", md_text)], console)
    console.say(f"baseline written to {out_dir}/report.json and report.md ({summary})")
    return 0
