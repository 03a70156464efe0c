"""The evaluation report: its data, its JSON form (a superset of the Java shape) and its Markdown."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from sitegen.checks import check_codes
from sitegen.errors import BadInput
from sitegen.finite import RANGE_TEXT, finite_mean, in_float_range
from sitegen.formatting import number, percent
from sitegen.plumbing.jsontext import LONE_SURROGATE as _LONE_SURROGATE
from sitegen.plumbing.jsontext import dumps_json, indented, loads
from sitegen.report.evidence import EVIDENCE_KEYS, Evidence, evidence_from_json, written_evidence
from sitegen.report.failures_by_rule import by_rule_markdown, failures_by_rule
from sitegen.report.mdtext import escape_cell, escape_inline, table
from sitegen.stats import wilson_interval

REPORT_FORMAT_VERSION = 1
MISSING_VERDICT = "MISSING"
STATUS_LABELS = {"passed": "✅ passed", "failed": "❌ failed", "not_run": "⏭️ not run"}




@dataclass
class TrialResult:
    """One trial of a case with several (eval/README.md, "Trials"): its own outcome by the same rules."""

    fixture: str  # the trial's file, relative to the fixtures folder (`folder/trial-001.json`)
    status: str
    failedChecks: list[str]
    verdict: str | None
    matchedKeywordCount: int
    toolCallCount: int
    durationMs: int | float | None
    evidence: Evidence | None = None  # None: the report read back does not record it (an older sitegen's)

    @property
    def passed(self) -> bool:
        """Whether every check of this trial passed."""
        return self.status == "passed"

    def to_json(self) -> dict[str, Any]:
        """The trial as an entry of its result's `trialResults`."""
        return {
            "fixture": self.fixture,
            "status": self.status,
            "failedChecks": list(self.failedChecks),
            "verdict": self.verdict,
            "matchedKeywordCount": self.matchedKeywordCount,
            "toolCallCount": self.toolCallCount,
            "durationMs": self.durationMs,
        } | ({} if self.evidence is None else self.evidence.to_json())


