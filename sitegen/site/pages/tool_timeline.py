"""The tool-invocation timeline of a case page: a row per call, a bar placed by start time, its inputs and outputs."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from itertools import accumulate
from typing import Any, NamedTuple

from markupsafe import Markup

from sitegen import formatting as fmt
from sitegen.finite import FLOAT_MAX
from sitegen.site.pages.badges import Badge, mark_na, mark_no, mark_yes
from sitegen.site.pages.common import Fact
from sitegen.site.pages.expected_steps import ExpectedSteps, expected_steps
from sitegen.site.pages.text import (
    BUDGET_SPENT,
    MAX_TOOL_CALLS,
    PAGE_PAYLOAD_BUDGET,
    TEXT_LIMIT,
    Budget,
    element_text,
    pretty,
)
from sitegen.suite.models import INPUT_KEYS, ExpectedTrajectory, ToolInvocation
from sitegen.suite.traces import FixtureProblem, LoadedTrace

# A call's recorded fields shown first, in this order: what went in (suite/models.py's INPUT_KEYS, the report's
# definition of a call's input), then what came out; then the rest.
_INPUT_KEYS = INPUT_KEYS
_OUTPUT_KEYS = ("output", "outputs", "result", "results", "response", "content", "observation", "error", "errorMessage")
_PAYLOAD_KEYS = frozenset(_INPUT_KEYS + _OUTPUT_KEYS)  # always shown as payloads, however short
META_MAX = 80  # a scalar field this short is shown inline, not in a collapsible block


class Payload(NamedTuple):
    """A tool call's input, output or other field, pretty-printed and clipped."""

    label: str
    summary: str
    text: Markup  # escaped as an element's content (pages/text.py: element_text)
    note: str | None
    open: bool  # a failed call's output is shown unfolded: it is what a reader of a failed call looks for


class ToolCall(NamedTuple):
    """One row of the tool-invocation timeline."""

    number: str
    anchor: str
    name: str
    status: Badge
    duration: str
    meta: tuple[Fact, ...]
    bar_x: str  # the bar's start and length in percent of the bar's width, as short as they can be written
    bar_width: str
    payloads: tuple[Payload, ...]
    css: str  # "call-failed" for a call that failed (its bar is red, its badge says so), else ""
    step: int | None = None  # the expected step (expectedTrajectory) this call matched, if any


class Tick(NamedTuple):
    """A label of the timeline's time axis; `css` places it (a quarter of the way along, and so on)."""

    text: str
    css: str


class ToolsView(NamedTuple):
    """The tool-invocation timeline."""

    calls: tuple[ToolCall, ...]
    summary: str
    note: str | None
    axis: tuple[Tick, ...] = ()  # time since the first call started, at 0, ¼, ½, ¾ and all of the span
    axis_label: str = ""
    expected: ExpectedSteps | None = None  # the case's expected trajectory matched against these calls


def _payload(budget: Budget, label: str, value: Any, unfolded: bool) -> Payload:
    """A tool call's field as a collapsible payload, cut to what is left of the page's budget."""
    text = pretty(value)
    clipped = budget.clip(text, TEXT_LIMIT)
    if clipped is None:
        summary = f"{label} · {fmt.byte_size(len(text.encode('utf-8', 'surrogatepass')))}"
        return Payload(label, summary, element_text(""), BUDGET_SPENT, False)
    return Payload(label, f"{label} · {fmt.byte_size(clipped.size)}", element_text(clipped.text), clipped.note, unfolded)


def _start_times(calls: Sequence[ToolInvocation]) -> list[float] | None:
    """Each call's start in ms since the first, when every call records a parseable start time."""
    starts = []
    for call in calls:
        try:
            moment = datetime.fromisoformat(call.start_time) if call.start_time else None
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            return None
        starts.append(moment.timestamp() * 1000)
    first = min(starts, default=0.0)
    return [start - first for start in starts]


def _short_scalar(value: Any) -> str | None:
    """The value as one short line, or None when it deserves a collapsible block."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, (bool, int, float)):
        text = json.dumps(value)
    else:
        return None
    if len(text) <= META_MAX and "\n" not in text and not text.lstrip().startswith(("{", "[")):
        return text
    return None


def _call_status(call: ToolInvocation) -> Badge:
    if call.success is True:
        return mark_yes("ok")
    if call.success is False:
        return mark_no("failed")
    return mark_na("unknown")


def _fields(call: ToolInvocation, budget: Budget) -> tuple[tuple[Fact, ...], tuple[Payload, ...]]:
    """A call's recorded fields: short scalars as facts, inputs, outputs and anything longer as payloads."""
    recorded = dict(call.recorded)
    keys = [k for k in _INPUT_KEYS if k in recorded] + [k for k in _OUTPUT_KEYS if k in recorded]
    keys += [k for k in recorded if k not in keys]
    meta, payloads = [], []
    failed = call.success is False
    for key in keys:
        short = _short_scalar(recorded[key]) if key not in _PAYLOAD_KEYS else None
        if short is not None:
            meta.append(Fact(key, short))
        else:
            payloads.append(_payload(budget, key, recorded[key], failed and key in _OUTPUT_KEYS))
    return tuple(meta), tuple(payloads)


