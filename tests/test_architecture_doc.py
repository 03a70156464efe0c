"""docs/architecture.md held to the code, so that it cannot drift: every module it names exists, every module of
sitegen/ is listed once under its folder, the stages are every folder in an order the imports keep, each stage's
libraries are the ones its modules import, and the build's steps and stages are site/pipeline.py's."""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from helpers import ROOT

DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "sitegen"
PIPELINE = PACKAGE / "site" / "pipeline.py"
WHERE = "docs/architecture.md"
# A module path as the doc writes one: `site/pipeline.py` (under sitegen/), `tests/test_rules.py`, or `checks.py`.
_PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.py)\b")


def section(title: str) -> str:
    """The text of the doc's `## title` section, up to the next `## ` heading."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert found is not None, f"{WHERE} has no section `## {title}`: the tests read it (tests/test_architecture_doc.py)"
    return found.group(1)


def folder_path(name: str) -> Path:
    """A folder as the doc writes it (`sitegen/`, `site/html/`) → its path."""
    return PACKAGE if name == "sitegen/" else PACKAGE / name


def folder_name(path: Path) -> str:
    """A package folder → how the doc writes it."""
    return "sitegen/" if path == PACKAGE else f"{path.relative_to(PACKAGE).as_posix()}/"


def package_folders() -> list[Path]:
    """Every folder of sitegen/ that is a package."""
    return sorted(init.parent for init in PACKAGE.rglob("__init__.py"))


def needs_a_line(path: Path) -> bool:
    """Whether the doc must list the module: every module, and an `__init__.py` that holds more than its docstring."""
    if path.name != "__init__.py":
        return True
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) for node in body)


def listed_modules() -> list[tuple[str, str]]:
    """(folder, module file name) for each line `- `name.py` — …` under a heading `### `folder/``."""
    listed, folder = [], None
    for line in section("The modules").splitlines():
        if heading := re.match(r"^### `([\w/]+/)`", line):
            folder = heading.group(1)
        elif item := re.match(r"^- `([\w]+\.py)`", line):
            assert folder is not None, f"{WHERE}, The modules: `{item.group(1)}` is listed before any `### `folder/`` heading"
            listed.append((folder, item.group(1)))
    return listed


def stage_rows() -> list[tuple[str, list[str]]]:
    """(folder, the libraries of its imports column) for each row of the stages' table, from the bottom up."""
    rows = []
    for line in section("The stages").splitlines():
        if row := re.match(r"^\| `([\w/]+/)` \|", line):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            named = [name.strip(" `") for name in cells[-1].split(",")]
            rows.append((row.group(1), [name for name in named if name not in ("", "—")]))
    return rows


def distribution(import_name: str) -> str:
    """The normalised name of the distribution a top-level import comes from (`markdown_it` → `markdown-it-py`)."""
    found = _distributions().get(import_name, [import_name])
    return normalised(found[0])


@cache
def _distributions() -> dict[str, list[str]]:
    return dict(packages_distributions())


def normalised(name: str) -> str:
    """A distribution's name as the package registry compares them (`Jinja2`, `pydantic_core` → `pydantic-core`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def imported(path: Path) -> list[str]:
    """Every module `path` imports (in functions and under TYPE_CHECKING too), as written; sitegen uses no relative
    import, and `from a import b` names a.b when that is a module or package of sitegen."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                inside = PACKAGE.parent.joinpath(*full.split("."))
                names.append(full if inside.with_suffix(".py").is_file() or inside.is_dir() else node.module)
    return names


def module_folder(module: str) -> Path:
    """The package folder a sitegen module (or package) is in."""
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path if path.is_dir() else path.parent


def test_every_module_the_doc_names_exists() -> None:
    stems = {path.name for path in PACKAGE.rglob("*.py") if path.name not in ("__init__.py", "__main__.py")}
    problems = [
        f"`{folder}{name}` (under `### `{folder}``)" for folder, name in listed_modules()
        if not (folder_path(folder) / name).is_file()
    ]
    prose = DOC.read_text(encoding="utf-8").replace(section("The modules"), "")
    for name in dict.fromkeys(_PATH.findall(prose)):
        exists = (PACKAGE / name).is_file() or (ROOT / name).is_file() if "/" in name else name in stems
        if not exists:
            problems.append(f"`{name}`")
    assert problems == [], (
        f"{WHERE} names modules that do not exist: {', '.join(problems)}. Write each as its path now (under sitegen/, "
        "e.g. `site/pipeline.py`; a module's bare name only when it is unique), or take it out."
    )