@dataclass
class CaseResult:
    """The outcome of one case, in the field names of the Java `DiagnosisEvalResult` (plus extras)."""

    caseId: str
    title: str
    status: str
    passed: bool
    failedChecks: list[str]
    verdict: str | None
    matchedKeywordCount: int
    requiredKeywordCount: int
    evidenceCoverage: dict[str, bool]
    toolCallCount: int
    durationMs: int | float | None
    tags: list[str] = field(default_factory=list)
    caseDigest: str | None = None
    # Not serialised: whether a trace was read (averages are taken over those).
    traceLoaded: bool = True
    # A case whose traceFixture is a folder of trials: each trial's outcome, in name order (None: one file).
    trialResults: list[TrialResult] | None = None
    # What the agent did (for a case with trials: its first trial's, with a digest over every trial's). None: the
    # report read back does not record it (written by the Java harness or an older sitegen).
    evidence: Evidence | None = None

    @property
    def trials(self) -> int:
        """How many trials the case had (a single trace file is one)."""
        return 1 if self.trialResults is None else len(self.trialResults)

    @property
    def passedTrials(self) -> int:
        """How many of its trials passed."""
        if self.trialResults is None:
            return 1 if self.passed else 0
        return sum(1 for trial in self.trialResults if trial.passed)

    @property
    def failed_codes(self) -> list[str]:
        """The distinct check codes of the failures, in order."""
        return check_codes(self.failedChecks)

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object with a fixed field order and sorted maps."""
        data: dict[str, Any] = {
            "caseId": self.caseId,
            "title": self.title,
            "status": self.status,
            "passed": self.passed,
            "failedChecks": list(self.failedChecks),
            "verdict": self.verdict,
            "matchedKeywordCount": self.matchedKeywordCount,
            "requiredKeywordCount": self.requiredKeywordCount,
            "evidenceCoverage": dict(sorted(self.evidenceCoverage.items())),
            "toolCallCount": self.toolCallCount,
            "durationMs": self.durationMs,
            "tags": list(self.tags),
        }
        if self.caseDigest is not None:
            data["caseDigest"] = self.caseDigest
        if self.evidence is not None:
            data.update(self.evidence.to_json())
        # Only a case with a folder of trials carries the trial fields, so a suite of single files reports as
        # it always did.
        if self.trialResults is not None:
            data["trials"] = self.trials
            data["passedTrials"] = self.passedTrials
            data["trialResults"] = [trial.to_json() for trial in self.trialResults]
        return data


@dataclass
class Report:
    """Aggregate figures over every case plus the per-case results, in case-file order."""

    totalCases: int
    passedCases: int
    failedCases: int
    notRunCases: int
    passRate: float
    verdictDistribution: dict[str, int]
    averageToolCallCount: float
    averageDurationMs: float | None
    results: list[CaseResult]

    def to_json(self, results: bool = True) -> dict[str, Any]:
        """The report as a JSON object (eval/README.md, "The report"); without `results`, only its top-level fields."""
        data = {
            "formatVersion": REPORT_FORMAT_VERSION,
            "totalCases": self.totalCases,
            "passedCases": self.passedCases,
            "failedCases": self.failedCases,
            "notRunCases": self.notRunCases,
            "passRate": self.passRate,
            "verdictDistribution": dict(sorted(self.verdictDistribution.items())),
            "averageToolCallCount": self.averageToolCallCount,
            "averageDurationMs": self.averageDurationMs,
        }
        if self.trial_figures is not None:
            data.update(self.trial_figures.to_json())
        if results:
            data["results"] = [result.to_json() for result in self.results]
        return data

    @cached_property
    def trial_figures(self) -> TrialFigures | None:
        """The trials over every case, when some case has a folder of trials (else None); worked out once."""
        if all(result.trialResults is None for result in self.results):
            return None
        return trial_figures(self.results)

    @cached_property
    def by_id(self) -> dict[str, CaseResult]:
        """The results by case id (a report has each case once): the one index the diff and the pages use."""
        return {result.caseId: result for result in self.results}

    def aggregates(self) -> dict[str, Any]:
        """The top-level figures without the results (what history records per run)."""
        data = self.to_json(results=False)
        del data["formatVersion"]
        return data


class TrialFigures(NamedTuple):
    """Trials over every case of a report (a single trace file counts as one trial), as report.json, report.md,
    the job summary and the history's runs state them."""

    total: int
    passed: int
    rate: float
    interval: tuple[float, float]  # the Wilson 95 % interval of the rate, (low, high)

    def to_json(self) -> dict[str, Any]:
        """The figures under the names report.json and history.json give them."""
        return {
            "totalTrials": self.total,
            "passedTrials": self.passed,
            "trialPassRate": self.rate,
            "trialPassRateInterval": list(self.interval),
        }


def trial_figures(results: Sequence[CaseResult]) -> TrialFigures:
    """The trial counts over `results`, the trial pass rate and its Wilson 95 % interval."""
    total = sum(result.trials for result in results)
    passed = sum(result.passedTrials for result in results)
    return TrialFigures(total, passed, passed / total if total else 0.0, wilson_interval(passed, total))


def build_report(results: list[CaseResult]) -> Report:
    """Aggregate case results into a report."""
    total = len(results)
    passed = sum(1 for r in results if r.status == "passed")
    not_run = sum(1 for r in results if r.status == "not_run")
    ran = [r for r in results if r.traceLoaded]
    durations = [r.durationMs for r in ran if r.durationMs is not None]
    verdicts = Counter(r.verdict if r.verdict else MISSING_VERDICT for r in results)
    return Report(
        totalCases=total,
        passedCases=passed,
        failedCases=total - passed - not_run,
        notRunCases=not_run,
        passRate=passed / total if total else 0.0,
        verdictDistribution=dict(sorted(verdicts.items())),
        averageToolCallCount=finite_mean([r.toolCallCount for r in ran]) if ran else 0.0,
        averageDurationMs=finite_mean(durations) if durations else None,
        results=results,
    )


