"""Defaults, defined once: where the suite lives, what a build keeps, the limits of every option, and the fixed
choices an option or setting takes (enums carrying their own rules and words). Plain values and the standard
library only, so that a command's options (`--help`, `--version`) need nothing heavier; the suite's known values,
which a TOML file may override, are suite/config.py's (eval/README.md)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Self

# The distribution's name in the package registry (pyproject.toml), where `sitegen` is an unrelated project; the
# command and the import name are `sitegen` (docs/cli.md, "Installing sitegen").
DISTRIBUTION = "sitegen-eval"

# Where the commands look when no option names a file: in the suite's folder (suite/discovery.py).
DEFAULT_CASES = Path("eval/cases/diagnosis-cases.json")
DEFAULT_FIXTURES = Path("eval/fixtures")
DEFAULT_CONFIG_PATH = Path("eval/sitegen.toml")
DEFAULT_BASELINE_DIR = Path("eval/baseline")
DEFAULT_BASELINE = DEFAULT_BASELINE_DIR / "report.json"
DEFAULT_OUT = Path("site")


class Choice(StrEnum):
    """A fixed choice whose members carry their words and rules: `MEMBER = "value", carried, …`, the value being what
    JSON and the options spell, and each carried item the attribute the enum annotates in that place (`rule: str`).
    Every enum of this kind declares its attributes so, and this one constructor fills them."""

    def __new__(cls, value: str, *carried: Any) -> Self:
        names = list(cls.__dict__.get("__annotations__", {}))
        if len(carried) != len(names):
            expected = f"{len(names)} carried item(s) ({', '.join(names)})"
            raise TypeError(f"{cls.__name__}.{value}: expected {expected}, got {len(carried)}")
        member = str.__new__(cls, value)
        member._value_ = value
        for name, item in zip(names, carried):
            setattr(member, name, item)
        return member


class TrialPolicy(Choice):
    """When a case with several trials passes (docs/trials.md, "Choosing a policy"): every trial (pass^k), more
    than half, or at least one (pass@k); a suite that sets none takes the first."""

    # value        its rule in words (a trial case page states it)
    ALL = "all", "every trial must pass (pass^k)"
    MAJORITY = "majority", "more than half must pass"
    ANY = "any", "one must pass (pass@k)"

    rule: str

    def passes(self, passed: int, trials: int) -> bool:
        """Whether a case with `passed` of its `trials` trials passing passes by this policy."""
        if trials <= 0:
            return False
        if self is TrialPolicy.ALL:
            return passed == trials
        if self is TrialPolicy.MAJORITY:
            return 2 * passed > trials
        return passed >= 1


DEFAULT_TRIAL_POLICY = TrialPolicy.ALL

# The diff (eval/README.md, "Diff"): a paired cost average that moved by more than this relative tolerance
# is a cost regression or improvement (--cost-tolerance, [diff] costTolerance) ...
DEFAULT_COST_TOLERANCE = 0.10
# ... and a trial pass rate that moved with a one-sided Fisher p-value below this significance level counts
# ([diff] alpha, docs/trials.md).
DEFAULT_ALPHA = 0.05
# ... and a passing case whose two answers are less alike than this (compare/similarity.py) behaves differently
# ([diff] answerSimilarity, eval/README.md "Behaviour that changed").
DEFAULT_ANSWER_SIMILARITY = 0.9
# A tool call's input as a report records it (`toolCalls[].input`): its first characters, the rest digested ...
INPUT_CLIP = 500
# ... and as the first divergence of two tool trajectories names each side: `toolName(input)`, the input this short.
DIVERGENCE_INPUT_CLIP = 80

# `[otel]` of the config file (eval/README.md, "OpenTelemetry traces"): the `gen_ai.evaluation.name` of the
# evaluation event whose label is a trace's verdict.
DEFAULT_OTEL_VERIFIER_NAME = "verifier"

class CasePages(Choice):
    """Which cases get a page of their own (--case-pages, docs/big-suites.md "Very big suites"): every case; the
    failing ones and those whose pass/fail or behaviour changed against the baseline; or only those that changed (and, without
    a baseline, the failing ones). A case without a page is still a row of the index, linked to its raw trace."""

    # value          what to try next when a site built so nears GitHub Pages' limit (site/sitesize.py)
    ALL = "all", "`--case-pages failing` writes a page only for the cases that fail or changed against the baseline"
    FAILING = "failing", "`--case-pages changed` writes a page only for the cases that changed against the baseline"
    CHANGED = "changed", "publish it where there is no such limit, or split the suite"

    next_step: str

    def wants_page(self, failing: bool, changed: bool | None) -> bool:
        """Whether a case gets a page of its own: `failing` now, `changed` whether its change against the
        baseline is one this mode shows (compare/changes.py's ChangeKind.pages; None: built without a baseline)."""
        if self is CasePages.ALL:
            return True
        if self is CasePages.CHANGED and changed is not None:
            return changed
        return failing or bool(changed)

    def links_neighbours(self) -> bool:
        """Whether a case page links the previous and next case: only when every case has a page (which of them
        has one is known only once every case is evaluated)."""
        return self is CasePages.ALL


DEFAULT_CASE_PAGES = CasePages.ALL


class TrajectoryMatch(Choice):
    """How a case's expected tool calls must be found among the recorded ones (`expectedTrajectory.match`;
    eval/README.md, "Trajectory rules"): the modes of LangChain's agentevals and Google ADK, counted as multisets
    (a tool called twice is two calls). Each mode is three rules: whether order counts, whether every expected
    step must be found, whether a call outside the steps is refused."""

    # value          ordered complete exclusive  its rule in words (eval/README.md, the case page)
    STRICT = "strict", True, True, True, "the same calls in the same order, nothing else"
    UNORDERED = "unordered", False, True, True, "the same calls in any order, nothing else"
    IN_ORDER = "in_order", True, True, False, "these calls in this order, other calls between them allowed"
    SUPERSET = "superset", False, True, False, "at least these calls, in any order, other calls allowed"
    SUBSET = "subset", False, False, True, "no call outside these, some may be missing"

    ordered: bool  # the steps are found in their order
    complete: bool  # every step must be found
    exclusive: bool  # every call must be one of the steps
    rule: str


class ArgsMatch(Choice):
    """How a step's `args` are compared with a call's recorded input, both as JSON values (`argsMatch`;
    eval/README.md, "Trajectory rules"); `ignore` is the default of a step without `args`, `exact` of one with."""

    # value      shown after the expected args    its rule in words
    EXACT = "exact", "", "the input equals args"
    SUBSET = "subset", ", …", "every key of args is in the input with an equal value; other keys are ignored"
    IGNORE = "ignore", "", "the tool name alone"

    more: str  # what the expected call's args are followed by where a step is named: the input may hold more
    rule: str

    def holds(self, args: Any, recorded: Any) -> bool:
        """Whether a call whose recorded input is `recorded` (a JSON value, None when none) matches `args`."""
        if self is ArgsMatch.IGNORE:
            return True
        if self is ArgsMatch.EXACT:
            return json_equal(args, recorded)
        return isinstance(args, dict) and isinstance(recorded, dict) and all(
            key in recorded and json_equal(value, recorded[key]) for key, value in args.items()
        )


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values as JSON sees them: 1 equals 1.0, true is not 1, key order does not count."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(value, b[key]) for key, value in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
# GitHub Pages publishes a site of at most 1 GB (docs/big-suites.md, "where each option meets GitHub's limits"): a
# build warns once its site is this share of it.
PAGES_SITE_LIMIT = 1_000_000_000
SITE_SIZE_WARNING = 0.8

# Rows per static page of the site's case list (index.html, index-2.html, …; docs/big-suites.md) ...
INDEX_PAGE_ROWS = 500
# ... and per page of the index's table once its script pages it.
TABLE_PAGE_SIZE = 100
# Cases the one-line headline names per group (`… and 3 more`); the tables list them all.
HEADLINE_LISTED = 5
# A list of cases or diff items longer than this starts folded, in diff.md as on the diff page.
FOLD_AFTER = 10
# The diff page shows this many cases of each change kind in full (each rule with its message, what changed, the
# figures that moved, folded); each further case is one compact row (its link, its rules' codes, what changed), so
# a change that breaks hundreds of cases keeps the page light on a phone (docs/big-suites.md, "The diff page").
DIFF_CASES_IN_FULL = 25


class JunitKnownFailures(StrEnum):
    """`--junit-known-failures`: how JUnit reports a case that failed in the baseline too (docs/cli.md): skipped,
    so that only what the change broke is red, or as a failure."""

    SKIP = "skip"
    FAIL = "fail"

    def skips(self) -> bool:
        """Whether a known failure is a skipped test case."""
        return self is JunitKnownFailures.SKIP


DEFAULT_JUNIT_KNOWN_FAILURES = JunitKnownFailures.SKIP

# Worker processes (`--jobs`, default one per core) start for this many case pages or more (below it, starting
# them costs more than they save) ...
POOL_MIN_JOBS = 300
# ... and for this many pages of the case list or more, when they fork (spawned ones start too slowly).
LIST_POOL_MIN_PAGES = 4

# `sitegen serve` (and the stub agent) listen on the loopback interface only; the port when --port is not given.
LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8000
# `sitegen serve`: seconds a client has to send a request's line and headers, however slowly it drips them (and
# that a read or write may stall, or a kept-alive connection stay idle); the connections served at once (one
# more is answered 503 and closed: a client holding many cannot take a thread each).
PREVIEW_REQUEST_SECONDS = 10.0
PREVIEW_MAX_CONNECTIONS = 64
# `--history URL`: seconds the whole download may take, connecting and every byte included (a server that drips
# one byte at a time is cut off), at most MAX_RESPONSE_BYTES.
HISTORY_URL_TIMEOUT = 60.0

# `sitegen record` (docs/trials.md): its options' defaults and limits.
DEFAULT_TRIALS = 1
MAX_TRIALS = 999  # trial-NNN.json: three digits keep name order equal to trial order
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 64
DEFAULT_TIMEOUT = 120.0  # seconds for one request, the whole answer included
DEFAULT_RETRIES = 3
MAX_RETRIES = 20
DEFAULT_BACKOFF = 0.5  # seconds: the longest wait before the first retry; doubles with each retry
MAX_BACKOFF = 30.0
# `[record]` of the config file: the request sent for each trial (docs/trials.md, "Recording").
RECORD_METHODS = ("POST", "PUT", "PATCH")
DEFAULT_RECORD_METHOD = "POST"
DEFAULT_RECORD_BODY: dict[str, Any] = {"question": "{question}"}

# Runs the site's history keeps (--history-limit).
DEFAULT_HISTORY_LIMIT = 200
# The most any input file may be (the case file, a trace, a report, a history, the settings: plumbing/inputfiles.py;
# eval/README.md, "What each input may be"): far above any real one, far below what would exhaust memory.
MAX_INPUT_BYTES = 256 * 1024 * 1024
# The settings file (eval/sitegen.toml) is a few hundred bytes: at most this, its arrays and inline tables nested at
# most MAX_SETTINGS_DEPTH deep, a dotted key of at most as many parts (past that, tomllib's time grows as the
# square), its integers 64-bit as TOML says.
MAX_SETTINGS_BYTES = 1024 * 1024
MAX_SETTINGS_DEPTH = 64
# The most any answer over HTTP may be: an agent's answer to `sitegen record`, a history downloaded by a build.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
# A case is flaky when its pass/fail flipped at least FLAKY_FLIPS times in its last FLAKY_WINDOW runs.
FLAKY_WINDOW = 10
FLAKY_FLIPS = 2
# The sensitivity of the step detection in the pass rate (history/steps.py): each step must gain more binomial
# log-likelihood than STEP_PENALTY × ln(the case results of the CI points). Higher finds fewer, larger steps.
STEP_PENALTY = 1.5


# Negated keywords (eval/README.md, "Negated keywords"): the NegEx-style lists (Chapman et al., 2001) that
# `[answer]` of eval/sitegen.toml extends (extraTriggers, …) or replaces (triggers, …), and the windows. The lists
# and windows were chosen on the corpus of tests/negation_corpus.py (benchmarks/RESULTS.md, "Negated keywords").
# A trigger negates an expected keyword that follows it in its clause, within the window, unless a terminator
# comes between them; a pseudo-trigger looks like a trigger (contains one) and is not one.
NEGATION_TRIGGERS = (
    # Chinese: whole words, never a bare 不 or 非 (不足, 不稳定, 非预期 state a problem, they do not deny one).
    "并非", "不是", "没有", "并没有", "没", "未", "排除", "否认", "无", "并无", "并不", "不存在", "不属于", "不涉及",
    "不再", "不会", "而非",
    # English (Latin triggers match whole words; n't ends one).
    "not", "no", "never", "n't", "n’t", "without", "ruled out", "rule out", "rules out", "no longer", "none", "nor",
    "neither", "absence of", "free of", "denied", "excluded",
)  # fmt: skip
NEGATION_PSEUDO_TRIGGERS = (
    "无法", "无论", "无效", "无限", "无疑", "非常", "不断", "不仅", "不只", "不止", "未必", "未能", "未知", "没想到",
    "没法", "毫无疑问", "不得不", "不一定",
    "not only", "not just", "no doubt", "not necessarily", "without doubt", "no sooner", "can't", "can’t", "cannot",
    "couldn't", "couldn’t", "not sure",
)  # fmt: skip
NEGATION_TERMINATORS = (
    "但", "但是", "而是", "不过", "然而", "却", "只是", "导致", "造成", "引起", "引发", "因此", "所以", "因为",
    "but", "however", "although", "though", "instead", "yet", "except", "whereas", "rather", "because", "caused",
    "causing", "leading to", "led to", "therefore",
)  # fmt: skip
# How far a trigger reaches: Chinese and Japanese characters (each one unit, and each Latin word in mixed text) after
# a CJK trigger, words after a Latin one.
NEGATION_CJK_WINDOW = 12
NEGATION_LATIN_WINDOW = 6
