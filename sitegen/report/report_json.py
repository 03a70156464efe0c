"""report.json: the report as JSON (a superset of the Java harness's shape, eval/README.md "The report"), written
byte-identical for the same inputs, and read back from sitegen's reports and the Java harness's alike.

What each field is and how it is read comes from its declaration (report/results.py); this module lays the
fields out and reads whole reports: quickly, result by result, when sitegen wrote the file and it was read before
with every check; tolerantly otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sitegen.errors import BadInput
from sitegen.plumbing.inputfiles import load_json_file
from sitegen.plumbing.jsonread import json_kind
from sitegen.plumbing.jsontext import LONE_SURROGATE as _LONE_SURROGATE
from sitegen.plumbing.jsontext import dumps_json, indented, loads
from sitegen.report import fields
from sitegen.report.figures import check_number, read_figures
from sitegen.report.results import REPORT_FORMAT_VERSION, CaseResult, Report, build_report


def _head(report: Report) -> str:
    """report.json's text without its results: its format version and figures."""
    text = dumps_json(report.to_json(results=False))
    assert text.endswith("\n}\n")
    return text


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
    results = "[\n" + ",\n".join(texts) + "\n  ]" if texts else "[]"
    return _head(report)[:-3] + ',\n  "results": ' + results + "\n}\n"


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

    pieces = [utf8(_head(report)[:-3]), b',\n  "results": [\n' if result_texts else b',\n  "results": []']
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


# A result laid out exactly as CaseResult.to_json writes it, read without the tolerant reader's conversions (a
# rebuild reads every result of the baseline and of the previous build this way); None for any other.
_sitegen_result = fields.quick_reader(CaseResult)
# Any result: a Java-harness report's (no status, tags or digest), an older sitegen's, unknown fields.
_any_result = fields.tolerant_reader(CaseResult)
_AVERAGED = fields.averaged(CaseResult)


def result_from_json(data: dict[str, Any]) -> CaseResult:
    """Read one result, tolerating Java-harness reports (no status, tags or digest) and unknown fields."""
    result = _sitegen_result(data)
    return result if result is not None else _any_result(data)


def read_report(path: Path, text: str | bytes | None = None, checked: bool = False) -> Report:
    """Load a report JSON written by sitegen or by the Java harness; bad input names the file.

    `text`: the file's text (or bytes, when `checked`), already read. `checked`: the file was read before
    with every check of its JSON (duplicate keys, number limits), so it is parsed the quick way.
    """
    if checked and text is not None:
        data, results = _sealed_report(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    else:
        assert not isinstance(text, bytes), "bytes are for a file read before with every check"
        data = load_json_file(path, "report", text, expected="a report JSON object")
        _check_report_arrays(path, data)
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
            for key in _AVERAGED:
                check_number(path, key, item.get(key), f"results[{index}]")
        parsed.append(result_from_json(item))
    worked_out = build_report(parsed)
    # The report's own figures when it states them (a Java report averages its own way), else those worked out.
    return Report(**read_figures(path, data, worked_out), results=parsed)


# The fields of a report's results (and of their trials) that the reader takes as arrays: a report may leave one
# out or write null, as the Java harness's do, but any other value is no report's.
_RESULT_ARRAYS = ("failedChecks", "tags", "trialResults")
_TRIAL_ARRAYS = ("failedChecks",)


def _check_report_arrays(path: Path, data: Any) -> None:
    """Raise BadInput at the first result or trial whose array field holds something else (`"tags": 1`)."""
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        return  # read_report says what is wrong with that
    for index, result in enumerate(results):
        if not isinstance(result, dict):
            continue
        trials = result.get("trialResults")
        places = [(f"results[{index}]", result, _RESULT_ARRAYS)]
        if isinstance(trials, list):
            places += [(f"results[{index}].trialResults[{n}]", trial, _TRIAL_ARRAYS) for n, trial in enumerate(trials) if isinstance(trial, dict)]
        for where, item, names in places:
            for name in names:
                found = item.get(name)
                if found is not None and not isinstance(found, list):
                    raise BadInput(path, f"field {name!r}: expected an array, got {json_kind(found)}", where=where)
