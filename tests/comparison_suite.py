"""A small suite whose traces changed against the baseline in every way the case page's comparison shows
(docs/comparison.md), for its tests and its browser test.

The baseline is the report of an earlier build of the same cases, so it records the agent's answers:

    pool-regressed  stopped calling query_db_status and dropped a sentence of evidence  → regressed
    pool-fixed      the reverse                                                   → fixed
    rules-changed   the same trace, a forbidden phrase added to the case          → regressed, trace unchanged
    steady          the same trace, the same case                                 → unchanged
    hostile         markup, script and direction overrides in both answers        → changed answer
    cjk             a Chinese answer rewritten in part, with Latin tool names      → changed answer
    huge            1 MB answers on both sides, one sentence apart                 → changed answer
    trials          five trials passing in the baseline, one of five now (trial 1) → regressed
    trajectory      the same answer; its calls reordered, one with another input (markup in it), one left out,
                    one added                                                  → changed (behaves differently)
"""

from __future__ import annotations

from contextlib import chdir
from pathlib import Path
from typing import Any

from helpers import make_case, write_suite
from sitegen.site.pipeline import BuildOptions, BuildResult, build_site

REQUIRED = ["query_db_status"]
EVIDENCE = (
    "The payment service times out because the database connection pool is exhausted. "
    "query_db_status showed 200 of 200 connections in use, all held by the reporting job. "
)
POOL_BEFORE = EVIDENCE + "Raise the pool size and stop the reporting job from holding connections."
POOL_AFTER = (
    "The payment service times out because the database connection pool is exhausted. "
    "Raise the pool size and stop the reporting job from holding connections."
)
HOSTILE_BEFORE = "Check <script>alert('before')</script> and <b>bold</b> \u202eevil\u202c then &amp; done."
HOSTILE_AFTER = "Check <img src=x onerror=alert('after')> and <i>it</i> \u202etxet desrever\u202c then &lt; done."
CJK_BEFORE = "支付服务超时，原因是数据库连接池耗尽。调用 query_db_status 发现 200 个连接都被占用。建议扩大连接池。"
CJK_AFTER = "支付服务超时，原因是线程池耗尽。调用 query_logs 发现大量超时日志。建议扩大连接池。"
HUGE_BEFORE = "The pool is exhausted and nothing else is wrong here. " * 20_000
HUGE_AFTER = HUGE_BEFORE[:540] + "A whole new sentence appears here. " + HUGE_BEFORE[540:]
IDS = ["pool-regressed", "pool-fixed", "rules-changed", "steady", "hostile", "cjk", "huge", "trials", "trajectory"]
TRAJECTORY_BEFORE = [
    ("lookup_knowledge", {"query": "支付 超时 连接池", "top_k": 3}),
    ("query_logs", {"service": "payment-service", "query": "level:ERROR AND timeout", "limit": 50}),
    ("query_metrics", {"promql": "histogram_quantile(0.99, rate(http_server_duration_bucket[5m]))"}),
    ("query_db_status", {"instance": "pay-db-01"}),
]
TRAJECTORY_AFTER = [
    ("query_metrics", {"promql": "histogram_quantile(0.99, rate(http_server_duration_bucket[5m]))"}),
    ("lookup_knowledge", {"query": "支付 超时 连接池", "top_k": 3}),
    ("query_logs", {"service": "payment-service", "query": "level:WARN AND <b>retry</b>", "limit": 50}),
    ("query_traces", {"service": "payment-service", "operation": "submit"}),
]


def trace(
    answer: str, tools: list[tuple[str, bool]], *, mode: str = "FULL", gate: str = "PASSED", inputs: list[Any] | None = None
) -> dict[str, Any]:
    """A trace with an answer, its calls (name, success; each with its input from `inputs`), a PASS verdict and
    the given composer/gatekeeper."""
    calls = [{"toolName": name, "success": ok, "durationMs": 10} for name, ok in tools]
    for call, given in zip(calls, inputs or []):
        call["input"] = given
    return {
        "session": {
            "answer": answer,
            "totalDurationMs": 1000,
            "selfEvaluation": {
                "verifier_evaluation": {
                    "verdict": "PASS",
                    "tool_trace_summary": [{"tool_name": name} for name, _ in tools],
                    "gatekeeper_result": {"status": gate},
                    "composer_output": {"mode": mode},
                }
            },
        },
        "toolInvocations": calls,
    }


