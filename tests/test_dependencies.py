"""What sitegen imports is what it declares: a user's `pip install .` brings every module the code imports.

Every import in `sitegen/` (all its subpackages, found by walking the folder) is mapped to the distribution that
provides it in this environment (importlib.metadata.packages_distributions). A module imported unconditionally,
at the top of a file or inside a function, must come from `[project] dependencies`; one imported under
`try: … except ImportError` (an optional feature that says how to get it) may instead come from an optional
extra other than `test`. Each declared dependency must in turn be imported somewhere, and the lowest versions
that pyproject allows are pinned in constraints-lowest.txt, which .ci/run installs and smoke-tests. The tests and
benchmarks may also import what the `test` extra declares.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import sitegen
from helpers import ROOT

PACKAGE = Path(sitegen.__file__).parent
PYPROJECT = ROOT / "pyproject.toml"
CONSTRAINTS = ROOT / "constraints-lowest.txt"
# Extras a user installs for a feature; `test` is the developers' and never satisfies a runtime import.
DEVELOPMENT_EXTRAS = {"test"}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def canonical(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Import:
    """One import of a top-level module outside the standard library and sitegen itself."""

    module: str
    where: str
    guarded: bool


def _guards_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if any(isinstance(name, ast.Name) and name.id in _IMPORT_ERRORS for name in names):
            return True
    return False


def _found_spec(node: ast.Call) -> str | None:
    """The module of `importlib.util.find_spec("name")`: a dependency used for its files, not imported."""
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""
    if name == "find_spec" and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def imports_of(root: Path) -> list[Import]:
    """Every third-party import (and find_spec of a named module) in the .py files under `root`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

        def visit(node: ast.AST, guarded: bool) -> None:
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Call) and (spec := _found_spec(node)):
                modules = [spec]
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("__future__", "sitegen"):
                    found.append(Import(top, f"{path.relative_to(root.parent)}:{node.lineno}", guarded))
            if isinstance(node, ast.Try) and _guards_import_error(node):
                for child in node.body:
                    visit(child, True)
                for child in [*node.handlers, *node.orelse, *node.finalbody]:
                    visit(child, guarded)
                return
            for child in ast.iter_child_nodes(node):
                visit(child, guarded)

        visit(tree, False)
    return found


def declared(pyproject: Path) -> tuple[dict[str, Requirement], dict[str, dict[str, Requirement]]]:
    """pyproject's runtime dependencies and its extras, each keyed by canonical distribution name."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    runtime = {canonical(req.name): req for req in map(Requirement, project["dependencies"])}
    extras = {
        extra: {canonical(req.name): req for req in map(Requirement, requirements)}
        for extra, requirements in project.get("optional-dependencies", {}).items()
    }
    return runtime, extras


def undeclared(
    found: list[Import], pyproject: Path, providers: dict[str, list[str]], development: bool = False
) -> list[str]:
    """A line for each import that no declared distribution provides (where, what, and what would).

    `development`: the imports are the tests' or benchmarks', which may also use the `test` extra.
    """
    runtime, extras = declared(pyproject)
    optional = {name for extra, requirements in extras.items() if extra not in DEVELOPMENT_EXTRAS for name in requirements}
    tools = {name for extra in DEVELOPMENT_EXTRAS for name in extras.get(extra, {})} if development else set()
    problems = []
    for item in found:
        distributions = {canonical(name) for name in providers.get(item.module, [])}
        allowed = set(runtime) | tools | (optional if item.guarded else set())
        if not distributions:
            problems.append(f"{item.where}: imports {item.module}, which no installed distribution provides")
        elif not distributions & allowed:
            where = "[project] dependencies" + (" or the test extra" if development else "")
            where += " or a feature extra" if item.guarded else ""
            problems.append(f"{item.where}: imports {item.module} (from {', '.join(sorted(distributions))}), not in {where}")
    return problems


def unused(found: list[Import], pyproject: Path, providers: dict[str, list[str]]) -> list[str]:
    """The runtime dependencies no import of `found` is provided by."""
    runtime, _ = declared(pyproject)
    used = {canonical(name) for item in found for name in providers.get(item.module, [])}
    return sorted(set(runtime) - used)


def lowest_pins(pyproject: Path) -> dict[str, str]:
    """The version each `>=` bound allows at the lowest, for the runtime dependencies and the feature extras."""
    runtime, extras = declared(pyproject)
    pins = {}
    requirements = [*runtime.values()] + [
        req for extra, reqs in extras.items() if extra not in DEVELOPMENT_EXTRAS for req in reqs.values()
    ]
    for req in requirements:
        lower = [spec.version for spec in req.specifier if spec.operator == ">="]
        assert len(lower) == 1, f"{req}: every dependency needs exactly one >= lower bound (a tested one)"
        pins[canonical(req.name)] = lower[0]
    return pins


def read_constraints(path: Path) -> dict[str, str]:
    """`name==version` lines of a pip constraints file (comments and blank lines skipped)."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"{path.name}: {line!r} is not a pin"
            pins[canonical(req.name)] = spec.version
    return pins