def unread_tools_summary(problem: FixtureProblem) -> str:
    """What the Tool calls section says of a trace that was not read: an OpenTelemetry file exported without its
    content names its spans and why none was read, rather than "no tool calls"."""
    if problem.spans is None:
        return "No trace, so no tool calls."
    tools = fmt.plural(problem.tool_spans or 0, "tool call span")
    return (f"The file holds {fmt.plural(problem.spans, 'span')}, {tools} among them, but was exported without its "
            "content (no span records the agent's answer), so none was read: the case was not evaluated. The failed "
            "check above says which switch captures it.")


def tools_view(outcome: LoadedTrace | FixtureProblem, trajectory: ExpectedTrajectory | None = None) -> ToolsView:
    """The timeline of a case's tool calls (the first MAX_TOOL_CALLS of them), each marked with the expected step of
    `trajectory` it matched."""
    expected = expected_steps(trajectory, outcome)
    if not isinstance(outcome, LoadedTrace):
        return ToolsView((), unread_tools_summary(outcome), None, expected=expected)
    marks = expected.marks if expected is not None else {}
    calls = outcome.trace.toolInvocations
    durations = [float(call.durationMs) if call.durationMs and call.durationMs > 0 else 0.0 for call in calls]
    recorded = _start_times(calls)
    starts, span = _placed(durations, recorded)
    unit = 1.0
    if not math.isfinite(span):  # the times add up beyond a double (sitegen/finite.py): placed in units of 2**64 ms
        unit = 2.0**64
        durations = [duration / unit for duration in durations]
        starts, span = _placed(durations, None if recorded is None else [start / unit for start in recorded])
    budget = Budget(PAGE_PAYLOAD_BUDGET)
    rows = []
    for index, call in enumerate(calls[:MAX_TOOL_CALLS]):
        width = durations[index] / span * 100 if span else 0.0
        x = starts[index] / span * 100 if span else 0.0
        meta, payloads = _fields(call, budget)
        rows.append(
            ToolCall(
                number=str(index + 1),
                anchor=f"call-{index + 1}",
                name=fmt.shorten(call.toolName) if call.toolName else "(unnamed tool)",
                status=_call_status(call),
                duration=fmt.duration(call.durationMs),
                meta=meta,
                bar_x=_coordinate(min(x, 99.5)),
                bar_width=_coordinate(max(width, 0.5)),
                payloads=payloads,
                css="call-failed" if call.success is False else "",
                step=marks.get(index + 1),
            )
        )
    whole = min(span * unit, FLOAT_MAX)
    summary = _tools_summary(calls, whole, recorded is not None)
    return ToolsView(tuple(rows), summary, _tools_note(len(calls)), *_axis(whole, recorded is not None), expected)


def _coordinate(value: float) -> str:
    """A bar's coordinate to a hundredth, without trailing zeros (`6.2`, `0`): written once a call."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _placed(durations: Sequence[float], recorded: Sequence[float] | None) -> tuple[Sequence[float], float]:
    """Each call's start (as recorded, else the calls laid end to end) and the span from the first start to the
    last end."""
    starts = recorded if recorded is not None else list(accumulate(durations, initial=0.0))[:-1]
    return starts, max((start + duration for start, duration in zip(starts, durations)), default=0.0)


def _axis(span: float, timed: bool) -> tuple[tuple[Tick, ...], str]:
    """The time axis under the bars: five labels from 0 to the whole span; none when nothing took time."""
    if not span:
        return (), ""
    ticks = tuple(Tick(fmt.duration(span * (quarter / 4)), f"tick-{quarter}") for quarter in range(5))
    label = "time since the first call started" if timed else "time, calls laid end to end"
    return ticks, label


def _tools_summary(calls: Sequence[ToolInvocation], span: float, timed: bool) -> str:
    ok = sum(1 for call in calls if call.success is True)
    failed = sum(1 for call in calls if call.success is False)
    summary = f"{fmt.plural(len(calls), 'call')}: {ok} ok, {failed} failed"
    if span and timed:
        summary += f", over {fmt.duration(span)} (bars placed by each call's recorded start time)"
    elif span:
        summary += f", {fmt.duration(span)} in all (no start times recorded: bars laid end to end)"
    return summary + "."


def _tools_note(count: int) -> str | None:
    if count <= MAX_TOOL_CALLS:
        return None
    return f"showing the first {MAX_TOOL_CALLS:,} of {count:,} calls; the raw trace has them all"
