"""Reading the case file and trace fixtures, with validation and precise error messages."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, NamedTuple

from pydantic import ValidationError

from sitegen.checks import FIXTURE_MISSING, FIXTURE_PATH_INVALID
from sitegen.errors import BadInput
from sitegen.plumbing.inputfiles import Refusal, Unreadable, load_json_file, read_input, read_regular
from sitegen.plumbing.jsonread import TextProblem, decode_utf8, parse_int
from sitegen.plumbing.jsonread import json_kind as _json_kind
from sitegen.suite.case_problems import case_problem
from sitegen.suite.config import OtelSettings
from sitegen.suite.discovery import suite_path
from sitegen.suite.models import Case
from sitegen.suite.native_format import NATIVE
from sitegen.suite.otlp_format import OTLP
from sitegen.suite.traces import (
    FixtureBytes,
    FixtureProblem,
    LoadedTrace,
    TraceFormat,
    TraceSource,
    text_problem,
    unusable,
)

# The trace formats, in the order they are tried on a fixture (docs/architecture.md, "Where a new thing goes"):
# each claims its own files, and the native format, last, every other.
TRACE_FORMATS: tuple[TraceFormat, ...] = (OTLP, NATIVE)


def check_fixtures_folder(path: Path) -> None:
    """Raise BadInput unless `path` is a folder: a misspelt --fixtures must stop the command, not fail every case
    with fixture_missing."""
    if not path.exists():
        raise BadInput(path, "fixtures folder not found (expected the folder the cases' traceFixture paths are relative to)")
    if not path.is_dir():
        raise BadInput(path, "is not a folder (expected the fixtures folder)")


class CaseFile(NamedTuple):
    """The case file parsed once: each case as written (what page keys and a recording's copy take) and validated."""

    raw: list[dict[str, Any]]
    cases: list[Case]


def load_cases(path: Path, text: str | None = None) -> list[Case]:
    """Load and validate the case file: a non-empty JSON array of cases with unique ids (`text`: already read)."""
    return load_case_file(path, text).cases


def load_case_file(path: Path, text: str | None = None) -> CaseFile:
    """The case file parsed and validated, each case also as parsed (`text`: already read)."""
    data = load_json_file(path, "case file", text, expected="a JSON array of cases")
    if not isinstance(data, list):
        raise BadInput(path, f"expected a JSON array of cases, got {_json_kind(data)}")
    if not data:
        raise BadInput(path, "expected at least one case, got an empty array")
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(data):
        label = _case_label(item, index)
        if not isinstance(item, dict):
            raise BadInput(path, f"expected an object, got {_json_kind(item)}", where=label)
        try:
            case = Case.model_validate(item)
        except ValidationError as exc:
            field, problem = case_problem(exc.errors())
            raise BadInput(path, problem, where=f"{label}, field {field!r}") from None
        if case.id in seen:
            raise BadInput(
                path, f"duplicate id (already used by case #{seen[case.id] + 1}): expected unique ids", where=f"{label}, field 'id'"
            )
        seen[case.id] = index
        cases.append(case)
    return CaseFile(data, cases)


def case_lines(path: Path) -> dict[str, int]:
    """Case id → the line on which the case's object starts in the case file (1-based), for tools that point at it.

    The file was read and validated moments before (every command reads the cases first); it is read again only
    when a line is wanted (JUnit), and the positions are the JSON parser's own: each item of the top-level array
    is decoded in turn from where the previous one ended. An item without a string id is left out.
    """
    text = read_input(path, "case file").text
    decoder = json.JSONDecoder(parse_int=parse_int)
    lines: dict[str, int] = {}
    offset, line, start = _skip_json_space(text, 0), 1, 0
    if text[offset : offset + 1] != "[":
        return lines
    offset = _skip_json_space(text, offset + 1)
    while offset < len(text) and text[offset] != "]":
        line += text.count("\n", start, offset)
        start = offset
        try:
            item, offset = decoder.raw_decode(text, offset)
        except (ValueError, RecursionError):  # changed since it was validated: the cases before keep their lines
            break
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            lines.setdefault(item["id"], line)
        offset = _skip_json_space(text, offset)
        if text[offset : offset + 1] == ",":
            offset = _skip_json_space(text, offset + 1)
    return lines


def _skip_json_space(text: str, offset: int) -> int:
    """The offset of the first character at or after `offset` that is not JSON whitespace."""
    while offset < len(text) and text[offset] in " \t\n\r":
        offset += 1
    return offset


def _case_label(item: Any, index: int) -> str:
    if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
        return f"case {json.dumps(item['id'], ensure_ascii=False)} (#{index + 1})"
    return f"case #{index + 1}"


def resolve_fixture(fixtures_dir: Path, name: str, root: Path | None = None) -> Path | FixtureProblem:
    """Where a `traceFixture` points, or why it may not be read (absolute, outside, via symlink).

    `root` is `fixtures_dir.resolve()` when the caller resolved it already (once for a whole suite).
    """
    if plain_fixture_name(name):
        # A plain file name (no separator, drive or NUL) is neither absolute nor outside the folder unless it is
        # a link: one lstat instead of resolving every path component, as most suites' fixtures are named.
        root = fixtures_dir.resolve() if root is None else root
        target = root / name
        if not os.path.islink(target):
            return target
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        return FixtureProblem(FIXTURE_PATH_INVALID, f"traceFixture {name!r} is absolute: expected a path relative to {suite_path(fixtures_dir)}")
    if "\x00" in name:
        return FixtureProblem(FIXTURE_PATH_INVALID, f"traceFixture {name!r} contains a NUL character")
    root = fixtures_dir.resolve() if root is None else root
    # resolve() follows symlinks, so a link that points out of the folder is caught here too.
    try:
        target = (root / name).resolve()
    except (RuntimeError, OSError):  # links that lead back to themselves (Python 3.11 raises RuntimeError)
        return FixtureProblem(FIXTURE_PATH_INVALID, f"traceFixture {name!r} is a loop of symbolic links: not read")
    if not target.is_relative_to(root) or target == root:
        return FixtureProblem(
            FIXTURE_PATH_INVALID, f"traceFixture {name!r} resolves outside the fixtures folder {suite_path(fixtures_dir)}: not read"
        )
    return target


def plain_fixture_name(name: str) -> bool:
    """Whether a traceFixture names a file right in the fixtures folder: no separator, drive or NUL."""
    # Chained tests rather than any() over the characters: this runs for every case of every rebuild.
    return bool(name) and "/" not in name and "\\" not in name and ":" not in name and "\x00" not in name and name not in (".", "..")


def read_fixture(fixtures_dir: Path, name: str, root: Path | None = None) -> FixtureBytes | TrialFiles | FixtureProblem:
    """Read one case's trace fixture (a file, or a folder of trials); missing, outside the folder or unreadable is a
    FixtureProblem."""
    target = resolve_fixture(fixtures_dir, name, root)
    if isinstance(target, FixtureProblem):
        return target
    shown = f"{suite_path(fixtures_dir)}/{name}"
    found = read_regular(target)
    if isinstance(found, Unreadable):
        if found.why is Refusal.FOLDER:
            return _read_trial_folder(fixtures_dir, name, target, root)
        if found.why is Refusal.MISSING:
            return FixtureProblem(FIXTURE_MISSING, f"trace file {shown} does not exist")
        if found.why is Refusal.UNREADABLE:
            return unusable("trace cannot be read", shown, found.detail)
        return unusable(f"trace {found.says()}", shown)
    return FixtureBytes(target, found.data)


# A folder of trials

# What `sitegen record` writes beside a trial it could not record: not a trial (eval/README.md, "Trials").
TRIAL_ERROR_SUFFIX = ".error.json"
# The names a trace file has: a native trace or OTLP JSON (`.jsonl`, what OpenTelemetry's file exporters suggest).
TRACE_SUFFIXES = (".json", ".jsonl")


def is_trial_file(file_name: str) -> bool:
    """Whether a name in a trial folder is a trial: `*.json` or `*.jsonl`, but not a `*.error.json` that record
    wrote. Which format a trial is comes from its content, not its name."""
    return file_name.endswith(TRACE_SUFFIXES) and not file_name.endswith(TRIAL_ERROR_SUFFIX)


@dataclass(frozen=True)
class TrialFiles:
    """A folder of trials as read: each trial's traceFixture-style name (`folder/file.json`) and its bytes (or
    why they could not be read), in name order."""

    folder: str
    trials: tuple[tuple[str, FixtureBytes | FixtureProblem], ...]


@dataclass(frozen=True)
class TrialTraces:
    """A folder of trials, each parsed as a trace (or why it is not one), in name order."""

    folder: str
    trials: tuple[tuple[str, LoadedTrace | FixtureProblem], ...]


def _read_trial_folder(fixtures_dir: Path, name: str, target: Path, root: Path | None) -> TrialFiles | FixtureProblem:
    shown = f"{suite_path(fixtures_dir)}/{name}"
    try:
        names = os.listdir(target)
    except OSError as exc:
        return unusable("trace folder cannot be listed", shown, exc.strerror or "")
    entries = sorted(entry for entry in names if is_trial_file(entry))
    if not entries:
        errors = sorted(entry for entry in names if entry.endswith(TRIAL_ERROR_SUFFIX))
        if errors:
            return _none_recorded(shown, target, errors)
        return FixtureProblem(
            FIXTURE_MISSING, f"trace folder {shown} holds no trial (no *.json or *.jsonl file besides *{TRIAL_ERROR_SUFFIX})"
        )
    folder = name.rstrip("/")
    root = fixtures_dir.resolve() if root is None else root
    trials = []
    for entry in entries:
        trial = f"{folder}/{entry}"
        # Each trial is checked like a traceFixture of its own: a link out of the fixtures folder is refused.
        read = read_fixture(fixtures_dir, trial, root)
        if isinstance(read, TrialFiles):  # a folder named *.json: trials do not nest
            read = unusable("trace is a folder, not a file", f"{suite_path(fixtures_dir)}/{trial}")
        trials.append((trial, read))
    return TrialFiles(folder, tuple(trials))


_ERROR_READ_LIMIT = 64 * 1024  # `record` writes a status, a reason and a prefix of the body: far less


def _none_recorded(shown: str, folder: Path, errors: list[str]) -> FixtureProblem:
    """A folder in which `sitegen record` saved only errors: no trial could be recorded, and the first error file
    says why (its `error`, when it can be read)."""
    why = ""
    try:
        with open(folder / errors[0], "rb") as handle:
            data = handle.read(_ERROR_READ_LIMIT + 1)
        error = json.loads(data) if len(data) <= _ERROR_READ_LIMIT else None
        if isinstance(error, dict) and isinstance(error.get("error"), str):
            why = f"; {errors[0]}: {error['error'][:200]}"
    except (OSError, ValueError, RecursionError):
        pass  # the count alone still says what happened
    count = f"{len(errors)} trial{'s' if len(errors) != 1 else ''}"
    return FixtureProblem(FIXTURE_MISSING, f"no trial could be recorded at {shown}: {count} saved as *{TRIAL_ERROR_SUFFIX}{why}")


def parse_trials(fixtures_dir: Path, files: TrialFiles, otel: OtelSettings | None = None) -> TrialTraces:
    """Every trial of a folder parsed as a trace (or why it is not one); `otel`: the suite's `[otel]` settings."""
    return TrialTraces(
        files.folder,
        tuple(
            (trial, read if isinstance(read, FixtureProblem) else parse_fixture(fixtures_dir, trial, read, otel))
            for trial, read in files.trials
        ),
    )


def load_trace(fixtures_dir: Path, name: str, otel: OtelSettings | None = None) -> LoadedTrace | TrialTraces | FixtureProblem:
    """Load one case's trace fixture (or folder of trials); a bad fixture is a FixtureProblem, never an exception.
    `otel`: how an OpenTelemetry trace is read (the suite's `[otel]` settings; the defaults when None)."""
    read = read_fixture(fixtures_dir, name)
    if isinstance(read, TrialFiles):
        return parse_trials(fixtures_dir, read, otel)
    return read if isinstance(read, FixtureProblem) else parse_fixture(fixtures_dir, name, read, otel)


def parse_fixture(fixtures_dir: Path, name: str, read: FixtureBytes, otel: OtelSettings | None = None) -> LoadedTrace | FixtureProblem:
    """A fixture's bytes (from read_fixture) as a trace, or why they are not one. The format comes from the content:
    each of TRACE_FORMATS in turn claims the file or passes (`otel`: the suite's `[otel]` settings)."""
    shown = f"{suite_path(fixtures_dir)}/{name}"
    text = decode_utf8(read.data)
    if isinstance(text, TextProblem):
        return text_problem(shown, text)
    source = TraceSource(shown, read, text, otel or OtelSettings())
    for trace_format in TRACE_FORMATS:
        found = trace_format.read(source)
        if found is not None:
            return found
    raise AssertionError("the native format reads every file")  # TRACE_FORMATS ends with it


def fixture_files(fixtures_dir: Path) -> list[Path]:
    """Every *.json and *.jsonl file directly or indirectly inside the fixtures folder, sorted."""
    if not fixtures_dir.is_dir():
        return []
    found = []
    for dirpath, _dirs, files in os.walk(fixtures_dir):
        for file in files:
            if file.endswith(TRACE_SUFFIXES):
                found.append(Path(dirpath) / file)
    return sorted(found)