def test_every_module_of_the_package_is_listed_once_under_its_folder() -> None:
    listed = listed_modules()
    seen = [(folder_path(folder) / name) for folder, name in listed]
    twice = sorted({f"{path.relative_to(ROOT)}" for path in seen if seen.count(path) > 1})
    assert twice == [], f"{WHERE}, The modules: listed more than once: {', '.join(twice)}. Keep one line for each."
    missing = [
        f"- `{path.name}` — … under `### `{folder_name(path.parent)}``"
        for path in sorted(PACKAGE.rglob("*.py")) if needs_a_line(path) and path not in seen
    ]
    assert missing == [], (
        f"{WHERE}, The modules: not listed. Add, in one short line saying what a reader finds there: "
        + "; ".join(missing)
    )


def test_the_stages_are_every_folder_in_an_order_the_imports_keep() -> None:
    rows = [folder for folder, _ in stage_rows()]
    folders = [folder_name(path) for path in package_folders()]
    assert sorted(rows) == sorted(folders), (
        f"{WHERE}, The stages: the table's folders {rows} are not the package's {sorted(folders)}: give each package "
        "folder a row (`| `folder/` | the question it answers | its libraries |`), in its place from the bottom up."
    )
    place = {folder_path(folder): number for number, folder in enumerate(rows)}
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        mine = PACKAGE / "cli" if path == PACKAGE / "__main__.py" else path.parent  # `python -m sitegen` is the CLI's
        for name in imported(path):
            if name.split(".")[0] != "sitegen" or name == "sitegen":
                continue
            theirs = module_folder(name)
            if theirs != mine and place[theirs] > place[mine]:
                problems.append(
                    f"{path.relative_to(PACKAGE)} imports {name}: `{folder_name(theirs)}` is listed after "
                    f"`{folder_name(mine)}`"
                )
    assert problems == [], (
        f"{WHERE}, The stages: a folder may import only itself and the folders listed before it. "
        + "; ".join(sorted(set(problems)))
        + ". Order the rows as tests/test_architecture.py's LAYERS orders the folders, from the bottom up."
    )


def test_each_stage_lists_the_libraries_its_modules_import() -> None:
    std = sys.stdlib_module_names | {"__future__"}
    problems = []
    for folder, named in stage_rows():
        found: dict[str, set[str]] = {}
        for path in sorted(folder_path(folder).glob("*.py")):
            for name in imported(path):
                top = name.split(".")[0]
                if top not in std and top != "sitegen":
                    found.setdefault(distribution(top), set()).add(path.name)
        said = {normalised(name) for name in named}
        if said != set(found):
            where = "; ".join(f"{library} in {', '.join(sorted(found[library]))}" for library in sorted(found))
            problems.append(
                f"`{folder}` says {', '.join(sorted(said)) or '—'} but its modules import "
                f"{where or 'no library'}: write `{', '.join(sorted(found)) or '—'}` in its imports column"
            )
    assert problems == [], f"{WHERE}, The stages: " + " | ".join(problems)


def test_the_build_is_told_as_build_site_runs_it() -> None:
    source = PIPELINE.read_text(encoding="utf-8")
    steps = re.findall(r"^# Step (\d+): (.+)$", source, re.MULTILINE)
    told = section("The build")
    doc_steps = re.findall(r"^(\d+)\. \*\*(.+?)\*\*", told, re.MULTILINE)
    assert [(n, title.lower()) for n, title in doc_steps] == [(n, title.lower()) for n, title in steps], (
        f"{WHERE}, The build: number and name the steps as site/pipeline.py's `# Step N:` comments do: "
        + "; ".join(f"{n}. **{title[0].upper() + title[1:]}**" for n, title in steps)
    )
    build = next(
        node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name == "build_site"
    )
    calls = sorted(
        (node.lineno, node.col_offset, node.args[0].value) for node in ast.walk(build)
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "progress.step"
        and node.args and isinstance(node.args[0], ast.Constant)
    )
    stages = [stage for _, _, stage in calls]
    doc_stages = [name for named in re.findall(r"\(stages? ([^)]*)\)", told) for name in re.findall(r"`([^`]+)`", named)]
    assert doc_stages == stages, (
        f"{WHERE}, The build: name the stages as build_site reports them (`progress.step`), in its order, each in "
        f"its step's `(stage …)` / `(stages …)`: {', '.join(f'`{stage}`' for stage in stages)}"
    )


def test_the_tests_readme_names_every_test_module_once() -> None:
    readme = ROOT / "tests" / "README.md"
    rows = [line for line in readme.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    named = [name for row in rows for name in re.findall(r"`([\w.]+\.py)`", row.split(" | ")[0])]
    modules = sorted(path.name for path in (ROOT / "tests").glob("*.py") if path.name != "conftest.py")
    missing = [name for name in modules if name not in named]
    twice = sorted({name for name in named if named.count(name) > 1})
    gone = sorted({name for name in named if name not in modules})
    assert (missing, twice, gone) == ([], [], []), (
        f"tests/README.md's table must name each module of tests/ once: missing {missing} (add a row saying what it "
        f"proves), named twice {twice} (merge the rows), naming modules that do not exist {gone} (take them out)"
    )