def result_json_text(result: CaseResult) -> str:
    """One result's text as it stands in report.json's results array (a build reuses it for unchanged cases)."""
    # dumps_json's layout one level down: what json.dumps(indent=2) writes for an object inside "results".
    floats = type(result.durationMs) is float or result.trialResults is not None
    return "    " + indented(result.to_json(), has_floats=floats).replace("\n", "\n    ")


def report_json(report: Report, result_texts: Sequence[str] | None = None) -> str:
    """The report's JSON text; byte-identical for the same inputs.

    `result_texts` are the results' result_json_text when already at hand (pretty-printing is the slow part).
    """
    texts = [result_json_text(result) for result in report.results] if result_texts is None else result_texts
    text = dumps_json(report.to_json(results=False))
    assert text.endswith("\n}\n")
    results = "[\n" + ",\n".join(texts) + "\n  ]" if texts else "[]"
    return text[:-3] + ',\n  "results": ' + results + "\n}\n"


def report_json_bytes(report: Report, result_texts: Sequence[str]) -> tuple[bytes, bool]:
    """report_json(report, result_texts) as report.json's UTF-8, made without the whole text (tens of megabytes
    for a big suite, twice that as a Python str with CJK in it); and False when a result holds a lone surrogate
    (JSON can, UTF-8 cannot), which is written as U+FFFD, as render.page_bytes writes it."""
    exact = True

    def utf8(text: str) -> bytes:
        nonlocal exact
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            exact = False
            return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")

    head = dumps_json(report.to_json(results=False))
    assert head.endswith("\n}\n")
    pieces = [utf8(head[:-3]), b',\n  "results": [\n' if result_texts else b',\n  "results": []']
    for text in result_texts:
        pieces += (utf8(text), b",\n")
    if result_texts:
        pieces[-1] = b"\n  ]"
    pieces.append(b"\n}\n")
    return b"".join(pieces), exact


_RESULTS_START = b'\n  "results": [\n'  # how report_json lays out its results array
_RESULTS_END = b"\n  ]\n}\n"
_NO_RESULTS = b'\n  "results": []\n}\n'
# Between two result texts: the line closing one and the line opening the next. Only a result's own braces are
# indented by four spaces (its fields by six or more, and a JSON string holds no line break), so this is exact.
_BETWEEN = b"\n    },\n    {\n"


def result_texts(report: bytes) -> list[bytes] | None:
    """Each result's text (result_json_text, in UTF-8, in order) in a report.json that report_json wrote; None
    when the file is not laid out that way. Parsing each alone is quicker than parsing the file at once, and
    never holds every result as parsed JSON together (benchmarks/RESULTS.md, "Big texts as bytes, reports read back
    result by result")."""
    if report.endswith(_NO_RESULTS):
        return []
    start = report.find(_RESULTS_START)
    if start < 0 or not report.endswith(_RESULTS_END):
        return None
    pieces = report[start + len(_RESULTS_START) : len(report) - len(_RESULTS_END)].split(_BETWEEN)
    if len(pieces) == 1:
        return pieces
    return [pieces[0] + b"\n    }", *[b"    {\n" + piece + b"\n    }" for piece in pieces[1:-1]], b"    {\n" + pieces[-1]]


def _sealed_report(data: bytes) -> tuple[Any, Iterable[Any]]:
    """A report read before with every check, parsed the quick way: its fields, and its results one by one."""
    pieces = result_texts(data)
    if pieces is None:  # not laid out as report_json writes it (the Java harness's, say): parsed whole
        whole = loads(data)
        return whole, whole.get("results") if isinstance(whole, dict) else None
    head = data[: data.find(_RESULTS_START)] + _NO_RESULTS if pieces else data
    return loads(head), (loads(piece) for piece in pieces)


_CASE_COLUMNS = ["Case", "Status", "Verdict", "Keywords", "Evidence", "Failed checks"]


