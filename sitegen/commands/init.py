"""`sitegen init [DIR]`: write a starting suite into a repository (docs/ci.md, "From an empty repository"): one
example case and its trace, eval/sitegen.toml with every setting commented out, the baseline `sitegen baseline`
writes for them, a workflow that runs sitegen's action and one that posts its pull-request comment. The files come from the package (templates/starter/);
nothing is written when any of them exists already."""

from __future__ import annotations

import json
import re
import tempfile
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from sitegen.commands.baseline import baseline_texts
from sitegen.commands.console import Console
from sitegen.defaults import DEFAULT_BASELINE_DIR, DEFAULT_CASES, DEFAULT_CONFIG_PATH, DEFAULT_FIXTURES, DISTRIBUTION
from sitegen.errors import UsageError
from sitegen.plumbing.files import write_files_atomic

STARTER = "starter"  # the folder of templates/ the files come from
WORKFLOW = Path(".github/workflows/eval-site.yml")
# The second workflow: posts the comment the first one's pull-request runs upload (docs/ci.md, "The pull request's
# comment"); it names no sitegen ref, so it is written as it is.
COMMENT_WORKFLOW = Path(".github/workflows/eval-comment.yml")
EXAMPLE_TRACE = "payment-timeout.json"  # the example case's traceFixture
# What `uses:` names when the action's repository is not known: the user fills it in (the workflow says how).
ACTION_PLACEHOLDER = "OWNER/REPO@v1"
_ACTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+(/[A-Za-z0-9._/-]+)?@[A-Za-z0-9._/-]+$")
_GITHUB_URL = re.compile(r"^(?:git\+)?https://github\.com/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+?)(?:\.git)?/?$")


class StarterFile(NamedTuple):
    """One file `init` writes: where, what for (said to the user) and its bytes."""

    path: Path
    purpose: str
    data: bytes


def run(folder: Path, action: str | None, console: Console) -> int:
    """Write the starting suite into `folder`, or nothing (UsageError naming each file already there)."""
    ref = action if action is not None else installed_action_ref() or ACTION_PLACEHOLDER
    if not _ACTION.match(ref):
        raise UsageError(f"--action {ref!r}: expected OWNER/REPO@REF, such as someone/sitegen@v1 or a full commit SHA")
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
    if ref == ACTION_PLACEHOLDER:
        console.say(
            f"  in {WORKFLOW}, replace {ACTION_PLACEHOLDER} (twice) with the GitHub repository sitegen comes from and a "
            "tag or commit of it (sitegen's docs/ci.md)"
        )
    console.say("  add site/ to .gitignore, commit eval/ and .github/, and open a pull request")
    return 0


def starter_files(action: str) -> list[StarterFile]:
    """The starting suite's files, the baseline of its case included, with `action` in the workflow's `uses:`."""
    cases, trace, config = (_template(name) for name in ("cases.json", "trace.json", "sitegen.toml"))
    workflow = _template("workflow.yml").decode("utf-8")
    note = "  # replace with sitegen's repository and tag: see the top of this file" if action == ACTION_PLACEHOLDER else ""
    workflow = workflow.replace("uses: ACTION_REF\n", f"uses: {action}{note}\n")
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


def installed_action_ref() -> str | None:
    """OWNER/REPO@REF of the GitHub repository this sitegen was installed from with pip (`git+https://github.com/…`),
    read from the install's direct_url.json; None when it was installed otherwise."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution(DISTRIBUTION).read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    return action_ref_from_direct_url(text) if text else None


def action_ref_from_direct_url(text: str) -> str | None:
    """The action's OWNER/REPO@REF from a direct_url.json (PEP 610) of a pip install from a GitHub git URL: the
    revision asked for, else the commit installed; None for any other install or text."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or not isinstance(url, str):
        return None
    match = _GITHUB_URL.match(url)
    revision = vcs.get("requested_revision") or vcs.get("commit_id")
    if match is None or not isinstance(revision, str):
        return None
    ref = f"{match[1]}/{match[2]}@{revision}"
    return ref if _ACTION.match(ref) else None


def _template(name: str) -> bytes:
    return (resources.files("sitegen.templates") / STARTER / name).read_bytes()


def _baseline(cases: bytes, trace: bytes, config: bytes) -> tuple[bytes, bytes]:
    """report.json and report.md of the starting suite, made by `sitegen baseline`'s own code from the files as
    they will be written (in a temporary folder, so that nothing is written before every file is ready)."""
    with tempfile.TemporaryDirectory(prefix="sitegen-init-") as scratch:
        root = Path(scratch)
        for path, data in ((DEFAULT_CASES, cases), (DEFAULT_FIXTURES / EXAMPLE_TRACE, trace), (DEFAULT_CONFIG_PATH, config)):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        report_json, report_md, _ = baseline_texts(root / DEFAULT_CASES, root / DEFAULT_FIXTURES, root / DEFAULT_CONFIG_PATH)
    return report_json.encode("utf-8"), report_md.encode("utf-8")
