"""Compact run-level metrics: the few numbers each study shows first (definitions and key lists:
:mod:`cotaudit.studies.<study>.metrics`).

Each metric runs the study's full metric on the same scores and keeps the compact keys, so a
compact value is the full table's value under the same name. ``-T metrics=all`` attaches the
full metrics instead.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, metric

