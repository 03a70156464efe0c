"""The run history of the site (eval/README.md, "History"): read, record this run in time order, keep the last N.

`history.json` is a JSON array of runs, oldest first. Each run carries `formatVersion` so a later sitegen can
tell what it reads; unknown fields of a run are kept and written back. The previous history comes from a file
or an http(s) URL and is only ever read: the extended history is written into the site, nowhere else.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from pydantic import BaseModel, ConfigDict, PlainValidator, StringConstraints, ValidationError, create_model, field_validator
from pydantic_core import PydanticCustomError

from sitegen.defaults import DEFAULT_HISTORY_LIMIT, FLAKY_FLIPS, FLAKY_WINDOW, HISTORY_URL_TIMEOUT, MAX_RESPONSE_BYTES
from sitegen.errors import BadInput, UsageError
from sitegen.finite import RANGE_TEXT, in_float_range
from sitegen.plumbing.deadline import TooLarge, TooSlow
from sitegen.plumbing.inputfiles import present, read_input
from sitegen.plumbing.jsontext import dumps_json
from sitegen.report.figures import (
    COUNT,
    COUNTS,
    DOLLARS_SPENT,
    INTERVAL,
    MEAN,
    MEAN_OR_NULL,
    RATE,
    TOKENS_SPENT,
    FigureKind,
    figures,
)
from sitegen.report.results import CaseResult, Report, ReportFigure, TrialFigures
from sitegen.report.status import Status

HISTORY_FORMAT_VERSION = 1

_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_URL = re.compile(r"^https?://", re.IGNORECASE)
# Longer than any ISO-8601 time: such a createdAt is not parsed at all (it cannot be a time).
_MAX_TIME_TEXT = 64


def _number_or_null(value: Any) -> int | float | None:
    """A JSON number kept as written (an integer stays an integer), or null."""
    if value is None:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _in_range(value)
    raise PydanticCustomError("history_number", "expected a number or null")


def _count(value: Any) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _in_range(value)
    raise PydanticCustomError("history_count", "expected a count (a number)")


def _ratio_or_null(value: Any) -> int | float | None:
    """A pass rate: a number from 0 to 1 (the charts show it in percent), or null."""
    number = _number_or_null(value)
    return None if number is None else _ratio(number)


def _ratio(number: int | float) -> int | float:
    if not 0 <= number <= 1:
        raise PydanticCustomError("history_ratio", "expected a ratio from 0 to 1 or null")
    return number


def _in_range(value: int | float) -> int | float:
    """Only a number a double can hold: the charts scale every figure."""
    if not in_float_range(value):
        raise PydanticCustomError("history_number", f"expected a number within {RANGE_TEXT} (the range of a double)")
    return value


def _interval_or_null(value: Any) -> tuple[int | float, int | float] | None:
    """A [low, high] pair of ratios kept as written, or null."""
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return (_ratio(value[0]), _ratio(value[1]))
    raise PydanticCustomError("history_interval", "expected [low, high], two numbers, or null")


NumberOrNull = Annotated[int | float | None, PlainValidator(_number_or_null)]
RatioOrNull = Annotated[int | float | None, PlainValidator(_ratio_or_null)]
Count = Annotated[int | float, PlainValidator(_count)]
IntervalOrNull = Annotated[tuple[int | float, int | float] | None, PlainValidator(_interval_or_null)]


class _RunRecord(BaseModel):
    """What a run records besides the report's figures: who/when, and each case's pass/fail (Run adds the figures)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    formatVersion: int = HISTORY_FORMAT_VERSION
    runId: Annotated[str, StringConstraints(min_length=1)]
    label: str = ""
    createdAt: str = ""
    commit: str | None = None
    # Built from a work tree with uncommitted changes (eval/README.md, "History"): drawn apart on the charts,
    # replaced by the next such build, never counted towards flakiness. Written only when true.
    local: bool = False

    @field_validator("formatVersion")
    @classmethod
    def _readable_version(cls, version: int) -> int:
        if version < 1:
            raise PydanticCustomError("history_format", "expected a positive history format version")
        if version > HISTORY_FORMAT_VERSION:
            raise PydanticCustomError(
                "history_format",
                "written by a newer sitegen: this one reads history format up to {supported}",
                {"supported": HISTORY_FORMAT_VERSION},
            )
        return version

    def figure(self, name: ReportFigure) -> Any:
        """An aggregate figure of the report (e.g. `ReportFigure.PASS_RATE`), or None when this run did not record it."""
        return getattr(self, name) if name in _AGGREGATES else None

    @property
    def extra(self) -> dict[str, Any]:
        """The run's fields this sitegen does not know, kept as read."""
        return dict(self.model_extra or {})

    def to_json(self) -> dict[str, Any]:
        """The run as written to history.json: fixed field order, sorted maps, unknown fields last."""
        data: dict[str, Any] = {
            "formatVersion": HISTORY_FORMAT_VERSION,
            "runId": self.runId,
            "label": self.label,
            "createdAt": self.createdAt,
            "commit": self.commit,
        }
        if self.local:
            data["local"] = True
        for name in _AGGREGATES:
            if name in self.model_fields_set:
                value = getattr(self, name)
                data[name] = dict(sorted(value.items())) if isinstance(value, dict) else value
        data["cases"] = dict(sorted(getattr(self, "cases").items()))
        tail = self.extra
        for name in _TRIAL_FIGURES:
            if name in self.model_fields_set:
                value = getattr(self, name)
                tail[name] = list(value) if isinstance(value, tuple) else value
        for key in sorted(tail):
            data[key] = tail[key]
        return data


