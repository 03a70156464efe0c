"""Public names nothing calls: every public (no leading `_`) module-level function, class and constant of sitegen/
is referred to by sitegen's own code somewhere outside its own definition. A name only the tests use is dead code
kept alive by its tests; the tests should reach the behaviour through the name the program uses instead.

References are read from the source with `ast`: a name (`Name`), an attribute (`x.name`) or an imported name
(`from m import name`), anywhere in sitegen/ but inside the name's own definition and a package's re-export of it
(`from .module import name` in an `__init__.py` is not a use). Templates refer to view fields, not to module names,
so they count for nothing here.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from helpers import ROOT

PACKAGE = ROOT / "sitegen"

# Public for a reason other than sitegen's own code, as ("sitegen/path.py", "name") with a comment saying the
# reason (a name the templates, the benchmarks or an entry point need that no module refers to); keep it short.
# Empty today: the entry point `sitegen.cli:main` is also what `python -m sitegen` calls, the commands are
# registered by their decorator (so are the rules), and the templates see only view fields.
USED_FROM_OUTSIDE: set[tuple[str, str]] = set()


def _defined(tree: ast.Module) -> list[tuple[str, ast.stmt]]:
    """The public module-level names of a module, each with the statement that defines it."""
    found: list[tuple[str, ast.stmt]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.name, node))
        elif isinstance(node, ast.Assign):
            found += [(name.id, node) for target in node.targets for name in ast.walk(target) if isinstance(name, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.append((node.target.id, node))
    return [(name, node) for name, node in found if not name.startswith("_")]


def _decorator_name(decorator: ast.expr) -> str:
    """`command` for `@command`, `@app.command` and `@app.command()`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""


def _registered(node: ast.stmt) -> bool:
    """Whether a function is a command of the command line or a rule: registered by its decorator (with Typer, or
    evaluation/rules.py's `@rule`), which the source never calls by name."""
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        _decorator_name(decorator) in ("command", "callback", "rule") for decorator in node.decorator_list
    )


def _references(where: str, tree: ast.Module) -> list[tuple[str, int]]:
    """Every name the module refers to, with its line; a package's re-exports left out."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute):
            found.append((node.attr, node.lineno))
        elif isinstance(node, ast.ImportFrom) and not (where.endswith("__init__.py") and node in tree.body):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name.rpartition(".")[2], node.lineno) for alias in node.names]
    return found


def unused_public_names(sources: dict[str, str], excused: set[tuple[str, str]] = USED_FROM_OUTSIDE) -> list[str]:
    """`path: name` of every public module-level name of the modules (path → source) that none of them refers to."""
    trees = {where: ast.parse(source, where) for where, source in sources.items()}
    used: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for where, tree in trees.items():
        for name, line in _references(where, tree):
            used[name].append((where, line))
    unused = []
    for where, tree in trees.items():
        for name, node in _defined(tree):
            inside = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            elsewhere = [use for use in used[name] if not (use[0] == where and use[1] in inside)]
            if not elsewhere and not _registered(node) and (where, name) not in excused:
                unused.append(f"{where}: {name}")
    return unused


def _sitegen_sources() -> dict[str, str]:
    return {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_public_name_is_used_by_sitegen() -> None:
    assert unused_public_names(_sitegen_sources()) == []


def test_the_finder_finds_what_only_tests_would_call() -> None:
    sources = {
        "pkg/__init__.py": "from pkg.a import reexported, used\n",
        "pkg/a.py": (
            "LIMIT = 3\n_PRIVATE = 1\n"
            "def used():\n    return LIMIT\n"
            "def recursive(n):\n    return recursive(n - 1)\n"
            "def reexported():\n    pass\n"
            "class Alone:\n    pass\n"
            "@app.command()\ndef command_line():\n    pass\n"
        ),
        "pkg/b.py": "from pkg import used\nused()\n",
    }
    assert unused_public_names(sources, set()) == ["pkg/a.py: recursive", "pkg/a.py: reexported", "pkg/a.py: Alone"]
    assert unused_public_names(sources, {("pkg/a.py", "Alone")}) == ["pkg/a.py: recursive", "pkg/a.py: reexported"]
