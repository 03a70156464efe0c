"""The import rules of docs/architecture.md ("The stages"), read from the source: each folder imports only its own
modules and the folders below it (function-local and type-only imports included), no sitegen module takes part in
an import cycle (function-local and type-only imports included too), no two modules share a name, importing the rules loads the stages below the comparison alone, and
no test module imports another."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import ROOT

PACKAGE = ROOT / "sitegen"
TESTS = ROOT / "tests"
# The folders of sitegen/, from the bottom up: a module imports modules of its own folder and of the folders in
# lower layers, never of a folder beside it or above it. `sitegen` is the shared vocabulary at the package's root.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("sitegen",),
    ("sitegen.plumbing",),
    ("sitegen.suite",),
    ("sitegen.report",),
    ("sitegen.evaluation",),
    ("sitegen.compare", "sitegen.history", "sitegen.recording"),
    ("sitegen.site.html",),
    ("sitegen.site.pages",),
    ("sitegen.site",),
    ("sitegen.site.preview",),
    ("sitegen.commands",),
    ("sitegen.cli",),
)
FOLDERS = sorted((folder for layer in LAYERS for folder in layer), key=len, reverse=True)
LAYER_OF = {folder: number for number, layer in enumerate(LAYERS) for folder in layer}
# Libraries a folder must never import: everything below the site runs without the site's stack or the recorder's
# HTTP client (a `sitegen diff` in CI loads neither), the recorder without the site's, the site without httpx.
_SITE_STACK = {"jinja2", "markupsafe", "plotly", "markdown_it"}
FORBIDDEN_LIBRARIES = {
    **{folder: _SITE_STACK | {"httpx", "watchfiles"} for folder in (
        "sitegen", "sitegen.plumbing", "sitegen.suite", "sitegen.report", "sitegen.evaluation", "sitegen.compare",
        "sitegen.history",
    )},
    "sitegen.recording": _SITE_STACK | {"watchfiles"},
    **{folder: {"httpx"} for folder in ("sitegen.site.html", "sitegen.site.pages", "sitegen.site", "sitegen.site.preview")},
    "sitegen.commands": set(),
    "sitegen.cli": set(),
}


def module_name(path: Path) -> str:
    """`sitegen/site/pages/case_page.py` → `sitegen.site.pages.case_page` (a package by its __init__)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def folder(module: str) -> str:
    """The folder of LAYERS a sitegen module is in (`sitegen.__main__` counts as the command line)."""
    if module == "sitegen.__main__":
        return "sitegen.cli"
    return next(name for name in FOLDERS if module == name or module.startswith(name + "."))


def may_import(importer: str, imported: str) -> bool:
    """Whether a module of folder `importer` may import one of folder `imported`."""
    return importer == imported or LAYER_OF[imported] < LAYER_OF[importer]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, (ast.Name, ast.Attribute)) and ast.unparse(node.test).endswith(
        "TYPE_CHECKING"
    )