# How history.json reads each kind of the report's figures (report/figures.py); a run may lack any of them.
_AS_READ: dict[FigureKind, Any] = {
    COUNT: int | None, RATE: RatioOrNull, MEAN: NumberOrNull, MEAN_OR_NULL: NumberOrNull,
    COUNTS: dict[str, Count] | None, INTERVAL: IntervalOrNull, TOKENS_SPENT: NumberOrNull, DOLLARS_SPENT: NumberOrNull,
}
# The report's figures as a run records them: the numbers in the report's order, then the verdict counts.
_AGGREGATE_FIGURES = sorted(figures(Report), key=lambda figured: figured[2].kind is COUNTS)
_AGGREGATES = tuple(key for _, key, _ in _AGGREGATE_FIGURES)
# A run some case of which had a folder of trials also records the report's trial figures (the pass-rate chart's
# band), written after `cases` as they always were.
_TRIAL_FIGURES = tuple(key for _, key, _ in figures(TrialFigures))

# One recorded build: who/when, the report's figures (declared once, report/results.py) and each case's pass/fail.
Run = create_model(
    "Run",
    __base__=_RunRecord,
    __module__=__name__,
    **{key: (_AS_READ[declared.kind], None) for _, key, declared in _AGGREGATE_FIGURES},
    cases=(dict[str, bool], ...),
    **{key: (_AS_READ[declared.kind], None) for _, key, declared in figures(TrialFigures)},
)


@dataclass(frozen=True)
class History:
    """The previous runs a build continues, and what to tell the user about where they came from."""

    runs: list[Run]
    warnings: list[str] = field(default_factory=list)


def _run_from_json(source: str, index: int, item: Any) -> Run:
    from sitegen.plumbing.jsonread import describe_error, format_loc

    try:
        return Run.model_validate(item)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        place = format_loc(first["loc"])
        where = f"[{index}].{place}" if place else f"[{index}]"
        raise BadInput(source, f"{describe_error(first)}{more}", where=where) from None


def parse_history(source: str, text: str) -> list[Run]:
    """The runs of a history.json text, oldest first; BadInput names `source` and the place of a problem."""
    from sitegen.plumbing.jsonread import TextProblem, parse_json_text

    if text.lstrip("\ufeff \t\r\n").startswith("<"):
        raise BadInput(source, "got an HTML page, not a history (expected the JSON array of runs sitegen writes)")
    data = parse_json_text(text, strict_keys=True)
    if isinstance(data, TextProblem):
        raise BadInput(source, data.problem, where=data.where)
    if not isinstance(data, list):
        raise BadInput(source, "expected a JSON array of runs (the history.json sitegen writes)")
    runs = [_run_from_json(source, index, item) for index, item in enumerate(data)]
    seen: dict[str, int] = {}
    for index, run in enumerate(runs):
        if run.runId in seen:
            raise BadInput(source, f"duplicate runId {run.runId!r} (also run #{seen[run.runId] + 1})", where=f"[{index}].runId")
        seen[run.runId] = index
    return runs


def read_history(path: Path) -> list[Run]:
    """Read a history.json file (oldest run first); a missing or corrupt file is BadInput."""
    return parse_history(str(path), read_input(path, "history file").text)


def is_url(source: str | Path) -> bool:
    """Whether a --history source is an http(s) address rather than a file."""
    return isinstance(source, str) and _URL.match(source) is not None


