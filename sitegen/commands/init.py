"""`sitegen init [DIR]`: write a starting suite into a repository (docs/ci.md, "From an empty repository"): one
example case and its trace, eval/sitegen.toml with every setting commented out, the baseline `sitegen baseline`
writes for them, a workflow that runs sitegen's action and one that posts its pull-request comment. The files come from the package (templates/starter/);
nothing is written when any of them exists already."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, NamedTuple, Optional

import typer

from sitegen.commands.console import command_console
from sitegen.commands.options import QuietOpt, VerboseOpt
from sitegen.defaults import DEFAULT_BASELINE_DIR, DEFAULT_CASES, DEFAULT_CONFIG_PATH, DEFAULT_FIXTURES, DISTRIBUTION
from sitegen.errors import UsageError

STARTER = "starter"  # the folder of templates/ the files come from
WORKFLOW = Path(".github/workflows/eval-site.yml")
# The second workflow: posts the comment the first one's pull-request runs upload (docs/ci.md, "The pull request's
# comment"); it names no sitegen ref, so it is written as it is.
COMMENT_WORKFLOW = Path(".github/workflows/eval-comment.yml")
EXAMPLE_TRACE = "payment-timeout.json"  # the example case's traceFixture
# What `uses:` names when the action's repository and commit are not known: GitHub cannot resolve it, so the workflow
# fails at its first job with this name in its message, until the user fills it in (the workflow's comment says how).
ACTION_PLACEHOLDER = "FILL-IN-SITEGEN-OWNER/FILL-IN-SITEGEN-REPO@FILL-IN-A-FULL-COMMIT-SHA"
PLACEHOLDER_NOTE = "sitegen's GitHub repository and the full commit SHA of a release of it: see the top of this file"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_ACTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+(/[A-Za-z0-9._/-]+)?@[A-Za-z0-9._/-]+$")
_GITHUB_URL = re.compile(r"^(?:git\+)?https://github\.com/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+?)(?:\.git)?/?$")


class ActionRef(NamedTuple):
    """What the workflow's `uses:` names (OWNER/REPO@REF), the comment after it (the release or revision a commit
    is), and where it came from, said on the terminal."""

    uses: str
    comment: str
    source: str

    @property
    def line(self) -> str:
        """The text after `uses: `."""
        if self.uses == ACTION_PLACEHOLDER:
            return f"{self.uses}  # {PLACEHOLDER_NOTE}"
        return f"{self.uses} # {self.comment}" if self.comment else self.uses


class StarterFile(NamedTuple):
    """One file `init` writes: where, what for (said to the user) and its bytes."""

    path: Path
    purpose: str
    data: bytes


def run(
    folder: Annotated[
        Path, typer.Argument(metavar="[DIR]", help="The repository to start the suite in. Default: the current folder.")
    ] = Path("."),
    action: Annotated[
        Optional[str],
        typer.Option(
            "--action",
            metavar="OWNER/REPO@REF",
            help="sitegen's action, as the workflow's `uses:` names it. Default: the commit this sitegen was installed "
            "from (a release's, or a pip install git+https://github.com/…'s), else a placeholder for you to fill in.",
        ),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> int:
    """Start a suite: one example case and its trace, eval/sitegen.toml, the baseline and a CI workflow.

    Writes eval/cases/diagnosis-cases.json, eval/fixtures/payment-timeout.json, eval/sitegen.toml (every setting
    commented out), eval/baseline/report.json and report.md (what sitegen baseline writes for them) and
    .github/workflows/eval-site.yml (sitegen's action on pull requests and pushes to main), so that sitegen build
    works right after. Writes nothing when any of these files exists (exit 2, naming each).

    Example: sitegen init --action someone/sitegen@0123456789abcdef0123456789abcdef01234567 && sitegen build
    """
    from sitegen.plumbing.files import write_files_atomic

    console = command_console()
    if action is not None and not _ACTION.match(action):
        raise UsageError(f"--action {action!r}: expected OWNER/REPO@REF, such as someone/sitegen@ followed by a full commit SHA")
    ref = ActionRef(action, "", "as --action names it") if action is not None else installed_action_ref()
    if action is not None and not _COMMIT.match(action.rpartition("@")[2]):
        console.warn(
            f"--action {action}: {action.rpartition('@')[2]!r} is a tag or branch, which can be moved to other code "
            "(zizmor flags it as unpinned): name the full commit SHA it points to, its tag in a comment"
        )
    files = starter_files(ref)
    refuse_to_overwrite(folder, [file.path for file in files])
    write_files_atomic([(folder / file.path, file.data) for file in files])
    width = max(len(str(file.path)) for file in files)
    console.say(f"a starting suite in {'this folder' if folder == Path('.') else f'{folder}/'}:")
    for file in files:
        console.say(f"  {str(file.path):<{width}}  {file.purpose}")
    console.say("next:")
    inside = "" if folder == Path(".") else f"cd {folder} && "
    console.say(f"  {inside}sitegen build   the example's site in site/: open site/index.html")
    if ref.uses == ACTION_PLACEHOLDER:
        console.say(
            f"  in {WORKFLOW}, replace {ACTION_PLACEHOLDER} (twice) with the GitHub repository sitegen comes from and "
            "the full commit SHA of a release of it (sitegen's docs/ci.md, \"What the workflow trusts\"): this sitegen "
            "cannot tell where it was installed from, and until then the workflow fails naming the placeholder"
        )
    else:
        console.say(f"  the workflow runs sitegen's action {ref.line} ({ref.source})")
    console.say("  add site/ to .gitignore, commit eval/ and .github/, and open a pull request")
    return 0


def starter_files(action: ActionRef) -> list[StarterFile]:
    """The starting suite's files, the baseline of its case included, with `action` in the workflow's `uses:`."""
    cases, trace, config = (_template(name) for name in ("cases.json", "trace.json", "sitegen.toml"))
    workflow = _template("workflow.yml").decode("utf-8")
    workflow = workflow.replace("uses: ACTION_REF\n", f"uses: {action.line}\n")
    report_json, report_md = _baseline(cases, trace, config)
    return [
        StarterFile(DEFAULT_CASES, "one example case: replace it with your agent's own", cases),
        StarterFile(DEFAULT_FIXTURES / EXAMPLE_TRACE, "the example's saved trace", trace),
        StarterFile(DEFAULT_CONFIG_PATH, "every setting, commented out with its default", config),
        StarterFile(DEFAULT_BASELINE_DIR / "report.json", "the baseline: the example's report, as sitegen baseline writes it", report_json),
        StarterFile(DEFAULT_BASELINE_DIR / "report.md", "the same, for people", report_md),
        StarterFile(WORKFLOW, "the CI workflow: sitegen's action on every pull request and push to main", workflow.encode("utf-8")),
        StarterFile(COMMENT_WORKFLOW, "posts each pull request's one comment, edited in place, without running its code",
                    _template("comment-workflow.yml")),
    ]


def refuse_to_overwrite(folder: Path, paths: list[Path]) -> None:
    """UsageError naming every one of `paths` (inside `folder`) that exists, or whose place a file takes."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} exists and is not a folder: give the folder to write the suite into")
    taken: list[str] = []
    for path in paths:
        target = folder / path
        if target.exists() or target.is_symlink():
            taken.append(str(path))
            continue
        # A file where one of its folders goes (eval, eval/cases, …) takes its place too.
        blocking = next((place for place in reversed(path.parents[:-1]) if (folder / place).exists() and not (folder / place).is_dir()), None)
        if blocking is not None:
            taken.append(f"{blocking} (not a folder)")
    if taken:
        unique = list(dict.fromkeys(taken))
        raise UsageError(
            f"{folder}: sitegen init writes no file that exists, and {len(unique)} do: {', '.join(unique)}; nothing "
            "was written (move them aside, or give another folder)"
        )