GOOD_TOOLS = [("query_logs", True), ("query_db_status", True), ("query_metrics", True)]
LOST_TOOLS = [("query_logs", True), ("query_metrics", False)]


def _case(case_id: str, **extra: Any) -> dict[str, Any]:
    fields = {
        "id": case_id, "traceFixture": f"{case_id}.json", "expectedRootCauseKeywords": ["connection pool", "200"],
        "minKeywordMatches": 1, "requiredEvidenceTools": REQUIRED, "forbiddenAnswerKeywords": ["restart the database"],
    }
    fields.update(extra)
    return make_case(**fields)


def _cases(now: bool) -> list[dict[str, Any]]:
    cases = [_case(case_id) for case_id in IDS if case_id not in ("cjk", "huge", "trials", "trajectory")]
    if now:  # the case changed, the trace did not
        cases[2] = _case("rules-changed", forbiddenAnswerKeywords=["reporting job"])
    cases.append(_case("cjk", expectedRootCauseKeywords=["连接池", "query_db_status"], requiredEvidenceTools=[]))
    cases.append(_case("huge", expectedRootCauseKeywords=["pool"], requiredEvidenceTools=[]))
    cases.append(_case("trials", traceFixture="trials"))
    cases.append(_case("trajectory", requiredEvidenceTools=["query_logs"]))
    return cases


def _traces(now: bool) -> dict[str, Any]:
    good, lost = trace(POOL_BEFORE, GOOD_TOOLS), trace(POOL_AFTER, LOST_TOOLS, mode="DEGRADED", gate="BLOCKED")
    traces: dict[str, Any] = {
        "pool-regressed.json": lost if now else good,
        "pool-fixed.json": good if now else lost,
        "rules-changed.json": good,
        "steady.json": good,
        "hostile.json": trace(HOSTILE_AFTER if now else HOSTILE_BEFORE, [("query_db_status", True)]),
        "cjk.json": trace(CJK_AFTER if now else CJK_BEFORE, [("query_logs" if now else "query_db_status", True)]),
        "huge.json": trace(HUGE_AFTER if now else HUGE_BEFORE, [("query_db_status", True)]),
    }
    calls = TRAJECTORY_AFTER if now else TRAJECTORY_BEFORE
    traces["trajectory.json"] = trace(POOL_BEFORE, [(name, True) for name, _ in calls], inputs=[given for _, given in calls])
    for number in range(1, 6):
        fails = now and number > 1
        traces[f"trials/trial-{number:03d}.json"] = lost if fails else good
    return traces


def build_comparison_site(root: Path, *, strip_evidence: bool = False) -> tuple[Path, BuildResult]:
    """Build the baseline run, then the current run against its report (with `strip_evidence`, the report as an
    older sitegen wrote it: without the evidence fields); the current site's folder and build result."""
    root.mkdir(parents=True, exist_ok=True)
    with chdir(root):  # no eval/baseline/report.json of the working directory is taken as the baseline
        before_cases, before_fixtures = write_suite(root / "before", _cases(False), _traces(False))
        build_site(BuildOptions(cases=before_cases, fixtures=before_fixtures, out=root / "before-site", cwd=root,
                                baseline=None, run_id="before"))
        report = root / "before-site" / "report.json"
        if strip_evidence:
            report = _without_evidence(report, root / "old-baseline.json")
        cases, fixtures = write_suite(root / "now", _cases(True), _traces(True))
        site = root / "site"
        result = build_site(BuildOptions(cases=cases, fixtures=fixtures, out=site, cwd=root, baseline=report,
                                         run_id="now"))
        return site, result


def _without_evidence(report: Path, target: Path) -> Path:
    import json

    data = json.loads(report.read_text(encoding="utf-8"))
    for result in data["results"]:
        for key in ("answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest"):
            result.pop(key, None)
        for trial in result.get("trialResults") or []:
            for key in ("answer", "toolCalls", "gatekeeperStatus", "composerMode", "traceDigest"):
                trial.pop(key, None)
    target.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return target
