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
