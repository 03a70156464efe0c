"""The exit-3 hunt: generated malformed case files, traces and baselines — lone surrogates, deep nesting, link
loops, numbers no double holds, wrong types — fed to `check`, `evaluate`, `diff` and `build`. Any answer but an
internal error (exit 3, reserved for sitegen's own bugs: docs/cli.md, "Exit codes") passes: a result, a
regression (1), or bad input (2) naming the file.

Derandomized like every property test here (tests/README.md, "Property tests"); the random search is the
`thorough` profile, ten times the examples:

    HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_no_internal_error.py -q

An input it finds is a bug: fix it and add the input as an `@example` of its test.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from helpers import make_case, make_trace
from sitegen.cli import app

runner = CliRunner()
# A twelfth of the profile's examples (8 in CI, 83 with `thorough`) besides the @examples: each one runs several
# whole commands, a build among them.
EXAMPLES = max(1, settings.default.max_examples // 12)
hunt = settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])


class Raw(str):
    """JSON text written into a document as it is: what a JSON library would not write."""


HOSTILE_LEAVES = [
    Raw('"\\ud800"'), Raw('"a\\udc00b"'), Raw('"\\ud83d\\u0041"'),  # lone surrogates
    Raw("1" * 5000), Raw("-" + "9" * 400), Raw("1e400"), Raw("1e308"), Raw("-1e308"), Raw("4.9e-324"), Raw("1e-400"),
    Raw("[" * 900 + "]" * 900), Raw("[" * 5000 + "]" * 5000), Raw('{"a":' * 400 + "1" + "}" * 400),  # deep
    Raw('"\\u0000\\u001b]52;c;QQ==\\u0007\\u202e"'), Raw('"   "'), Raw('""'), Raw('"x" '),
]
scalars = st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False) | st.text(max_size=8)
hostile = st.recursive(
    st.sampled_from(HOSTILE_LEAVES) | scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=6,
)


def to_text(value: Any) -> str:
    """`value` as JSON text, each Raw piece as it is."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(to_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {to_text(item)}" for key, item in value.items()) + "}"
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, float) and value in (float("inf"), -float("inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return json.dumps(value)


CASE_FIELDS = [
    "id", "title", "question", "traceFixture", "minKeywordMatches", "expectedRootCauseKeywords", "requiredEvidenceTools",
    "allowedVerdicts", "forbiddenVerdicts", "forbiddenAnswerKeywords", "tags", "notes", "_annotation", "unknownField",
]
TRACE_PLACES = [
    ("session", "answer"), ("session", "totalDurationMs"), ("session", "selfEvaluation"), ("toolInvocations",),
    ("session",), ("session", "selfEvaluation", "verifier_evaluation"), ("extra",), ("session", "deep"),
]
RESULT_FIELDS = [
    "caseId", "title", "status", "passed", "failedChecks", "verdict", "toolCallCount", "durationMs", "tags",
    "evidenceCoverage", "toolCalls", "answer", "trialResults", "passedTrials", "trials", "caseDigest", "traceDigest",
]
REPORT_FIELDS = ["passRate", "totalCases", "passedCases", "averageDurationMs", "averageToolCallCount", "formatVersion",
                 "verdictDistribution", "results"]


def _spoil(document: Any, path: tuple[Any, ...], value: Any) -> None:
    """Put `value` at `path` in `document`, making the objects on the way."""
    for key in path[:-1]:
        if not isinstance(document.get(key), dict):
            document[key] = {}
        document = document[key]
    document[path[-1]] = value


@st.composite
def case_files(draw: st.DrawFn) -> str:
    """The case file of three cases (traces t0–t2) with hostile values in some fields, or a hostile document."""
    if draw(st.integers(0, 9)) == 0:
        return to_text(draw(hostile))
    cases: list[dict[str, Any]] = [make_case(id=f"c{n}", traceFixture=f"t{n}.json") for n in range(3)]
    for _ in range(draw(st.integers(1, 3))):
        cases[draw(st.integers(0, 2))][draw(st.sampled_from(CASE_FIELDS))] = draw(hostile)
    return to_text(cases)


@st.composite
def traces(draw: st.DrawFn) -> str:
    """A trace with hostile values in some places, or a hostile document."""
    if draw(st.integers(0, 9)) == 0:
        return to_text(draw(hostile))
    trace: dict[str, Any] = make_trace(answer="the pool is exhausted", tools=["query_db"], summary_tools=["query_db"])
    for _ in range(draw(st.integers(1, 3))):
        _spoil(trace, draw(st.sampled_from(TRACE_PLACES)), draw(hostile))
    return to_text(trace)


# A baseline's spoiling: (None, a hostile document) or (a hostile result to add or None, [(result index or None for
# the report itself, field, hostile value), …]), applied to the good suite's report by `spoiled`.
Spoiling = tuple[Any, list[tuple[int | None, str, Any]]]


@st.composite
def baseline_spoilings(draw: st.DrawFn) -> Spoiling:
    """How to spoil the good suite's report: hostile values in some fields, a hostile result added, or a hostile
    document instead."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return None, [(None, "", draw(hostile))]
    added = {"caseId": draw(hostile), "status": "passed", "passed": True} if choice == 1 else None
    changes = [
        (None, draw(st.sampled_from(REPORT_FIELDS)), draw(hostile)) if draw(st.booleans())
        else (draw(st.integers(0, 2)), draw(st.sampled_from(RESULT_FIELDS)), draw(hostile))
        for _ in range(draw(st.integers(1, 3)))
    ]
    return added, changes


def spoiled(template: dict[str, Any], spoiling: Spoiling) -> str:
    """The report `template` spoiled as `spoiling` says, as JSON text."""
    added, changes = spoiling
    if added is None and changes and changes[0][1] == "":
        return to_text(changes[0][2])
    report = json.loads(json.dumps(template))
    if added is not None:
        report["results"].append(added)
    for index, field, value in changes:
        results = report.get("results")
        if index is None:
            report[field] = value
        elif isinstance(results, list) and index < len(results) and isinstance(results[index], dict):
            results[index][field] = value  # unless an earlier change put something else in place of the results
    return to_text(report)


def _answers(*args: str) -> None:
    """The command gives an answer: a result, a regression or bad input — never an internal error."""
    result = runner.invoke(app, list(args))
    assert result.exit_code in (0, 1, 2), f"sitegen {' '.join(args)}: exit {result.exit_code}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def _suite(root: Path, cases: str, trace_texts: list[str], loops: bool = False) -> tuple[str, str]:
    """Write the case file and traces t0–t2 (t2 a folder of two trials); with `loops`, t1.json and a third trial
    are links to themselves."""
    fixtures = root / "fixtures"
    (fixtures / "t2.json").mkdir(parents=True)
    (root / "cases.json").write_text(cases, encoding="utf-8")
    (fixtures / "t0.json").write_text(trace_texts[0], encoding="utf-8")
    (fixtures / "t2.json" / "trial-1.json").write_text(trace_texts[1], encoding="utf-8")
    (fixtures / "t2.json" / "trial-2.json").write_text(trace_texts[2], encoding="utf-8")
    if loops:
        (fixtures / "t1.json").symlink_to("t1.json")
        (fixtures / "t2.json" / "trial-3.json").symlink_to("trial-3.json")
    else:
        (fixtures / "t1.json").write_text(trace_texts[1], encoding="utf-8")
    return str(root / "cases.json"), str(fixtures)


GOOD_TRACES = [to_text(make_trace(answer=f"answer {n}", tools=["query_db"], summary_tools=["query_db"])) for n in range(3)]
GOOD_CASES = to_text([make_case(id=f"c{n}", traceFixture=f"t{n}.json") for n in range(3)])


@pytest.fixture(scope="module")
def good_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of the good suite (the baselines' template)."""
    root = tmp_path_factory.mktemp("good")
    cases, fixtures = _suite(root, GOOD_CASES, GOOD_TRACES)
    done = runner.invoke(app, ["evaluate", "--cases", cases, "--fixtures", fixtures, "--json", str(root / "report.json")])
    assert done.exit_code == 0, done.output
    return json.loads((root / "report.json").read_text(encoding="utf-8"))


def _suite_commands(good_report: dict[str, Any], cases_text: str, trace_texts: list[str], loops: bool) -> None:
    """Every command on the suite of `cases_text` and `trace_texts` (`_suite`), against the good baseline, in a
    fresh folder (hypothesis runs many examples in one test)."""
    with tempfile.TemporaryDirectory(prefix="hunt-") as folder:
        root = Path(folder)
        baseline = root / "baseline.json"
        baseline.write_text(json.dumps(good_report), encoding="utf-8")
        cases, fixtures = _suite(root, cases_text, trace_texts, loops)
        _answers("check", "--cases", cases, "--fixtures", fixtures)
        current = root / "report.json"
        _answers("evaluate", "--cases", cases, "--fixtures", fixtures, "--json", str(current), "--markdown", str(root / "r.md"),
                 "--junit", str(root / "j.xml"), "--otlp", str(root / "r.otlp.jsonl"))
        if current.exists():
            _answers("diff", str(baseline), str(current))
            _answers("diff", str(baseline), str(current), "--json", str(root / "d.json"), "--markdown", str(root / "d.md"))
        _answers("build", "--cases", cases, "--fixtures", fixtures, "--baseline", str(baseline), "--out", str(root / "site"),
                 "--junit", str(root / "site" / "junit.xml"), "--otlp", str(root / "site" / "results.otlp.jsonl"))


@hunt
@given(cases=case_files(), loops=st.booleans())
@example(cases=to_text([make_case(id="c0", traceFixture="t0.json", notes=Raw('"\\ud800"'))]), loops=False)
@example(cases=to_text([make_case(id=Raw("1" * 5000), traceFixture="t0.json")]), loops=True)
def test_no_case_file_gives_an_internal_error(cases: str, loops: bool, good_report: dict[str, Any]) -> None:
    _suite_commands(good_report, cases, GOOD_TRACES, loops)


@hunt
@given(texts=st.lists(traces(), min_size=3, max_size=3), loops=st.booleans())
@example(texts=[to_text({"session": {"answer": "x", "deep": Raw("[" * 900 + "]" * 900)}})] * 3, loops=True)
@example(texts=[to_text({"session": {"answer": Raw('"\\ud800"'), "totalDurationMs": Raw("1e308")}})] * 3, loops=False)
@example(  # found by this test: the Markdown report held the surrogate of a check's message, which UTF-8 cannot
    texts=[to_text({"session": {"answer": "x", "totalDurationMs": Raw('"\\ud800"')}})] * 3, loops=False
)
def test_no_trace_gives_an_internal_error(texts: list[str], loops: bool, good_report: dict[str, Any]) -> None:
    _suite_commands(good_report, GOOD_CASES, texts, loops)


@hunt
@given(spoiling=baseline_spoilings())
@example(spoiling=(None, [(0, "failedChecks", True)]))  # found by this test: the reader iterated it
@example(spoiling=(None, [(1, "tags", 1)]))
@example(spoiling=(None, [(2, "trialResults", [{"status": "failed", "failedChecks": 1}])]))
@example(spoiling=({"caseId": Raw('"gone \\ud800"')}, [(0, "toolCalls", [{"toolName": Raw('"\\udfff"')}])]))
def test_no_baseline_gives_an_internal_error(spoiling: Spoiling, good_report: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="hunt-") as folder:
        root = Path(folder)
        baseline = root / "baseline.json"
        baseline.write_text(spoiled(good_report, spoiling), encoding="utf-8")
        cases, fixtures = _suite(root, GOOD_CASES, GOOD_TRACES)
        current = root / "current.json"
        current.write_text(json.dumps(good_report), encoding="utf-8")
        for first, second in ((baseline, current), (current, baseline)):  # as the baseline, and as the current report
            _answers("diff", str(first), str(second))
            _answers("diff", str(first), str(second), "--json", str(root / "d.json"), "--markdown", str(root / "d.md"),
                     "--fail-on-regression")
        _answers("build", "--cases", cases, "--fixtures", fixtures, "--baseline", str(baseline), "--out", str(root / "site"),
                 "--junit", str(root / "site" / "junit.xml"), "--fail-on-regression")


# --- the OpenTelemetry reader's attribute keys (suite/otlp.py, suite/genai_mapping.py) -----------------------------

MESSAGE_KEYS = [("gen_ai.completion.", ".content"), ("gen_ai.prompt.", ".content"), ("gen_ai.completion.", ".role"),
                ("llm.output_messages.", ".message.content"), ("llm.input_messages.", ".message.role")]  # fmt: skip
# Digits str.isdigit() takes and int() refuses, or reads only below its limit, and what int() takes besides digits.
HOSTILE_INDEXES = ["²", "①", "¹", "١", "٣٤", "1" * 5000, "0" * 4301, "+1", " 1", "1_0", "-1", "", "0x1", "𝟏"]
indexes = st.sampled_from(HOSTILE_INDEXES) | st.text(st.characters(categories=["Nd", "No"]), max_size=4) | st.integers(0, 3).map(str)
attribute_values = st.text(max_size=8) | st.integers(-(2**63), 2**63 - 1) | st.booleans() | st.sampled_from(["[]", "{}", "[{\"role\": 1}]"])


def _otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, list):  # a kvlistValue, keys as given (repeated ones too)
        return {"kvlistValue": {"values": [{"key": key, "value": _otlp_value(item)} for key, item in value]}}
    return {"stringValue": value}


def otlp_trace(attributes: list[tuple[str, Any]]) -> str:
    """An OTLP JSON trace of one invoke_agent span with these attributes (and a tool call under it)."""
    def span(span_id: str, name: str, parent: str, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return {
            "traceId": "ab" * 16, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 1,
            "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000",
            "attributes": [{"key": key, "value": _otlp_value(value)} for key, value in pairs],
        }  # fmt: skip

    spans = [span("01" * 8, "invoke_agent", "", attributes), span("02" * 8, "execute_tool query_db", "01" * 8, [("gen_ai.tool.name", "query_db")])]
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]})


