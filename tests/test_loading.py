"""Loading the case file and fixtures: every bad input gets one precise message; bad fixtures fail only their case."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import make_case, make_trace, write_suite
from sitegen.errors import BadInput
from sitegen.plumbing.inputfiles import read_input
from sitegen.suite.loading import load_cases, load_trace
from sitegen.suite.traces import FixtureProblem, LoadedTrace


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def bad_cases_message(tmp_path: Path, text: str | bytes) -> str:
    path = write(tmp_path / "cases.json", text)
    with pytest.raises(BadInput) as info:
        load_cases(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message[len(str(path)) :]


def test_loads_valid_cases_with_defaults_notes_and_annotations(tmp_path: Path) -> None:
    first = make_case(title=None, notes="why this case exists", **{"_owner": "sre", "x-ticket": {"id": 7}, "_gone": None})
    path = write(tmp_path / "cases.json", json.dumps([first, make_case(id="c2", traceFixture="b.json")]))
    cases = load_cases(path)
    assert [c.id for c in cases] == ["c1", "c2"]
    assert cases[0].display_title == "c1" and cases[0].allowedVerdicts == ["PASS"]
    assert cases[0].notes == "why this case exists" and cases[1].notes == ""
    # Annotations are kept as written (null included: it is not a defined field, so null does not mean absent).
    assert cases[0].annotations == {"_owner": "sre", "x-ticket": {"id": 7}, "_gone": None}
    assert cases[1].annotations == {}
    assert list(cases[0].annotations) == ["_owner", "x-ticket", "_gone"]  # in file order, as the case page lists them


def test_notes_and_annotations_keep_the_digest_they_had_as_unknown_fields(tmp_path: Path) -> None:
    # The digests are pinned (a diff against a baseline must not call an unchanged case edited): notes and
    # annotations hash as they did when they were unknown fields; traceFixture is not part of the digest.
    plain = load_cases(write(tmp_path / "a.json", json.dumps([make_case()])))[0]
    annotated = load_cases(write(tmp_path / "b.json", json.dumps([make_case(notes="n", _owner="sre")])))[0]
    assert plain.digest() == "sha256:2004239bb71424c2"
    assert annotated.digest() == "sha256:dea67902f01ce297"
    assert load_cases(write(tmp_path / "c.json", json.dumps([make_case(_owner="ops")])))[0].digest() != plain.digest()


def test_where_the_trace_lives_is_not_part_of_the_digest(tmp_path: Path) -> None:
    moved = load_cases(write(tmp_path / "a.json", json.dumps([make_case(traceFixture="recordings/x/c1-0a1b")])))[0]
    assert moved.digest() == load_cases(write(tmp_path / "b.json", json.dumps([make_case()])))[0].digest()
    edited = load_cases(write(tmp_path / "c.json", json.dumps([make_case(question="why?")])))[0]
    assert edited.digest() != moved.digest()


# What an unknown field with no close match is told: every defined field, and how annotations are named.
NO_SUCH_FIELD = (
    "unknown field: expected one of id, title, question, traceFixture, expectedRootCauseKeywords, minKeywordMatches, "
    "keywordsAnyPolarity, requiredEvidenceTools, allowedVerdicts, forbiddenVerdicts, forbiddenAnswerKeywords, forbiddenConfirmedClaimKeywords, "
    "requireV2AuditClosure, requireClaimChecks, requireComposerOutput, expectedGatekeeperRuleSetVersion, "
    "degradedAnswerMarkers, requireSuccessfulEvidence, tags, notes, expectedTrajectory (free annotations start with `_` or `x-`)"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"id": "a", "traceFixture": "a.json"},\n  {"id": "b" "traceFixture": "b.json"}]', ":2:14: invalid JSON: Expecting ',' delimiter"),
        ("", ": the case file is empty (expected a JSON array of cases)"),
        ("[]", ": expected at least one case, got an empty array"),
        ('{"id": "a"}', ": expected a JSON array of cases, got an object"),
        ('"cases"', ": expected a JSON array of cases, got a string"),
        ("[1]", ":case #1: expected an object, got a number"),
        (
            json.dumps([make_case(), make_case(title="again")]),
            ":case \"c1\" (#2), field 'id': duplicate id (already used by case #1): expected unique ids",
        ),
        (json.dumps([{"traceFixture": "a.json"}]), ":case #1, field 'id': missing (expected this required field)"),
        (json.dumps([{"id": "a"}]), ":case \"a\" (#1), field 'traceFixture': missing (expected this required field)"),
        (json.dumps([{"id": 7, "traceFixture": "a"}]), ":case #1, field 'id': expected a string, got 7"),
        (json.dumps([{"id": "", "traceFixture": "a"}]), ":case #1, field 'id': expected a non-empty string, got \"\""),
        (json.dumps([make_case(minKeywordMatches="2")]), ":case \"c1\" (#1), field 'minKeywordMatches': expected an integer, got \"2\""),
        (json.dumps([make_case(minKeywordMatches=-1)]), ":case \"c1\" (#1), field 'minKeywordMatches': expected a number ≥ 0, got -1"),
        (json.dumps([make_case(minKeywordMatches=True)]), ":case \"c1\" (#1), field 'minKeywordMatches': expected an integer, got true"),
        (json.dumps([make_case(requireV2AuditClosure="yes")]), ":case \"c1\" (#1), field 'requireV2AuditClosure': expected true or false, got \"yes\""),
        (json.dumps([make_case(allowedVerdicts=[])]), ":case \"c1\" (#1), field 'allowedVerdicts': expected a non-empty array, got []"),
        (json.dumps([make_case(tags="matrix")]), ":case \"c1\" (#1), field 'tags': expected an array, got \"matrix\""),
        (json.dumps([make_case(requiredEvidenceTools=["query_logs", 3])]), ":case \"c1\" (#1), field 'requiredEvidenceTools[1]': expected a string, got 3"),
        ('[{"id": "a", "id": "b", "traceFixture": "x"}]', ":1:14: duplicate key 'id' in an object: expected each key once"),
        (
            json.dumps([make_case(requiredEvidenceTool=["nonexistent_tool"])]),
            ":case \"c1\" (#1), field 'requiredEvidenceTool': unknown field: did you mean `requiredEvidenceTools`? "
            "(free annotations start with `_` or `x-`)",
        ),
        (
            json.dumps([make_case(ForbiddenVerdicts=["REJECT"])]),
            ":case \"c1\" (#1), field 'ForbiddenVerdicts': unknown field: did you mean `forbiddenVerdicts`? "
            "(free annotations start with `_` or `x-`)",
        ),
        (
            json.dumps([make_case(owner="sre")]),
            ":case \"c1\" (#1), field 'owner': " + NO_SUCH_FIELD,
        ),
        # "annotations" is where the model keeps them, not a field a case file may set.
        (json.dumps([make_case(annotations={})]), ":case \"c1\" (#1), field 'annotations': " + NO_SUCH_FIELD),
        (json.dumps([make_case(notes=3)]), ":case \"c1\" (#1), field 'notes': expected a string, got 3"),
        (
            json.dumps([make_case(expectedRootCauseKeywords=["连接池", "  "])]),
            ":case \"c1\" (#1), field 'expectedRootCauseKeywords[1]': expected text (not empty or whitespace only), got \"  \"",
        ),
        (
            json.dumps([make_case(requiredEvidenceTools=[""])]),
            ":case \"c1\" (#1), field 'requiredEvidenceTools[0]': expected text (not empty or whitespace only), got \"\"",
        ),
        (
            json.dumps([make_case(degradedAnswerMarkers=["\u3000"])], ensure_ascii=False),
            ":case \"c1\" (#1), field 'degradedAnswerMarkers[0]': expected text (not empty or whitespace only), got \"\u3000\"",
        ),
        (
            json.dumps([make_case(expectedGatekeeperRuleSetVersion="")]),
            ":case \"c1\" (#1), field 'expectedGatekeeperRuleSetVersion': expected text (not empty or whitespace only), got \"\"",
        ),
        (
            json.dumps([make_case(expectedGatekeeperRuleSetVersion=" \t")]),
            ":case \"c1\" (#1), field 'expectedGatekeeperRuleSetVersion': expected text (not empty or whitespace only), got \" \\t\"",
        ),
        (
            json.dumps([make_case(expectedRootCauseKeywords=["HikariCP", "连接池", "ＨＩＫＡＲＩＣＰ"])], ensure_ascii=False),
            ":case \"c1\" (#1), field 'expectedRootCauseKeywords': entries \"HikariCP\" and \"ＨＩＫＡＲＩＣＰ\" are equal after "
            "NFKC normalisation and case folding: expected each entry once",
        ),
        (
            json.dumps([make_case(allowedVerdicts=["PASS", "pass"])]),
            ":case \"c1\" (#1), field 'allowedVerdicts': entries \"PASS\" and \"pass\" are equal after "
            "NFKC normalisation and case folding: expected each entry once",
        ),
        (
            json.dumps([make_case(forbiddenAnswerKeywords=["一定是", "一定是"])], ensure_ascii=False),
            ":case \"c1\" (#1), field 'forbiddenAnswerKeywords': entries \"一定是\" and \"一定是\" are equal after "
            "NFKC normalisation and case folding: expected each entry once",
        ),
        ('[{"id": "a", "traceFixture": "x", "minKeywordMatches": NaN}]', ":1:56: invalid JSON: NaN is not a JSON number (expected a finite number)"),
    ],
)
def test_bad_case_files(tmp_path: Path, text: str, expected: str) -> None:
    assert bad_cases_message(tmp_path, text) == expected


@pytest.mark.parametrize(
    "field",
    [
        "requiredEvidenceTools", "expectedRootCauseKeywords", "allowedVerdicts", "forbiddenVerdicts",
        "forbiddenAnswerKeywords", "forbiddenConfirmedClaimKeywords", "degradedAnswerMarkers", "tags",
    ],
)  # fmt: skip
def test_every_text_list_refuses_blank_and_duplicate_entries(tmp_path: Path, field: str) -> None:
    assert "expected text (not empty or whitespace only)" in bad_cases_message(tmp_path, json.dumps([make_case(**{field: ["a", " "]})]))
    duplicate = bad_cases_message(tmp_path, json.dumps([make_case(**{field: ["Straße", "STRASSE"]})], ensure_ascii=False))
    assert duplicate.endswith(f"field '{field}': entries \"Straße\" and \"STRASSE\" are equal after NFKC normalisation and case folding: expected each entry once")


def test_an_unknown_field_is_named_before_other_problems(tmp_path: Path) -> None:
    message = bad_cases_message(tmp_path, json.dumps([make_case(tags=3, requireClaimCheck=True)]))
    assert message == (
        ":case \"c1\" (#1), field 'requireClaimCheck': unknown field: did you mean `requireClaimChecks`? "
        "(free annotations start with `_` or `x-`) (and 1 more problem)"
    )


def test_a_misspelt_field_stops_every_command_with_a_suggestion(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sitegen.cli import app

    cases, fixtures = write_suite(tmp_path, [make_case()], {"c1.json": make_trace("ok")})
    report, site = tmp_path / "report.json", tmp_path / "site"
    report.write_text("previous", encoding="utf-8")
    built = CliRunner().invoke(app, ["build", "--cases", str(cases), "--fixtures", str(fixtures), "--out", str(site)])
    assert built.exit_code == 0, built.output
    before = {path: path.read_bytes() for path in site.rglob("*") if path.is_file()}
    # A misspelt field name: were it ignored, the case would pass and `check` would say "ok".
    write_suite(tmp_path, [make_case(requiredEvidenceTool=["nonexistent_tool"])], {})
    runs = {
        "check": [],
        "evaluate": ["--json", str(report)],
        "baseline": ["--dir", str(tmp_path / "baseline")],
        "build": ["--out", str(site)],
    }
    for command, outputs in runs.items():
        result = CliRunner().invoke(app, [command, "--cases", str(cases), "--fixtures", str(fixtures), *outputs])
        assert result.exit_code == 2, (command, result.output)
        assert (
            f"error: {cases}:case \"c1\" (#1), field 'requiredEvidenceTool': unknown field: "
            "did you mean `requiredEvidenceTools`? (free annotations start with `_` or `x-`)"
        ) in result.output, (command, result.output)
        assert "Traceback" not in result.output and "ok:" not in result.output
    assert report.read_text(encoding="utf-8") == "previous"
    assert not (tmp_path / "baseline").exists()
    assert {path: path.read_bytes() for path in site.rglob("*") if path.is_file()} == before


def test_several_problems_in_one_case_are_counted(tmp_path: Path) -> None:
    message = bad_cases_message(tmp_path, json.dumps([{"id": "a", "traceFixture": 1, "tags": 2, "question": 3}]))
    assert message.endswith("(and 2 more problems)"), message


def test_not_utf8(tmp_path: Path) -> None:
    message = bad_cases_message(tmp_path, b'[{"id": "a",\n "title": "caf\xe9", "traceFixture": "x"}]')
    assert message == ":2:15: not UTF-8 (byte 0xe9): expected UTF-8 text"


def test_an_input_read_for_its_bytes_is_refused_when_its_text_is_asked_for(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.json", b'[{"id": "caf\xe9"}]')
    found = read_input(path, "case file", decoded=False)  # a build's sealed input: parsed from its bytes
    assert found.data == path.read_bytes()
    with pytest.raises(BadInput) as raised:
        found.text
    assert str(raised.value) == f"{path}:1:13: not UTF-8 (byte 0xe9): expected UTF-8 text"
    with pytest.raises(BadInput, match="not UTF-8"):
        read_input(path, "case file")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.json", b"\xef\xbb\xbf" + json.dumps([make_case()]).encode())
    assert load_cases(path)[0].id == "c1"


def test_missing_case_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"nope\.json: case file not found"):
        load_cases(tmp_path / "nope.json")


def test_case_file_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="is a directory"):
        load_cases(tmp_path)


def test_null_optional_fields_mean_default(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.json", json.dumps([make_case(minKeywordMatches=None, tags=None, allowedVerdicts=None)]))
    case = load_cases(path)[0]
    assert case.tags == [] and case.allowedVerdicts == ["PASS"] and case.keyword_threshold == 0


# Fixtures


def problem(fixtures: Path, name: str) -> FixtureProblem:
    outcome = load_trace(fixtures, name)
    assert isinstance(outcome, FixtureProblem), outcome
    return outcome


def test_loads_a_trace(tmp_path: Path) -> None:
    write(tmp_path / "fx" / "a.json", json.dumps(make_trace("答案", tools=["query_logs"])))
    outcome = load_trace(tmp_path / "fx", "a.json")
    assert isinstance(outcome, LoadedTrace)
    assert outcome.trace.session.answer == "答案" and outcome.trace.toolInvocations[0].toolName == "query_logs"


def test_trace_in_subfolder_and_dotdot_that_stays_inside(tmp_path: Path) -> None:
    write(tmp_path / "fx" / "sub" / "a.json", json.dumps(make_trace()))
    assert isinstance(load_trace(tmp_path / "fx", "sub/a.json"), LoadedTrace)
    assert isinstance(load_trace(tmp_path / "fx", "sub/../sub/a.json"), LoadedTrace)


def test_missing_fixture(tmp_path: Path) -> None:
    outcome = problem(tmp_path, "gone.json")
    assert outcome.code == "fixture_missing" and "gone.json does not exist" in outcome.message


NOT_JSON, NOT_TRACE = "trace is not JSON", "trace is not the trace shape"


@pytest.mark.parametrize(
    ("text", "reason", "where", "detail"),
    [
        ("{not json", NOT_JSON, ":1:2", "Expecting property name enclosed in double quotes"),
        ("[]", NOT_TRACE, "", "expected a JSON object with a 'session' object, got an array"),
        ("{}", NOT_TRACE, "", "field 'session': expected an object, got nothing"),
        ('{"session": "x"}', NOT_TRACE, "", "field 'session': expected an object, got a string"),
        ('{"session": {"answer": 5}}', NOT_TRACE, "", "field 'session.answer': expected a string, got 5"),
        ('{"session": {}, "toolInvocations": {}}', NOT_TRACE, "", "field 'toolInvocations': expected an array, got {}"),
        ('{"session": {}, "toolInvocations": [{"toolName": "q", "success": "yes"}]}', NOT_TRACE, "",
         "field 'toolInvocations[0].success': expected true or false, got \"yes\""),
        (
            '{"session": {"selfEvaluation": {"verifier_evaluation": {"verdict": 1}}}}', NOT_TRACE, "",
            "field 'session.selfEvaluation.verifier_evaluation.verdict': expected a string, got 1",
        ),
        (
            '{"session": {"selfEvaluation": {"verifier_evaluation": {"gatekeeper_result": "fail"}}}}', NOT_TRACE, "",
            "field 'session.selfEvaluation.verifier_evaluation.gatekeeper_result': expected an object, got \"fail\"",
        ),
        ('{"session": {"totalDurationMs": Infinity}}', NOT_JSON, ":1:33", "Infinity is not a JSON number (expected a finite number)"),
        ('{"session": {"totalDurationMs": 1e999}}', NOT_JSON, ":1:33", "1e999 is out of range (expected a finite number)"),
        ('{"session": {"totalDurationMs": 1' + "0" * 400 + "}}", NOT_TRACE, "",
         "field 'session.totalDurationMs': expected a number within ±1.8e308 (the range of a double) (got 1" + "0" * 56 + "...)"),
        (
            '{"session": {"answer": "x",\n  "selfEvaluation": {"verifier_evaluation": {"verdict": "REJECT", "verdict": "PASS"}}}}',
            NOT_JSON, ":2:67", "duplicate key 'verdict' in an object: expected each key once",
        ),
        ('{"toolInvocations": [{"durationMs": -Infinity}], "session": {}}', NOT_JSON, ":1:37",
         "-Infinity is not a JSON number (expected a finite number)"),
    ],
)
def test_invalid_fixture(tmp_path: Path, text: str, reason: str, where: str, detail: str) -> None:
    # `<reason> at <place>: <detail>`: what every summary quotes after the case's id (eval/README.md, "Rules").
    write(tmp_path / "t.json", text)
    outcome = problem(tmp_path, "t.json")
    assert outcome.code == "fixture_invalid"
    assert outcome.message == f"{reason} at {tmp_path}/t.json{where}: {detail}"


def test_fixture_not_utf8(tmp_path: Path) -> None:
    write(tmp_path / "t.json", b'{"session": {"answer": "\xff"}}')
    assert problem(tmp_path, "t.json").message == f"trace is not UTF-8 text at {tmp_path}/t.json:1:25: byte 0xff"


def test_deeply_nested_fixture_is_invalid_not_a_crash(tmp_path: Path) -> None:
    write(tmp_path / "t.json", '{"session": {"x": ' + "[" * 200_000 + "]" * 200_000 + "}}")
    assert problem(tmp_path, "t.json").code == "fixture_invalid"


def test_fixture_directory_without_trials_is_not_run(tmp_path: Path) -> None:
    # A folder is a folder of trials (eval/README.md, "Trials"); one with none has nothing to run.
    (tmp_path / "d.json").mkdir()
    found = problem(tmp_path, "d.json")
    assert found.code == "fixture_missing" and "holds no trial" in found.message


def test_a_folder_whose_every_trial_failed_to_record_says_so(tmp_path: Path) -> None:
    # `sitegen record` saves a response that is not a trace as trial-NNN.error.json: none could be recorded.
    (tmp_path / "d").mkdir()
    error = {"caseId": "d", "trial": 1, "status": 500, "error": "HTTP 500 Internal Server Error", "attempts": 4}
    (tmp_path / "d" / "trial-001.error.json").write_text(json.dumps(error), encoding="utf-8")
    (tmp_path / "d" / "trial-002.error.json").write_text("not json", encoding="utf-8")
    found = problem(tmp_path, "d")
    assert found.code == "fixture_missing"
    assert found.message == (f"no trial could be recorded at {tmp_path}/d: 2 trials saved as *.error.json; "
                             "trial-001.error.json: HTTP 500 Internal Server Error")
    (tmp_path / "d" / "trial-001.error.json").unlink()
    assert problem(tmp_path, "d").message == f"no trial could be recorded at {tmp_path}/d: 1 trial saved as *.error.json"


def test_null_fields_are_absent(tmp_path: Path) -> None:
    trace = {"session": {"answer": None, "totalDurationMs": None, "selfEvaluation": {"executor_answer": None, "verifier_evaluation": None}}, "toolInvocations": None}
    write(tmp_path / "t.json", json.dumps(trace))
    outcome = load_trace(tmp_path, "t.json")
    assert isinstance(outcome, LoadedTrace) and outcome.trace.session.answer == "" and outcome.trace.verdict is None


@pytest.mark.parametrize("name", ["/etc/passwd", "../outside.json", "sub/../../outside.json", "C:\\x.json", "\\\\server\\share\\x.json"])
def test_path_outside_is_never_read(tmp_path: Path, name: str) -> None:
    write(tmp_path / "outside.json", json.dumps(make_trace()))
    fixtures = tmp_path / "fx"
    fixtures.mkdir()
    outcome = problem(fixtures, name)
    assert outcome.code == "fixture_path_invalid", outcome


def test_symlink_out_of_fixtures_is_invalid(tmp_path: Path) -> None:
    write(tmp_path / "secret.json", json.dumps(make_trace()))
    fixtures = tmp_path / "fx"
    fixtures.mkdir()
    os.symlink(tmp_path / "secret.json", fixtures / "link.json")
    os.symlink(tmp_path, fixtures / "up")
    assert problem(fixtures, "link.json").code == "fixture_path_invalid"
    assert problem(fixtures, "up/secret.json").code == "fixture_path_invalid"


def test_symlink_inside_fixtures_is_fine(tmp_path: Path) -> None:
    fixtures = tmp_path / "fx"
    write(fixtures / "real.json", json.dumps(make_trace()))
    os.symlink(fixtures / "real.json", fixtures / "alias.json")
    assert isinstance(load_trace(fixtures, "alias.json"), LoadedTrace)


def test_fixtures_folder_itself_is_not_a_fixture(tmp_path: Path) -> None:
    assert problem(tmp_path, ".").code == "fixture_path_invalid"