def installed_action_ref() -> ActionRef:
    """The action at what this sitegen was installed from, when it can tell: a pip install from a GitHub git URL
    (its commit, from the install's direct_url.json, PEP 610), else a release's distribution (the repository and
    commit the release workflow wrote into sitegen/provenance.py); else the placeholder."""
    from importlib.metadata import PackageNotFoundError, distribution

    from sitegen import __version__, provenance

    try:
        text = distribution(DISTRIBUTION).read_text("direct_url.json")
    except PackageNotFoundError:
        text = None
    found = action_ref_from_direct_url(text) if text else None
    if found is not None:
        return found
    released = f"{provenance.REPOSITORY}@{provenance.COMMIT}"
    if _ACTION.match(released) and _COMMIT.match(provenance.COMMIT):
        return ActionRef(released, f"v{__version__}", f"the commit of the release v{__version__} this sitegen is")
    return ActionRef(ACTION_PLACEHOLDER, "", "")


def action_ref_from_direct_url(text: str) -> ActionRef | None:
    """The action at the commit a pip install from a GitHub git URL installed, from its direct_url.json (PEP 610),
    the revision asked for (a tag, a branch) as its comment; None for any other install or text."""
    import json  # here, as every import of what a command runs: `sitegen --help` loads this module

    try:
        data = json.loads(text)
    except ValueError:
        return None
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or not isinstance(url, str):
        return None
    match = _GITHUB_URL.match(url)
    commit, asked = vcs.get("commit_id"), vcs.get("requested_revision")
    if match is None or not isinstance(commit, str) or not _COMMIT.match(commit):
        return None
    ref = f"{match[1]}/{match[2]}@{commit}"
    if not _ACTION.match(ref):
        return None
    comment = asked if isinstance(asked, str) and asked != commit and _ACTION.match(f"a/b@{asked}") else ""
    return ActionRef(ref, comment, f"the commit pip installed this sitegen from{f', asked for as {asked}' if comment else ''}")


def _template(name: str) -> bytes:
    from importlib import resources

    return (resources.files("sitegen.templates") / STARTER / name).read_bytes()


def _baseline(cases: bytes, trace: bytes, config: bytes) -> tuple[bytes, bytes]:
    """report.json and report.md of the starting suite, made by `sitegen baseline`'s own code from the files as
    they will be written (in a temporary folder, so that nothing is written before every file is ready)."""
    import tempfile

    from sitegen.evaluation.engine import evaluate_files
    from sitegen.report.report_text import baseline_texts

    with tempfile.TemporaryDirectory(prefix="sitegen-init-") as scratch:
        root = Path(scratch)
        for path, data in ((DEFAULT_CASES, cases), (DEFAULT_FIXTURES / EXAMPLE_TRACE, trace), (DEFAULT_CONFIG_PATH, config)):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        report = evaluate_files(root / DEFAULT_CASES, root / DEFAULT_FIXTURES, root / DEFAULT_CONFIG_PATH)
        report_json, report_md, _ = baseline_texts(report)
    return report_json.encode("utf-8"), report_md.encode("utf-8")