def result_markdown_row(r: CaseResult) -> str:
    """One result's row of report.md's case table (a build reuses it for unchanged cases)."""
    coverage = ", ".join(f"{tool} {'✓' if ok else '✗'}" for tool, ok in sorted(r.evidenceCoverage.items()))
    cells = [
        escape_cell(r.caseId),
        STATUS_LABELS.get(r.status, escape_cell(r.status)) + trial_count_note(r),
        escape_cell(r.verdict or MISSING_VERDICT),
        f"{r.matchedKeywordCount}/{r.requiredKeywordCount}",
        escape_cell(coverage or "—"),
        escape_cell(", ".join(r.failed_codes) or "—"),
    ]
    return table(_CASE_COLUMNS, [cells]).rsplit("\n", 1)[1]


def trial_count_note(result: CaseResult) -> str:
    """` (3/5 trials)` after a status when the case has a folder of trials; empty otherwise."""
    return "" if result.trialResults is None else f" ({result.passedTrials}/{result.trials} trials)"


def trial_line(figures: TrialFigures) -> str:
    """The trials in one sentence: how many passed, the trial pass rate and its Wilson 95 % interval."""
    low, high = figures.interval
    return (
        f"**Trials**: {figures.passed} of {figures.total} passed, trial pass rate "
        f"{percent(figures.rate)} (95% interval {percent(low)}–{percent(high)})."
    )


def report_markdown(report: Report, title: str = "Diagnosis eval report", rows: Sequence[str] | None = None) -> str:
    """The report as GitHub-flavoured Markdown: summary, verdicts, a row per case, then the failures.

    `rows` are the results' result_markdown_row when already at hand.
    """
    lines = [f"# {escape_inline(title)}", ""]
    lines.append(
        f"**Pass rate {percent(report.passRate)}**: {report.passedCases} passed, {report.failedCases} failed, "
        f"{report.notRunCases} not run, {report.totalCases} cases in all."
    )
    if report.trial_figures is not None:
        lines += ["", trial_line(report.trial_figures)]
    lines.append("")
    lines.append(
        table(
            ["Metric", "Value"],
            [
                ["Pass rate", percent(report.passRate)],
                ["Passed", str(report.passedCases)],
                ["Failed", str(report.failedCases)],
                ["Not run", str(report.notRunCases)],
                ["Average tool calls", number(report.averageToolCallCount, 2)],
                ["Average duration (ms)", number(report.averageDurationMs)],
            ],
            ["---", "---:"],
        )
    )
    lines += ["", "## Verdicts", ""]
    lines.append(
        table(
            ["Verdict", "Cases"],
            [[escape_cell(v), str(n)] for v, n in sorted(report.verdictDistribution.items())],
            ["---", "---:"],
        )
    )
    by_rule = by_rule_markdown(failures_by_rule(report.results))
    if by_rule:
        lines += ["", *by_rule]
    lines += ["", "## Cases", ""]
    lines.append(table(_CASE_COLUMNS, []))
    lines += [result_markdown_row(r) for r in report.results] if rows is None else rows
    failing = [r for r in report.results if r.failedChecks]
    if failing:
        lines += ["", "## Failed checks", ""]
        for r in failing:
            lines.append(f"### {escape_inline(r.caseId)}")
            lines.append("")
            lines += [f"- {escape_inline(check)}" for check in r.failedChecks]
            lines.append("")
        lines.pop()
    return "\n".join(lines) + "\n"


def _as_number(value: Any) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


_RESULT_KEYS = frozenset(
    ("caseId", "title", "status", "passed", "failedChecks", "verdict", "matchedKeywordCount", "requiredKeywordCount")
    + ("evidenceCoverage", "toolCallCount", "durationMs", "tags")
)
_RESULT_KEYS_WITH_DIGEST = _RESULT_KEYS | {"caseDigest"}
# The layouts to_json writes: with or without a case digest, with or without the evidence fields.
_RESULT_LAYOUTS = frozenset(
    keys | evidence for keys in (_RESULT_KEYS, _RESULT_KEYS_WITH_DIGEST) for evidence in (frozenset(), frozenset(EVIDENCE_KEYS))
)


_ONLY_STR, _ONLY_BOOL = frozenset((str,)), frozenset((bool,))