@st.composite
def otlp_attributes(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """Message attributes under hostile indexes, a claim list as a kvlist with keys maybe repeated, an answer."""
    pairs: list[tuple[str, Any]] = [("output.value", "the pool is exhausted")] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 4))):
        prefix, suffix = draw(st.sampled_from(MESSAGE_KEYS))
        pairs.append((f"{prefix}{draw(indexes)}{suffix}", draw(attribute_values)))
    if draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(["claim_id", "verification", "x"]), min_size=1, max_size=4))
        pairs.append(("claims", [(key, draw(attribute_values)) for key in keys]))
    return list(dict(pairs).items())  # span attributes themselves once each (a repeat is refused, and tested elsewhere)


@hunt
@given(attributes=otlp_attributes())
@example(attributes=[("gen_ai.completion.².content", "x")])
@example(attributes=[("gen_ai.completion.①.content", "x")])
@example(attributes=[(f"gen_ai.completion.{'1' * 5000}.content", "x")])
@example(attributes=[("llm.output_messages.¹.message.content", "x")])
@example(attributes=[("output.value", "a"), ("claims", [("verification", "BOGUS"), ("verification", "SUPPORTED")])])
def test_no_otlp_attribute_key_gives_an_internal_error(attributes: list[tuple[str, Any]], good_report: dict[str, Any]) -> None:
    _suite_commands(good_report, GOOD_CASES, [otlp_trace(attributes)] * 3, loops=False)


