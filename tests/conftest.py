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


@pytest.fixture(scope="session")
def vllm_server():
    """A real vLLM server (CPU build, ``.venv-vllm``) on 127.0.0.1 serving the embedded default
    model, started once (2-3 minutes) and stopped by its PID at the end of the session.

    Skips when ``.venv-vllm`` is missing (``bash scripts/install_vllm_cpu.sh`` makes it) unless
    ``COTAUDIT_REQUIRE_VLLM=1`` (CI), where a missing install fails instead.
    """
    import sys
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[1] / "scripts"
    sys.path.insert(0, str(scripts))
    import vllm_cpu_server

    if not (vllm_cpu_server.VENV / "bin" / "python").exists():
        if os.environ.get("COTAUDIT_REQUIRE_VLLM") == "1":
            pytest.fail(f"{vllm_cpu_server.VENV} missing: run bash scripts/install_vllm_cpu.sh")
        pytest.skip(f"no vLLM CPU build in {vllm_cpu_server.VENV} (bash scripts/install_vllm_cpu.sh)")
    server = vllm_cpu_server.start()
    try:
        yield server
    finally:
        server.stop()
