"""The import graph of cotaudit, read with ``ast`` from the source tree (nothing is imported).

Nodes are the modules of the installed packages (``[tool.setuptools] package-dir`` of
pyproject.toml: ``cotaudit`` from src/cotaudit, ``cotaudit.scorers`` from scorers/, ...). An
edge ``a -> b`` is any import of ``b`` in ``a``: at module level or inside a function (a lazy
import is still a dependency), and a string constant naming a cotaudit module (the report's
``importlib`` registry of study sections). ``from pkg import name`` points at ``pkg.name`` when
that is a module, else at ``pkg``.

The direction the rules enforce::

    pure library (src/cotaudit: no Inspect)  <-  scorers, solvers (Inspect glue)  <-  tasks
             ^                                        |
             +------ logs (reads logs) <--------------+   (headline, cluster contrast)
                        ^
                        +------ report
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

GLUE = ("cotaudit.scorers", "cotaudit.solvers", "cotaudit.tasks")
"""Inspect glue: may import the library, never imported by it."""
NOT_PURE = (
    "cotaudit._registry",  # Inspect's entry point: providers and tasks
    "cotaudit.cli",
    "cotaudit.report.ledger",  # ``cotaudit ledger LOG`` reads an Inspect log
    "cotaudit.engine",
    "cotaudit.logs.files",  # opens log files with ``read_eval_log``
    "cotaudit.logs.frames",  # reads the samples through Inspect's data frames
    "cotaudit.prerequisite",  # bad input as Inspect's PrerequisiteError
    "cotaudit.providers",
    "cotaudit.report",
    "cotaudit.validation.monitor",  # the LLM monitor asks any Inspect model
    *GLUE,
)
"""Modules (with their submodules) allowed to depend on Inspect; every other module under
src/cotaudit is the pure library, but for the package's ``__init__`` (``cotaudit.probe`` imports
tasks/probe.py on first use)."""
CLUSTER_MAY_IMPORT = ("cotaudit.cluster", "cotaudit.bootstrap", "cotaudit.stats", "cotaudit.scores")
"""The generic cluster package knows no study: it reaches only these modules."""


@cache
def modules() -> dict[str, Path]:
    """Every module of the packages pyproject.toml installs, by dotted name."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    out: dict[str, Path] = {}
    for package, folder in setup["package-dir"].items():
        if not package:
            continue
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def _known(name: str) -> str | None:
    """The longest cotaudit module that ``name`` is or lies in."""
    mods = modules()
    while name not in mods and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in mods else None


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([base] if base else [])])
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base for a in node.names]


@cache
def imports() -> dict[str, frozenset[str]]:
    """Per module: the cotaudit modules it imports, and ``"inspect_ai"`` if it imports Inspect."""
    mods = modules()
    out: dict[str, frozenset[str]] = {}
    for module, path in mods.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = _targets(module, path, node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value] if node.value.startswith("cotaudit.") else []
                names = [n for n in names if n in mods]
            for name in names:
                if name == "inspect_ai" or name.startswith("inspect_ai."):
                    found.add("inspect_ai")
                elif (target := _known(name)) is not None and target != module:
                    found.add(target)
        out[module] = frozenset(found)
    return out


def _in(module: str, packages: Iterable[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _reachable(start: str) -> set[str]:
    """Everything ``start`` imports, directly or through other cotaudit modules."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in imports().get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _unit(module: str) -> str:
    """A module's package: ``cotaudit.<sub>`` for a module inside a subpackage (report, engine,
    scorers, ...), the module itself for a top-level module of src/cotaudit."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and modules()[module].name == "__init__.py"):
        return ".".join(parts[:2])
    return module


def test_the_graph_is_read() -> None:
    """Guards the rules below against passing on an empty graph."""
    graph = imports()
    assert "cotaudit.report.cluster" in graph and "cotaudit.scorers.cluster_contrast" in graph
    assert "cotaudit.cluster.f1" in graph["cotaudit.report.cluster"]
    assert "inspect_ai" in graph["cotaudit.scorers.cluster_f1"]
    # the report finds its sections by name at run time; its log reading is a function-level import
    assert "cotaudit.logs.files" in graph["cotaudit.report"]
    # a function-level import counts
    assert "cotaudit.tasks.probe" in graph["cotaudit"]


def test_no_import_cycle_between_modules() -> None:
    edges = {m: {t for t in ts if t != "inspect_ai"} for m, ts in imports().items()}
    assert _cycles(edges) == []


def test_no_import_cycle_between_packages() -> None:
    """Collapsing each subpackage to one node, no loop: a loop here is an arrow running back up
    (e.g. the report importing scorers while a scorer imports the report)."""
    edges: dict[str, set[str]] = {}
    for module, targets in imports().items():
        for target in targets - {"inspect_ai"}:
            if _unit(module) == _unit(target):
                continue
            edges.setdefault(_unit(module), set()).add(_unit(target))
    assert _cycles(edges) == []


@pytest.mark.parametrize(
    "module", sorted(m for m in modules() if m != "cotaudit" and not _in(m, NOT_PURE)), ids=str
)
def test_pure_library_reaches_no_inspect_and_no_glue(module: str) -> None:
    """What a pure module imports, directly or through other modules (lazy imports included),
    is free of Inspect and of the Inspect glue."""
    reached = _reachable(module)
    assert "inspect_ai" not in reached
    assert not [m for m in reached if _in(m, GLUE)]


def test_report_does_not_import_the_glue() -> None:
    """The report recomputes from the library (records, key sets, statistics), never from a
    scorer or solver module."""
    bad = {
        (m, t)
        for m, targets in imports().items()
        if _in(m, ["cotaudit.report"])
        for t in targets
        if _in(t, GLUE)
    }
    assert bad == set()


def test_scorers_read_logs_below_the_report() -> None:
    """A scorer that rereads a log (the headline, the cluster contrast) reads it through
    :mod:`cotaudit.logs`, which the report uses too; no scorer imports the report."""
    bad = {
        (m, t)
        for m, targets in imports().items()
        if _in(m, ["cotaudit.scorers"])
        for t in targets
        if _in(t, ["cotaudit.report"])
    }
    assert bad == set()
    assert "cotaudit.logs.read" in imports()["cotaudit.scorers.cluster_contrast"]


def test_cluster_knows_no_study() -> None:
    cluster = [m for m in modules() if _in(m, ["cotaudit.cluster"])]
    assert cluster
    for module in cluster:
        outside = {m for m in _reachable(module) if not _in(m, CLUSTER_MAY_IMPORT)}
        assert outside == set(), module
