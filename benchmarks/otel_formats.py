#!/usr/bin/env python3
"""Build the same suite from native traces and from OpenTelemetry traces of the same content: the ratio of the two.

Generates bench.py's suite of N cases (about 8 KB a native trace), then writes each trace again as the OTLP JSON
an OpenTelemetry file exporter writes for the same run (write_otlp_trace: an `invoke_agent` span with the question,
answer and the audit fields as attributes, a model call with its tokens, an `execute_tool` span per tool call with
its input and output, the verdict as a `gen_ai.evaluation.result` event; two exports, so two JSON Lines), with a
case file pointing at them and an `[otel]` config naming the attributes. Both suites are evaluated into a baseline
of their own; then, for each repetition, a full build of each (fresh process, fresh output folder) by turns, so
that a machine shared with other work slows them alike. The medians of wall time and of CPU time (the build's
and its workers', which a busy machine disturbs less) and their ratios are reported (the target: OTLP within
1.3 × native).

Example: python benchmarks/otel_formats.py --cases 10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import generate_suite, load_average, measured_env, run_measured, settle

OTEL_TOML = """[otel]
gatekeeperStatusAttribute = "diagnosis.gatekeeper.status"
ruleSetVersionAttribute = "diagnosis.gatekeeper.rule_set_version"
claimChecksAttribute = "diagnosis.claim_checks"
composerModeAttribute = "diagnosis.composer.mode"
executorAnswerAttribute = "diagnosis.executor.answer"
"""
_START = 1_800_000_000_000_000_000


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}


def _attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs.items() if value is not None]


def _span(index: int, number: int, parent: int | None, name: str, start: int, end: int, attributes: dict[str, Any], **extra: Any) -> dict[str, Any]:
    span = {"traceId": f"{index + 1:032x}", "spanId": f"{number + 1:016x}"}
    if parent is not None:
        span["parentSpanId"] = f"{parent + 1:016x}"
    span |= {"name": name, "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), "attributes": _attributes(attributes)}
    return span | {"events": extra.get("events", []), "links": [], "status": extra.get("status", {}), "flags": 257}


def otlp_lines(trace: dict[str, Any], index: int) -> str:
    """The OTLP JSON Lines of one native trace's run, in the OpenTelemetry Java SDK file exporter's layout."""
    session = trace["session"]
    verifier = session["selfEvaluation"]["verifier_evaluation"]
    begin = _START + index * 60_000_000_000
    tools, at = [], begin + 1_000_000
    for number, call in enumerate(trace["toolInvocations"], 2):
        end = at + call["durationMs"] * 1_000_000
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call["toolName"],
            "gen_ai.tool.call.arguments": call["input"],
            "gen_ai.tool.call.result": call["output"],
        }
        status = {} if call["success"] else {"message": "tool failed", "code": 2}
        tools.append(_span(index, number, 0, f"execute_tool {call['toolName']}", at, end, attributes, status=status))
        at = end
    total = begin + session["totalDurationMs"] * 1_000_000
    question = [{"role": "user", "parts": [{"type": "text", "content": "支付接口最近出现超时"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": session["answer"]}], "finish_reason": "stop"}]
    event = {"timeUnixNano": str(total - 1000), "name": "gen_ai.evaluation.result", "attributes": _attributes(
        {"gen_ai.evaluation.name": "verifier", "gen_ai.evaluation.score.label": verifier["verdict"]})}  # fmt: skip
    root = _span(index, 0, None, "invoke_agent diagnosis-agent", begin, total, {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "diagnosis-agent",
        "gen_ai.input.messages": question,
        "gen_ai.output.messages": answer,
        "diagnosis.gatekeeper.status": verifier["gatekeeper_result"]["status"],
        "diagnosis.gatekeeper.rule_set_version": verifier["gatekeeper_result"]["rule_set_version"],
        "diagnosis.claim_checks": verifier["claim_checks"],
        "diagnosis.composer.mode": verifier["composer_output"]["mode"],
        "diagnosis.executor.answer": session["selfEvaluation"]["executor_answer"],
    }, events=[event])  # fmt: skip
    model = _span(index, 1, 0, "chat qwen-max", begin + 100_000, begin + 900_000, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "qwen-max",
        "gen_ai.usage.input_tokens": 1234, "gen_ai.usage.output_tokens": 567,
    })  # fmt: skip
    resource = {"attributes": _attributes({"service.name": "diagnosis-agent", "telemetry.sdk.language": "java"})}
    scope = {"name": "com.example.diagnosis.agent", "version": "1.0", "attributes": []}
    return "".join(
        json.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]}, ensure_ascii=False, separators=(",", ":")) + "\n"
        for spans in (tools, [model, root])
    )


def write_otlp_suite(cases: Path, fixtures: Path, root: Path) -> tuple[Path, Path, Path]:
    """The native suite's traces written again as OTLP files: (cases file, fixtures folder, config)."""
    otlp = root / "fixtures"
    otlp.mkdir(parents=True, exist_ok=True)
    defined = json.loads(cases.read_text(encoding="utf-8"))
    for index, case in enumerate(defined):
        trace = json.loads((fixtures / case["traceFixture"]).read_text(encoding="utf-8"))
        case["traceFixture"] = case["traceFixture"].replace(".json", ".jsonl")
        (otlp / case["traceFixture"]).write_text(otlp_lines(trace, index), encoding="utf-8")
    otlp_cases = root / "cases.json"
    otlp_cases.write_text(json.dumps(defined, ensure_ascii=False, indent=1), encoding="utf-8")
    config = root / "sitegen.toml"
    config.write_text(OTEL_TOML, encoding="utf-8")
    return otlp_cases, otlp, config