def imports(path: Path, top_level_only: bool = False) -> Iterator[tuple[str, int]]:
    """Every module `path` imports, with its line: `from a import b` names a.b when that is a module, else a.
    `top_level_only`: only what runs when the module is imported (not in functions, not under TYPE_CHECKING)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package, top_level_only)


def imports_in(source: str, package: str, top_level_only: bool = False) -> Iterator[tuple[str, int]]:
    """Every module a module of `package` with this source imports, with its line (see `imports`)."""
    tree = ast.parse(source)

    def visit(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            if top_level_only and (isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or _is_type_checking(child)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            yield from visit(child)

    for node in visit(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            full = f"{base}.{alias.name}"
            yield (full if full in MODULES else base), node.lineno


def test_every_folder_of_the_package_has_its_place_in_the_layers() -> None:
    # A new folder needs a place in LAYERS; a folder of LAYERS that is gone is a stale rule.
    folders = {module_name(path) for path in PACKAGE.rglob("__init__.py")}
    assert folders == set(FOLDERS)


def test_no_two_modules_share_a_name() -> None:
    # A reader finds a module by its name: `diff.py` in two folders is two places to look.
    names: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        if path.name != "__init__.py":
            names.setdefault(path.stem, []).append(module)
    for package in (module_name(path) for path in PACKAGE.rglob("__init__.py")):
        names.setdefault(package.rpartition(".")[2], []).append(package)
    assert {name: found for name, found in names.items() if len(found) > 1} == {}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_folder_imports_only_itself_and_the_folders_below(module: str) -> None:
    mine = folder(module)
    problems = []
    for name, line in imports(MODULES[module]):
        top = name.split(".")[0]
        if top == "sitegen":
            if name in MODULES and name != "sitegen" and not may_import(mine, folder(name)):
                problems.append(f"line {line}: imports {name} ({folder(name)}), which {mine} may not")
        elif top in FORBIDDEN_LIBRARIES[mine]:
            problems.append(f"line {line}: imports {name}, which {mine} must not")
    assert problems == [], f"{module} ({mine}): " + "; ".join(problems)


def test_the_cli_imports_only_the_commands_and_each_command_loads_its_stages_only_when_it_runs() -> None:
    # The CLI registers each command's `run`, which declares its options: below the commands it reads only the root
    # vocabulary (defaults, errors). A command's module, loaded by every `sitegen` start, imports at its top only
    # that vocabulary and the commands' options and console; what it runs (the stages, the site, the recorder) is
    # imported inside `run`, so `sitegen --version` and `sitegen check` load no site and no recorder.
    cli = [module for module in MODULES if folder(module) == "sitegen.cli"]
    reached = {name for module in cli for name, _ in imports(MODULES[module]) if name in MODULES}
    assert {name for name in reached if folder(name) not in ("sitegen", "sitegen.cli", "sitegen.commands")} == set()
    commands = [module for module in MODULES if folder(module) == "sitegen.commands"]
    eager = sorted(
        f"{module} imports {name} (line {line})"
        for module in commands for name, line in imports(MODULES[module], top_level_only=True)
        if (name in MODULES and folder(name) not in ("sitegen", "sitegen.commands"))
        or name.split(".")[0] in ("pydantic", "jinja2", "plotly", "markdown_it", "httpx", "watchfiles")
    )
    assert eager == [], "; ".join(eager)


def test_no_command_imports_another_command() -> None:
    # A command's module is what it prints and writes; work two commands share (evaluating a suite, the diff's
    # lines, JUnit, the baseline's files) lives in the stage it belongs to, so following one command never passes
    # through another. commands/console.py is the commands' own printer and commands/options.py the options several
    # commands take, neither a command.
    commands = [module for module in MODULES if folder(module) == "sitegen.commands"]
    shared = {"sitegen.commands.console", "sitegen.commands.options", "sitegen.commands"}
    crossings = sorted(
        f"{module} imports {name} (line {line})"
        for module in commands for name, line in imports(MODULES[module])
        if name in MODULES and folder(name) == "sitegen.commands" and name not in shared and name != module
    )
    assert crossings == [], "; ".join(crossings)

def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each sitegen module → the sitegen modules it imports, every import counted: one inside a function or under
    `if TYPE_CHECKING:` still says the importer depends on the imported, so it may not close a circle either."""
    return {
        module: {name for name, _ in imports(path) if name in MODULES and name != "sitegen"}
        for module, path in MODULES.items()
    }


def test_no_import_cycle_among_sitegen_modules() -> None:
    assert _cycles(import_graph()) == []


def test_the_cycle_test_counts_type_only_and_function_local_imports() -> None:
    # A circle closed by a type-only import is still a circle (the comparison once hid one that way).
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from sitegen.compare.wording import item_message\n"
        "def f():\n    from . import terminal\n"
    )
    assert [name for name, _ in imports_in(source, "sitegen.compare")] == [
        "typing", "sitegen.compare.wording", "sitegen.compare.terminal"
    ]
    assert [name for name, _ in imports_in(source, "sitegen.compare", top_level_only=True)] == ["typing"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_importing_the_rules_loads_no_stage_above_the_evaluation() -> None:
    script = (
        "import sys, sitegen.evaluation.rules\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m == 'sitegen' or m.startswith('sitegen.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = done.stdout.split()
    assert "sitegen.evaluation.rules" in loaded
    assert [module for module in loaded if module != "sitegen" and LAYER_OF[folder(module)] > LAYER_OF["sitegen.evaluation"]] == []


def test_no_test_module_imports_another() -> None:
    test_modules = {path.stem for path in TESTS.glob("test_*.py")} | {"conftest"}
    problems = [
        f"{path.name}:{line} imports {name}"
        for path in sorted(TESTS.glob("*.py"))
        for name, line in imports(path)
        if name.split(".")[0] in test_modules
    ]
    assert problems == []


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_load_no_model_and_no_stage(flag: str) -> None:
    # `sitegen --help` and `--version` read only the options' defaults (defaults.py) and the commands' declarations:
    # no pydantic model is built, no input module or stage is loaded, so they answer at once (benchmarks/RESULTS.md,
    # "The options' defaults without a model").
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\n'.join(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('sitegen', 'pydantic', 'jinja2')))))\n"
        "from sitegen.cli import main\n"
        f"sys.argv = ['sitegen', {flag!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0
    assert "sitegen" in done.stdout
    commands = sorted(module for module in MODULES if folder(module) == "sitegen.commands")
    assert done.stderr.split() == sorted(
        {"sitegen", "sitegen.cli", *commands, "sitegen.defaults", "sitegen.errors", "sitegen.formatting"}
    )


def test_every_package_is_in_the_wheel() -> None:
    # pyproject.toml lists the packages by name: one left out installs without its modules (`pip install .`).
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {module_name(path) for path in PACKAGE.rglob("__init__.py") if path.parent.name != "templates"}
    assert packages - listed == set()