def _sitegen_result(data: dict[str, Any]) -> CaseResult | None:
    """The result when `data` is laid out exactly as CaseResult.to_json writes it, else None.

    What result_from_json would make of it, without its per-field conversions: a rebuild reads every result
    of the baseline and of the previous build this way.
    """
    if frozenset(data) not in _RESULT_LAYOUTS:
        return None
    case_id, title, status, passed = data["caseId"], data["title"], data["status"], data["passed"]
    checks, verdict, coverage, tags = data["failedChecks"], data["verdict"], data["evidenceCoverage"], data["tags"]
    matched, required, calls = data["matchedKeywordCount"], data["requiredKeywordCount"], data["toolCallCount"]
    duration, digest = data["durationMs"], data.get("caseDigest")
    if not (
        type(case_id) is str
        and case_id
        and type(title) is str
        and title
        and type(status) is str
        and status in STATUS_LABELS
        and type(passed) is bool
        and (verdict is None or (type(verdict) is str and verdict))
        and type(matched) is int
        and type(required) is int
        and type(calls) is int
        and (duration is None or type(duration) is int or type(duration) is float)
        and (digest is None or type(digest) is str)
        and type(checks) is list
        and set(map(type, checks)) <= _ONLY_STR
        and type(tags) is list
        and set(map(type, tags)) <= _ONLY_STR
        and type(coverage) is dict
        and set(map(type, coverage.values())) <= _ONLY_BOOL
    ):
        return None
    evidence = written_evidence(data)
    if evidence is False:
        return None
    return CaseResult(
        case_id, title, status, passed, list(checks), verdict, matched, required, dict(coverage), calls, duration,
        list(tags), digest, status != "not_run", evidence=evidence,
    )  # fmt: skip


def result_from_json(data: dict[str, Any]) -> CaseResult:
    """Read one result, tolerating Java-harness reports (no status, tags or digest) and unknown fields."""
    result = _sitegen_result(data)
    return result if result is not None else _any_result(data)


def _any_result(data: dict[str, Any]) -> CaseResult:
    passed = data.get("passed") is True
    checks = [str(c) for c in data.get("failedChecks") or [] if c is not None]
    status = data.get("status")
    if not isinstance(status, str) or status not in STATUS_LABELS:
        status = "passed" if passed else "failed"
    coverage = data.get("evidenceCoverage") if isinstance(data.get("evidenceCoverage"), dict) else {}
    return CaseResult(
        caseId=str(data["caseId"]),
        title=str(data.get("title") or data["caseId"]),
        status=status,
        passed=passed,
        failedChecks=checks,
        verdict=data.get("verdict") if isinstance(data.get("verdict"), str) and data.get("verdict") else None,
        matchedKeywordCount=int(_as_number(data.get("matchedKeywordCount")) or 0),
        requiredKeywordCount=int(_as_number(data.get("requiredKeywordCount")) or 0),
        evidenceCoverage={str(k): v is True for k, v in coverage.items()},
        toolCallCount=_count_or_mean(data.get("toolCallCount")),
        durationMs=_as_number(data.get("durationMs")),
        tags=[str(t) for t in data.get("tags") or [] if isinstance(t, str)],
        caseDigest=data.get("caseDigest") if isinstance(data.get("caseDigest"), str) else None,
        traceLoaded=status != "not_run",
        trialResults=_trials_from_json(data.get("trialResults")),
        evidence=evidence_from_json(data),
    )


def _count_or_mean(value: Any) -> Any:
    """A tool-call count as written: an integer, or the mean over a case's trials (kept as the float it is)."""
    number = _as_number(value) or 0
    return number if isinstance(number, float) and not number.is_integer() else int(number)