def _fetch(url: str, timeout: float) -> str | None:
    """The body of `url` as text, or None when the server says it does not exist (404/410); the whole download
    within `timeout` seconds and MAX_RESPONSE_BYTES (sitegen/plumbing/download.py)."""
    # Imported here: urllib with http.client, ssl and email is a good part of a small build's start, and only
    # a --history address needs it.
    import http.client
    import urllib.error

    from sitegen.plumbing.download import download

    headers = {"Accept": "application/json", "User-Agent": "sitegen", "Cache-Control": "no-cache"}
    try:
        answer = download(url, seconds=timeout, headers=headers)
    except TooSlow:
        raise BadInput(url, f"cannot read the history: the download took longer than {timeout:g} s (expected history.json in that time)") from None
    except TooLarge:
        raise BadInput(url, f"cannot read the history: larger than {MAX_RESPONSE_BYTES // 2**20} MiB (expected a history.json below that)") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise BadInput(url, f"cannot read the history: {reason}") from None
    if answer.status in (404, 410):
        return None
    if not 200 <= answer.status < 300:
        raise BadInput(url, f"cannot read the history: HTTP {answer.status} {answer.reason} (expected 200 with history.json)")
    if answer.content_type == "text/html":
        # Access-controlled Pages answer with a login page and status 200.
        raise BadInput(url, "got an HTML page (HTTP 200, text/html), not a history: a login page? (expected history.json)")
    try:
        return answer.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(url, f"not UTF-8 (byte 0x{answer.body[exc.start]:02x} at offset {exc.start})") from None


def load_history(
    source: str | Path | None, site_history: Path, *, optional: bool = False, timeout: float = HISTORY_URL_TIMEOUT
) -> History:
    """The runs a build continues: from `source` (a file or URL, read only), else the site's own history.json.

    Without `source`, a site that has no history.json yet starts a new history. A `source` that does not exist
    (no such file, HTTP 404) is bad input unless `optional`, which starts a new history with a warning. A URL is
    read within `timeout` seconds in all and MAX_RESPONSE_BYTES, or it is bad input.
    """
    if source is None:
        return History(read_history(site_history) if present(site_history) else [])
    if is_url(source):
        text = _fetch(str(source), timeout)
        if text is None:
            return _missing(str(source), "HTTP 404", optional)
        return History(parse_history(str(source), text))
    path = Path(source)
    if not present(path):
        return _missing(str(path), "no such file", optional)
    return History(read_history(path))


def _missing(source: str, why: str, optional: bool) -> History:
    if not optional:
        raise BadInput(
            source, f"history not found ({why}); give --history-optional to start a new history when there is none yet"
        )
    return History([], [f"{source}: history not found ({why}): starting a new history with this run"])


def check_history_limit(limit: int) -> None:
    """Refuse a history limit that would keep no run (the one check of --history-limit)."""
    if limit < 1:
        raise UsageError(f"--history-limit must be at least 1, got {limit}")


def new_run(report: Report, *, run_id: str, label: str, created_at: str, commit: str | None, local: bool = False) -> Run:
    """This build's run record: the report's figures as report.json states them (its trial figures too when some
    case has trials; a suite of single files records its runs as it always did) and each evaluated case's
    pass/fail; `local`: built from a work tree with uncommitted changes.

    A case that could not be evaluated is left out of `cases`, as a case not in the suite then would be: its agent
    was not judged, so it neither passed nor failed, and on its pass/fail strip it neither flips nor extends a
    streak of failures (eval/README.md, "History")."""
    figures = report.to_json(results=False)
    del figures["formatVersion"]
    cases = {result.caseId: result.passed for result in report.results if result.status is not Status.NOT_RUN}
    record = {"runId": run_id, "label": label, "createdAt": created_at, "commit": commit, **({"local": True} if local else {})}
    return Run.model_validate({**record, **figures, "cases": cases})


def _moment(created_at: str) -> datetime | None:
    """createdAt as a UTC time, or None when it is not an ISO-8601 time (such a run keeps its place)."""
    if not created_at or len(created_at) > _MAX_TIME_TEXT:
        return None
    try:
        moment = datetime.fromisoformat(created_at)
    except ValueError:
        return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def record_run(history: Sequence[Run], run: Run, limit: int = DEFAULT_HISTORY_LIMIT) -> list[Run]:
    """Record `run` in createdAt order, replacing a run with the same runId (and, for a local run, every earlier
    local run: the history keeps one), and keep the last `limit` runs.

    The run goes before the runs that are later than it, so a re-run of an old commit (whose createdAt is
    that commit's time) lands in its place and a new run at the end; the others keep their order as read,
    and a run without a readable time stays where it is.
    """
    check_history_limit(limit)
    runs = [existing for existing in history if existing.runId != run.runId and not (run.local and existing.local)]
    moment = _moment(run.createdAt)
    place = index = len(runs)
    while moment is not None and index > 0:
        before = _moment(runs[index - 1].createdAt)
        if before is not None:
            if before <= moment:
                break
            place = index - 1  # before this later run (and any undated ones after it)
        index -= 1
    runs.insert(place, run)
    return runs[-limit:]


def history_json(runs: Sequence[Run]) -> str:
    """history.json text: byte-identical for the same runs."""
    return dumps_json([run.to_json() for run in runs])