def main() -> None:
    """Generate both suites, build each by turns, print the medians and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000, help="suite size (default: 10000)")
    parser.add_argument("--repeat", type=int, default=3, help="builds of each format; the median is reported")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate the suites (default: a temp folder)")
    args = parser.parse_args()
    env = measured_env(bytecode=True)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="sitegen-otel-bench-"))
    cases, fixtures = generate_suite(work / "native", args.cases)
    config = work / "native" / "sitegen.toml"
    config.write_text(OTEL_TOML, encoding="utf-8")
    suites = {"native": (cases, fixtures, config), "otlp": write_otlp_suite(cases, fixtures, work / "otlp")}
    py = sys.executable
    builds: dict[str, list[float]] = {name: [] for name in suites}
    cpu: dict[str, list[float]] = {name: [] for name in suites}  # user + system seconds of the build and its workers
    reports = {}
    for name, (suite_cases, suite_fixtures, suite_config) in suites.items():
        common = ["--cases", str(suite_cases), "--fixtures", str(suite_fixtures), "--config", str(suite_config)]
        baseline = work / name / "baseline.json"
        run_measured([py, "-m", "sitegen", "evaluate", *common, "--json", str(baseline)], dict(env, SITEGEN_CACHE_DIR=str(work / name / "cache")))
        reports[name] = json.loads(baseline.read_text(encoding="utf-8"))
    same = [
        {k: v for k, v in r.items() if k not in ("traceDigest", "tokens")} for r in reports["native"]["results"]
    ] == [{k: v for k, v in r.items() if k not in ("traceDigest", "tokens")} for r in reports["otlp"]["results"]]
    print(f"{args.cases} cases; the two reports agree (but for digests and tokens): {same}; load {load_average()}", flush=True)
    for attempt in range(args.repeat):
        for name, (suite_cases, suite_fixtures, suite_config) in suites.items():
            common = ["--cases", str(suite_cases), "--fixtures", str(suite_fixtures), "--config", str(suite_config)]
            command = [py, "-m", "sitegen", "build", *common, "--baseline", str(work / name / "baseline.json")]
            settle()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = run_measured(command + ["--out", str(work / name / f"site-{attempt}"), "--run-id", "bench"], dict(env, SITEGEN_CACHE_DIR=str(work / name / f"cache-{attempt}")))[0]
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            builds[name].append(wall)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            print(f"  {name} build {attempt + 1}: {wall:.2f} s, CPU {cpu[name][-1]:.1f} s", flush=True)
    native, otlp = statistics.median(builds["native"]), statistics.median(builds["otlp"])
    native_cpu, otlp_cpu = statistics.median(cpu["native"]), statistics.median(cpu["otlp"])
    sizes = {name: sum(p.stat().st_size for p in suite[1].iterdir()) / 2**20 for name, suite in suites.items()}
    print(
        f"full build, median of {args.repeat}: native {native:.2f} s ({sizes['native']:.0f} MiB of traces), "
        f"OTLP {otlp:.2f} s ({sizes['otlp']:.0f} MiB); OTLP / native {otlp / native:.2f} (target ≤ 1.3); load {load_average()}"
    )
    print(f"CPU time of the build and its workers, median: native {native_cpu:.1f} s, OTLP {otlp_cpu:.1f} s; OTLP / native {otlp_cpu / native_cpu:.2f}")


if __name__ == "__main__":
    main()