# --- the settings (suite/config.py, plumbing/tomlread.py) ----------------------------------------------------------

HUGE_TOML_VALUES = [
    "[" * 500 + "]" * 500, "{a = " * 2000 + "1" + "}" * 2000, "1" * 5000, "0x" + "f" * 5000, "-" + "9" * 4400,
    "0o" + "7" * 3000, "0b" + "1" * 9000, "9223372036854775808", "1" + "0" * 400 + ".5", "1e400", "nan", "inf",
    '"\\ud800"', "'''" + "[" * 50 + "'''", "[" + "[1]," * 300 + "]",
]
toml_values = st.sampled_from(HUGE_TOML_VALUES) | st.sampled_from(['"x"', "[]", '["PASS"]', "0.5", "-1", "true", "3"])
toml_keys = st.sampled_from(["verdicts", "reject_verdict", "trialPolicy", "costTolerance", "alpha", "answerSimilarity",
                             "verifierName", "claimChecksAttribute", "unknown", "a.b.c", "a" + ".a" * 100])  # fmt: skip
toml_tables = st.sampled_from(["suite", "diff", "otel", "record", "elsewhere", "a" + ".a" * 100])


@st.composite
def settings_texts(draw: st.DrawFn) -> str:
    """A settings file with hostile values under known and unknown keys of known and unknown tables."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        lines.append(f"[{draw(toml_tables)}]")
        lines += [f"{draw(toml_keys)} = {draw(toml_values)}" for _ in range(draw(st.integers(1, 3)))]
    return "\n".join(lines) + "\n"


@hunt
@given(text=settings_texts())
@example(text="[suite]\nverdicts = " + "[" * 500 + "]" * 500 + "\n")
@example(text="x = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n")
@example(text="[elsewhere]\nunknown = " + "1" * 5000 + "\n")
@example(text="[diff]\nalpha = 0x" + "f" * 5000 + "\n")
@example(text="[otel]\nverifierName = 0x" + "f" * 5000 + "\n")
@example(text="a" + ".a" * 50_000 + " = 1\n")
def test_no_settings_give_an_internal_error(text: str) -> None:
    with tempfile.TemporaryDirectory(prefix="hunt-") as folder:
        root = Path(folder)
        cases, fixtures = _suite(root, GOOD_CASES, GOOD_TRACES)
        config = root / "sitegen.toml"
        config.write_text(text, encoding="utf-8")
        _answers("check", "--cases", cases, "--fixtures", fixtures, "--config", str(config))
        _answers("evaluate", "--cases", cases, "--fixtures", fixtures, "--config", str(config), "--json", str(root / "r.json"))
        if (root / "r.json").exists():
            _answers("diff", str(root / "r.json"), str(root / "r.json"), "--config", str(config))