def _trials_from_json(value: Any) -> list[TrialResult] | None:
    """A result's `trialResults` as read (None when the result has none); entries that are not objects are left out."""
    if not isinstance(value, list):
        return None
    trials = []
    for item in value:
        if not isinstance(item, dict):
            continue
        status = item.get("status") if item.get("status") in STATUS_LABELS else "failed"
        verdict = item.get("verdict")
        trials.append(
            TrialResult(
                fixture=str(item.get("fixture") or ""),
                status=status,
                failedChecks=[str(c) for c in item.get("failedChecks") or [] if c is not None],
                verdict=verdict if isinstance(verdict, str) and verdict else None,
                matchedKeywordCount=int(_as_number(item.get("matchedKeywordCount")) or 0),
                toolCallCount=int(_as_number(item.get("toolCallCount")) or 0),
                durationMs=_as_number(item.get("durationMs")),
                evidence=evidence_from_json(item),
            )
        )
    return trials


def _check_figures(path: Path, data: dict[str, Any], names: Sequence[str], where: str | None) -> None:
    """A figure that is averaged or subtracted must be a number a double can hold (sitegen/finite.py)."""
    for name in names:
        value = _as_number(data.get(name))
        if value is not None and not in_float_range(value):
            shown = str(value) if len(str(value)) <= 40 else f"{str(value)[:20]}…"
            raise BadInput(path, f"field {name!r}: expected a number within {RANGE_TEXT}, got {shown}", where=where)


def read_report(path: Path, text: str | bytes | None = None, checked: bool = False) -> Report:
    """Load a report JSON written by sitegen or by the Java harness; bad input names the file.

    `text`: the file's text (or bytes, when `checked`), already read. `checked`: the file was read before
    with every check of its JSON (duplicate keys, number limits), so it is parsed the quick way.
    """
    from sitegen.suite.loading import load_json_file

    if checked and text is not None:
        data, results = _sealed_report(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    else:
        assert not isinstance(text, bytes), "bytes are for a file read before with every check"
        data = load_json_file(path, "report", text, expected="a report JSON object")
        results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(data, dict):
        raise BadInput(path, "expected a report JSON object with a 'results' array")
    version = data.get("formatVersion", REPORT_FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version > REPORT_FORMAT_VERSION:
        raise BadInput(
            path, f"field 'formatVersion': expected {REPORT_FORMAT_VERSION} or lower, got {version!r} (written by a newer sitegen?)"
        )
    if not isinstance(results, (list, Iterator)):
        raise BadInput(path, "field 'results': expected an array of case results")
    parsed = []
    seen: dict[str, int] = {}
    for index, item in enumerate(results):
        if not isinstance(item, dict) or not isinstance(item.get("caseId"), str) or not item["caseId"]:
            raise BadInput(path, "expected an object with a non-empty string 'caseId'", where=f"results[{index}]")
        # Results are matched by case id (diff, history), so a repeated id would make them ambiguous.
        if item["caseId"] in seen:
            first = seen[item["caseId"]]
            problem = f"duplicate caseId {item['caseId']!r} (already in results[{first}]): expected each case once"
            raise BadInput(path, problem, where=f"results[{index}]")
        seen[item["caseId"]] = index
        if not checked:  # a sealed report was checked when first read
            _check_figures(path, item, ("toolCallCount", "durationMs"), f"results[{index}]")
        parsed.append(result_from_json(item))
    _check_figures(path, data, ("averageToolCallCount", "averageDurationMs"), None)
    rate = _as_number(data.get("passRate"))
    if rate is not None and not 0 <= rate <= 1:
        raise BadInput(path, f"field 'passRate': expected a ratio from 0 to 1, got {rate!r}")
    report = build_report(parsed)
    # Prefer the report's own aggregates when it states them (a Java report averages its own way).
    for key in ("totalCases", "passedCases", "failedCases", "notRunCases"):
        if isinstance(data.get(key), int) and not isinstance(data.get(key), bool):
            setattr(report, key, data[key])
    for key in ("passRate", "averageToolCallCount", "averageDurationMs"):
        if _as_number(data.get(key)) is not None:
            setattr(report, key, data[key])
    if "averageDurationMs" in data and data["averageDurationMs"] is None:
        report.averageDurationMs = None
    if isinstance(data.get("verdictDistribution"), dict):
        report.verdictDistribution = {
            str(k): int(v) for k, v in data["verdictDistribution"].items() if _as_number(v) is not None
        }
    return report
