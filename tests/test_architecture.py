"""The import rules of docs/architecture.md ("The four parts"), read from the source: each part imports only what
its rule allows (function-local imports included), no sitegen module takes part in an import cycle, importing
the rules loads the evaluation core alone, and no test module imports another."""

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
CORE, COMPARE, SITE, RECORD, ENTRY = "core", "compare", "site", "record", "entry"
# What each part may import of sitegen; the entry point (the CLI) may import every part, inside its commands.
ALLOWED = {
    CORE: {CORE},
    COMPARE: {CORE, COMPARE},
    SITE: {CORE, COMPARE, SITE},
    RECORD: {CORE, RECORD},
    ENTRY: {CORE, COMPARE, SITE, RECORD, ENTRY},
}
# Libraries a part must never import: the comparison and the evaluation core run without the site's stack or the
# recorder's HTTP client (a `sitegen diff` in CI loads neither), the recorder without the site's.
FORBIDDEN_LIBRARIES = {
    CORE: {"jinja2", "markupsafe", "plotly", "markdown_it", "httpx", "watchfiles"},
    COMPARE: {"jinja2", "markupsafe", "plotly", "markdown_it", "httpx", "watchfiles"},
    RECORD: {"jinja2", "markupsafe", "plotly", "markdown_it"},
    SITE: {"httpx"},
    ENTRY: set(),
}


def module_name(path: Path) -> str:
    """`sitegen/site/views/case.py` → `sitegen.site.views.case` (a package by its __init__)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def part(module: str) -> str:
    """Which of the four parts a sitegen module belongs to (or the entry point)."""
    if module in ("sitegen.cli", "sitegen.__main__") or module.startswith("sitegen.cli."):
        return ENTRY
    for name in (COMPARE, SITE, RECORD):
        if module == f"sitegen.{name}" or module.startswith(f"sitegen.{name}."):
            return name
    return CORE


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, (ast.Name, ast.Attribute)) and ast.unparse(node.test).endswith(
        "TYPE_CHECKING"
    )


def imports(path: Path, top_level_only: bool = False) -> Iterator[tuple[str, int]]:
    """Every module `path` imports, with its line: `from a import b` names a.b when that is a module, else a.
    `top_level_only`: only what runs when the module is imported (not in functions, not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]

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


def test_the_parts_of_the_layout_are_what_the_rule_names() -> None:
    # Every module falls in one part; a new top-level folder would need a rule of its own.
    folders = {path.parent.relative_to(PACKAGE).parts[:1] for path in PACKAGE.rglob("*.py")}
    assert folders == {(), ("compare",), ("site",), ("record",), ("cli",)}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_part_imports_only_what_its_rule_allows(module: str) -> None:
    mine = part(module)
    problems = []
    for name, line in imports(MODULES[module]):
        top = name.split(".")[0]
        if top == "sitegen":
            if name in MODULES and part(name) not in ALLOWED[mine]:
                problems.append(f"line {line}: imports {name} ({part(name)}), which {mine} may not")
        elif top in FORBIDDEN_LIBRARIES[mine]:
            problems.append(f"line {line}: imports {name}, which {mine} must not")
    assert problems == [], f"{module} ({mine}): " + "; ".join(problems)


def test_the_cli_imports_the_other_parts_only_inside_its_commands() -> None:
    # `sitegen --version` and `sitegen check` start without loading the comparison, the site or the recorder.
    eager = [name for name, _ in imports(MODULES["sitegen.cli"], top_level_only=True) if part(name) in (COMPARE, SITE, RECORD)]
    assert eager == []


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


def test_no_import_cycle_among_sitegen_modules() -> None:
    graph = {
        module: {name for name, _ in imports(path, top_level_only=True) if name in MODULES and name != "sitegen"}
        for module, path in MODULES.items()
    }
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_importing_the_rules_loads_only_the_evaluation_core() -> None:
    script = (
        "import sys, sitegen.rules\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m == 'sitegen' or m.startswith('sitegen.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = done.stdout.split()
    assert "sitegen.rules" in loaded
    assert [module for module in loaded if part(module) != CORE] == []


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
def test_help_and_version_load_no_model_and_no_command(flag: str) -> None:
    # `sitegen --help` and `--version` read only the options' defaults (defaults.py): no pydantic model is built,
    # no input module, no part of a command, so they answer at once (benchmarks/RESULTS.md, "Seventh round").
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
    assert done.stderr.split() == ["sitegen", "sitegen.cli", "sitegen.cli.options", "sitegen.defaults", "sitegen.errors"]


def test_every_package_is_in_the_wheel() -> None:
    # pyproject.toml lists the packages by name: one left out installs without its modules (`pip install .`).
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {module_name(path) for path in PACKAGE.rglob("__init__.py") if path.parent.name != "templates"}
    assert packages - listed == set()