def default_run_id(commit: str | None, report_json_text: bytes) -> str:
    """A run id that is the same for the same commit and the same report (report.json's text in UTF-8, a lone
    surrogate as it is), so a rebuild replaces its run: a CI run's, and a build's outside git."""
    digest = hashlib.sha256(f"{commit or 'no-commit'}\n".encode("utf-8", "surrogatepass") + report_json_text)
    return f"run-{digest.hexdigest()[:12]}"


LOCAL_SUFFIX = "+local"  # a local run's default label: the commit its uncommitted changes sit on, then this
CI_ENV = "GITHUB_RUN_ID"  # set in a GitHub Actions job: its builds keep one point per run


class TreeState(NamedTuple):
    """What git says of the work tree a build ran in: which point of the history the build is (eval/README.md,
    "History")."""

    commit: str | None  # HEAD, or None outside git
    local: bool  # tracked files differ from HEAD (never in CI)
    ci: bool  # a CI job (GITHUB_RUN_ID set)

    def run_id(self, report_json_text: bytes) -> str:
        """This build's default run id: its commit (`commit-<12 hex>`; a rebuild at the same commit replaces the
        point), `local-<12 hex>` with uncommitted changes; in CI or outside git, default_run_id as ever."""
        if self.ci or self.commit is None:
            return default_run_id(self.commit, report_json_text)
        return f"{'local' if self.local else 'commit'}-{self.commit[:12]}"

    def label(self) -> str | None:
        """This build's default label: the short commit (`a1b2c3d4e5`), `a1b2c3d4e5+local` for a local build; None
        outside git (the run id then names it)."""
        if self.commit is None:
            return None
        return self.commit[:10] + (LOCAL_SUFFIX if self.local else "")


def tree_state(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> TreeState:
    """The commit checked out in `cwd` and whether tracked files have uncommitted changes; outside CI only.

    Tracked files only (`git status --untracked-files=no`): a build writes its site, JUnit file and recordings
    into the work tree, and a new file nobody added is not a change to what is evaluated. A submodule's own
    changes are ignored for the same reason.
    """
    env = os.environ if environ is None else environ
    commit = git_commit(cwd)
    ci = bool(env.get(CI_ENV))
    return TreeState(commit, commit is not None and not ci and _uncommitted_changes(cwd), ci)


def _uncommitted_changes(cwd: Path | None) -> bool:
    """Whether a tracked file differs from HEAD (staged or not); False when git cannot say."""
    command = ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules"]
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def build_time(environ: dict[str, str] | None = None) -> datetime:
    """Now in UTC, or SOURCE_DATE_EPOCH when set (reproducible builds; CI sets it to the commit's time)."""
    env = os.environ if environ is None else environ
    value = env.get("SOURCE_DATE_EPOCH")
    if value is None or value == "":
        return datetime.now(timezone.utc).replace(microsecond=0)
    if not value.isdigit():
        raise UsageError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got {value!r}")
    return datetime.fromtimestamp(int(value), timezone.utc)


def iso_utc(moment: datetime) -> str:
    """ISO-8601 in UTC with a `Z`, to the second."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_commit(cwd: Path | None = None) -> str | None:
    """The commit checked out in `cwd` (`git rev-parse HEAD`), or None outside git or without git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and _COMMIT.match(commit) else None


def pass_strip(runs: Sequence[Run], case_id: str) -> str:
    """One character per run, oldest first: `P` passed, `F` failed, `-` not in that run."""
    return "".join("-" if case_id not in run.cases else ("P" if run.cases[case_id] else "F") for run in runs)


def flips(strip: str) -> int:
    """How often pass/fail changed between consecutive runs that contain the case."""
    present = [c for c in strip if c != "-"]
    return sum(1 for before, after in zip(present, present[1:]) if before != after)


def is_flaky(strip: str) -> bool:
    """Pass/fail flipped at least FLAKY_FLIPS times in the last FLAKY_WINDOW runs."""
    return flips(strip[-FLAKY_WINDOW:]) >= FLAKY_FLIPS


def counted_strips(runs: Sequence[Run], case_ids: Sequence[str]) -> dict[str, str]:
    """Each case's pass strip over the runs that count towards flakiness: local runs never do (a change being
    tried out is not the agent flipping)."""
    counted = [run for run in runs if not run.local]
    return {case_id: pass_strip(counted, case_id) for case_id in case_ids}


def trials_disagree(result: CaseResult) -> bool:
    """Some of the case's trials in this run passed and some did not."""
    return result.trialResults is not None and 0 < result.passedTrials < result.trials


def flaky_cases(results: Sequence[CaseResult], strips: dict[str, str]) -> set[str]:
    """The flaky cases (eval/README.md, "Flaky cases"): their trials disagree now, or they flipped across runs."""
    return {r.caseId for r in results if trials_disagree(r) or is_flaky(strips.get(r.caseId, ""))}


