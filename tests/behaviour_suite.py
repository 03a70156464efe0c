"""The shipped suite with passing cases that behave differently against a baseline of it, built with `sitegen build`
as CI runs it (not a test: tests/test_behaviour_site.py and tests/test_browser_behaviour.py read what it builds).

The baseline is the shipped suite's report after two preparations (a long input, hostile inputs), each of which
the current run then changes:

    payment-timeout          its answer rewritten into a wrong diagnosis that keeps 支付, 超时 and 连接池 → changed (answer)
    dubbo-thread-pool-exhaustion   no longer calls query_traces, which the verifier's summary still lists, so
                             it still counts as evidence → changed (tools)
    db-connection-pool-exhaustion  query_metrics called with an input that differs past its 500-character clip
                             → changed (toolInputs)
    oom-restart              the same calls in another order → changed (toolOrder)
    milvus-retrieval-degradation   verdict PASS → LOW_CONFID, both allowed → changed (verdict)
    matrix-composer-fallback hostile inputs on both sides (markup, RTL overrides, 1 MB), changed → changed (toolInputs)
    rolling-update-502       its trace changed (the duration), nothing the agent did → still_passing
    every other case         its trace byte for byte the baseline's → unchanged
"""

from __future__ import annotations

import json
import shutil
from contextlib import chdir
from pathlib import Path
from typing import Any, NamedTuple

from typer.testing import CliRunner

from helpers import ROOT, drop_tool
from sitegen.cli import app

REWRITTEN = (
    "## 诊断结论\n\n**根因：节点网络抖动，导致支付请求偶发超时，连接池短暂不可用。**\n\n## 建议\n\n"
    "1. 重启节点。\n2. 观察支付成功率是否恢复。\n"
)
CHANGED = {
    "payment-timeout": ("answer",),
    "dubbo-thread-pool-exhaustion": ("tools",),
    "db-connection-pool-exhaustion": ("toolInputs",),
    "oom-restart": ("toolOrder",),
    "milvus-retrieval-degradation": ("verdict",),
    "matrix-composer-fallback": ("toolInputs",),
}
ALIKE = "rolling-update-502"  # its trace changed, its behaviour did not
UNCHANGED = "cert-expiry-open-api"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\u202eevil\u202c\u2067rtl"
MEGABYTE = 1_000_000


class Scenario(NamedTuple):
    """What the build printed and wrote."""

    root: Path
    site: Path
    stdout: str
    exit_code: int
    summary: str  # the job summary (GITHUB_STEP_SUMMARY)
    diff_md: str
    diff: dict[str, Any]


def _edit(fixtures: Path, name: str, change: Any) -> None:
    path = fixtures / name
    trace = json.loads(path.read_text(encoding="utf-8"))
    change(trace)
    path.write_text(json.dumps(trace, ensure_ascii=False, indent=2), encoding="utf-8")


def _calls(trace: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [call for call in trace["toolInvocations"] if call["toolName"] == name]


def _prepare(fixtures: Path) -> None:
    """What the baseline already has: a query_metrics input longer than the clip, hostile inputs."""

    def long_input(trace: dict[str, Any]) -> None:
        _calls(trace, "query_metrics")[0]["input"]["note"] = "窗口" * 300 + "baseline-tail"

    def hostile(trace: dict[str, Any]) -> None:
        calls = trace["toolInvocations"]
        calls[0]["input"] = {"selector": HOSTILE, "blob": "旧" * MEGABYTE}
        calls[1]["input"] = {"promql": HOSTILE + " then"}

    _edit(fixtures, "db-connection-pool-exhaustion.json", long_input)
    _edit(fixtures, "matrix-composer-fallback.json", hostile)


def _change(fixtures: Path) -> None:
    """What the current run does differently."""

    def rewrite(trace: dict[str, Any]) -> None:
        trace["session"]["answer"] = REWRITTEN

    def drop_traces(trace: dict[str, Any]) -> None:  # the verifier's tool_trace_summary still lists it
        drop_tool(trace, "query_traces", from_summary=False)

    def tail(trace: dict[str, Any]) -> None:
        _calls(trace, "query_metrics")[0]["input"]["note"] = "窗口" * 300 + "current-tail"

    def reorder(trace: dict[str, Any]) -> None:
        calls = trace["toolInvocations"]
        trace["toolInvocations"] = [calls[2], calls[0], calls[1], *calls[3:]]

    def verdict(trace: dict[str, Any]) -> None:
        trace["session"]["selfEvaluation"]["verifier_evaluation"]["verdict"] = "LOW_CONFID"

    def hostile(trace: dict[str, Any]) -> None:
        calls = trace["toolInvocations"]
        calls[0]["input"] = {"selector": HOSTILE, "blob": "新" * MEGABYTE}
        calls[1]["input"] = {"promql": HOSTILE + " now"}

    def duration(trace: dict[str, Any]) -> None:
        trace["session"]["totalDurationMs"] += 1

    for name, change in (
        ("payment-timeout-pass.json", rewrite), ("dubbo-thread-pool-exhaustion.json", drop_traces),
        ("db-connection-pool-exhaustion.json", tail), ("oom-restart.json", reorder),
        ("milvus-retrieval-degradation.json", verdict), ("matrix-composer-fallback.json", hostile),
        ("rolling-update-502.json", duration),
    ):  # fmt: skip
        _edit(fixtures, name, change)


def build_behaviour_site(root: Path) -> Scenario:
    """Copy the shipped suite under `root`, write its baseline, change it, and build the site against the baseline as
    CI does (`--fail-on-regression`, a job summary)."""
    shutil.copytree(ROOT / "eval", root / "eval")
    fixtures = root / "eval" / "fixtures"
    runner = CliRunner()
    with chdir(root):
        _prepare(fixtures)
        made = runner.invoke(app, ["baseline"])
        assert made.exit_code == 0, made.output
        _change(fixtures)
        summary = root / "step-summary.md"
        env = {"GITHUB_STEP_SUMMARY": str(summary), "SOURCE_DATE_EPOCH": "1700000000"}
        result = runner.invoke(app, ["build", "--out", "site", "--fail-on-regression", "--junit", "junit.xml"], env=env)
    site = root / "site"
    return Scenario(
        root, site, result.stdout, result.exit_code, summary.read_text(encoding="utf-8"),
        (site / "diff.md").read_text(encoding="utf-8"), json.loads((site / "diff.json").read_text(encoding="utf-8")),
    )
