"""Fixtures of the report tests: the tiny model's trace_tutor run with the full tables, read by
tests/report/test_report.py (beside its other runs) and tests/report/test_compact_runs.py
(against the compact set)."""

from __future__ import annotations

import pytest
from helpers import TRACE_TUTOR_TINY, run_eval


@pytest.fixture(scope="session")
def trace_tutor_tiny_all(tmp_path_factory):
    """trace_tutor on the tiny model with :data:`helpers.TRACE_TUTOR_TINY` and the full tables
    (``-T metrics=all``), its log alone in its folder (a test that reads a folder copies the
    log into its own)."""
    return run_eval(
        "tasks/trace_tutor.py",
        "hf-probe/tiny",
        tmp_path_factory.mktemp("trace_tutor_tiny_all"),
        task_args=dict(TRACE_TUTOR_TINY, metrics="all"),
    )
