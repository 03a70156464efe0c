"""A case page's header figures: keywords, tool calls, duration, tokens and cost, the trace file, and for a case
with a folder of trials how its figures are made of its trials' and which trial the sections below show."""

from __future__ import annotations

from sitegen import formatting as fmt
from sitegen.report.results import CaseResult
from sitegen.report.status import Status
from sitegen.site.pages.common import Fact
from sitegen.suite.loading import TrialTraces
from sitegen.suite.models import Case
from sitegen.suite.traces import FixtureProblem, LoadedTrace


def header_facts(
    case: Case, outcome: LoadedTrace | FixtureProblem, result: CaseResult, shown: int | None, folder: TrialTraces | None
) -> tuple[Fact, ...]:
    """The header's figures of the case; `outcome` is the trace the sections show (`shown`, from 0, of `folder`)."""
    return _result_facts(case, outcome, result) + _trial_facts(result, shown, folder)


def _trial_facts(result: CaseResult, shown: int | None, outcome: TrialTraces | None) -> tuple[Fact, ...]:
    """For a case with a folder of trials: its trial count, its combined verdict said to be one, and which trial
    the sections below show (the header is the whole case; the sections are one trial)."""
    if result.trialResults is None or shown is None or outcome is None:
        return ()
    verdict = result.verdict or "no verdict"
    return (
        Fact("Trials", f"{result.passedTrials}/{result.trials} passed"),
        Fact("Verdict", f"{verdict} (the most common of {result.trials} trials)"),
        Fact("Shown below", f"trial {shown + 1} of {result.trials} ({outcome.trials[shown][0]})"),
    )


def _keywords_fact(case: Case, result: CaseResult) -> str:
    """The Keywords figure: `3/4 (needs 3)`; "none expected" rather than "0/0"; "not evaluated" for a case not run."""
    if result.status is Status.NOT_RUN:
        return "not evaluated"
    if not case.expectedRootCauseKeywords:
        return "none expected"
    return f"{result.matchedKeywordCount}/{result.requiredKeywordCount} (needs {case.keyword_threshold})"


def _result_facts(case: Case, outcome: LoadedTrace | FixtureProblem, result: CaseResult) -> tuple[Fact, ...]:
    keywords = _keywords_fact(case, result)
    if result.trialResults is not None:
        # The case's figures are made of its trials' (eval/README.md, "Trials"): say how.
        k = f"{result.trials} trials"
        return (
            Fact(f"Keywords (lowest of {k})", keywords),
            Fact(f"Tool calls (mean of {k})", fmt.count(result.toolCallCount, 2)),
            Fact(f"Duration (mean of {k})", fmt.duration(result.durationMs)),
            *_usage_facts(result, f" (mean of {k})"),
            Fact("Trace", f"{case.traceFixture} · a folder of {k}"),
        )
    read = fmt.byte_size(outcome.size) if isinstance(outcome, LoadedTrace) else "not read"
    read += _format_note(outcome)
    return (
        Fact("Keywords", keywords),
        Fact("Tool calls", f"{result.toolCallCount:,}" if isinstance(outcome, LoadedTrace) else _unread_calls(outcome)),
        Fact("Duration", fmt.duration(result.durationMs)),
        *_usage_facts(result, ""),
        Fact("Trace", f"{case.traceFixture} · {read}"),
    )


def _format_note(outcome: LoadedTrace | FixtureProblem) -> str:
    """What the trace's format says of its file beside its size (` · OpenTelemetry, 6 spans`); "" for the native
    format, and for a file no format read."""
    if outcome.format is None:
        return ""
    said = outcome.format.describe(outcome.spans, isinstance(outcome, LoadedTrace))
    return f" · {said}" if said else ""


def _unread_calls(problem: FixtureProblem) -> str:
    """The Tool calls figure of a trace not read: its tool spans when it is an OpenTelemetry file without content."""
    if problem.tool_spans is None:
        return "not read"
    return f"{fmt.plural(problem.tool_spans, 'tool span')}, not read"


def _usage_facts(result: CaseResult, how: str) -> tuple[Fact, ...]:
    """The tokens the trace records (`session.usage`, `gen_ai.usage.*`) and what they cost; "not recorded" where it
    records none, never 0 (eval/README.md, "Tokens and cost")."""
    tokens = result.tokens
    if tokens is None:
        some = sum(1 for trial in result.trialResults or () if trial.tokens is not None)
        shown = f"recorded by {some} of {result.trials} trials only" if some else fmt.NOT_RECORDED
        return Fact(f"Tokens{how}", shown), Fact(f"Cost{how}", fmt.NOT_RECORDED)
    shown = f"{fmt.tokens(tokens.input)} in"
    if tokens.cacheRead:
        shown += f" ({fmt.tokens(tokens.cacheRead)} from cache)"
    shown += f" · {fmt.tokens(tokens.output)} out"
    cost = fmt.dollars(result.cost) if result.cost is not None else "not priced: no [cost.prices] entry for its model"
    return Fact(f"Tokens{how}", shown), Fact(f"Cost{how}", cost)