@pytest.fixture(scope="module")
def providers() -> dict[str, list[str]]:
    return packages_distributions()


def test_every_runtime_import_is_declared(providers: dict[str, list[str]]) -> None:
    found = imports_of(PACKAGE)
    assert {item.module for item in found} >= {"typer", "pydantic"}  # the walk sees the package
    assert undeclared(found, PYPROJECT, providers) == []


def test_every_import_of_the_tests_and_benchmarks_is_declared(providers: dict[str, list[str]]) -> None:
    folders = (ROOT / "tests", ROOT / "benchmarks")
    # Their own modules (helpers.py, bench.py, …) are imported from these folders themselves.
    local = {path.stem for folder in folders for path in folder.rglob("*.py")}
    found = [item for folder in folders for item in imports_of(folder) if item.module not in local]
    assert {item.module for item in found} >= {"pytest", "hypothesis"}
    assert undeclared(found, PYPROJECT, providers, development=True) == []


def test_every_declared_dependency_is_used(providers: dict[str, list[str]]) -> None:
    assert unused(imports_of(PACKAGE), PYPROJECT, providers) == []


def test_the_check_finds_what_a_user_install_would_miss(tmp_path: Path, providers: dict[str, list[str]]) -> None:
    package = tmp_path / "pkg"
    (package / "inner" / "deeper").mkdir(parents=True)
    (package / "a.py").write_text("import os\nimport typer\n", encoding="utf-8")
    # A transitive dependency (pydantic_core comes with pydantic) imported directly, in a subpackage, lazily.
    (package / "inner" / "deeper" / "b.py").write_text("def f():\n    from pydantic_core import ErrorDetails\n",
                                                       encoding="utf-8")
    (package / "inner" / "c.py").write_text(
        "try:\n    import watchfiles\nexcept ImportError:\n    watchfiles = None\nimport pytest\n"
        "import importlib.util\nimportlib.util.find_spec('no_such_module_anywhere')\n",
        encoding="utf-8",
    )
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "pkg"\ndependencies = ["typer>=0.15.4", "jinja2>=3.1"]\n'
        '[project.optional-dependencies]\nwatch = ["watchfiles>=0.21"]\ntest = ["pytest>=8"]\n',
        encoding="utf-8",
    )
    problems = undeclared(imports_of(package), pyproject, providers)
    assert [problem.split(": ", 1)[0] for problem in problems] == ["pkg/inner/c.py:5", "pkg/inner/c.py:7", "pkg/inner/deeper/b.py:2"]
    assert "imports pytest (from pytest), not in [project] dependencies" in problems[0]  # the test extra does not count
    assert "no_such_module_anywhere, which no installed distribution provides" in problems[1]
    assert "imports pydantic_core (from pydantic-core)" in problems[2]
    assert unused(imports_of(package), pyproject, providers) == ["jinja2"]
    # Unguarded, watchfiles would need to be a runtime dependency too.
    (package / "inner" / "c.py").write_text("import watchfiles\n", encoding="utf-8")
    assert [problem.split(": ", 1)[0] for problem in undeclared(imports_of(package), pyproject, providers)] == [
        "pkg/inner/c.py:1", "pkg/inner/deeper/b.py:2",
    ]


def test_the_lowest_versions_file_agrees_with_pyproject() -> None:
    expected = lowest_pins(PYPROJECT)
    assert read_constraints(CONSTRAINTS) == expected, (
        f"{CONSTRAINTS.name} must pin each [project] dependency and feature extra at its >= bound: "
        + ", ".join(f"{name}=={version}" for name, version in sorted(expected.items()))
    )


def test_the_agreement_check_sees_a_changed_bound(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(PYPROJECT.read_text(encoding="utf-8").replace('"jinja2>=3.1"', '"jinja2>=3.1.2"'), encoding="utf-8")
    assert lowest_pins(pyproject) != read_constraints(CONSTRAINTS)
    assert lowest_pins(pyproject)["jinja2"] == "3.1.2"


def test_the_wheel_lists_every_package_of_sitegen() -> None:
    """pyproject names the packages a wheel carries: a subpackage missing there imports here and fails for a user."""
    listed = set(tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {
        ".".join(path.parent.relative_to(PACKAGE.parent).parts) for path in PACKAGE.rglob("__init__.py")
    }
    assert found and found <= listed, f"not in [tool.setuptools] packages: {sorted(found - listed)}"
