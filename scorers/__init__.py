"""Inspect scorers and metrics of the cotaudit studies (installed as ``cotaudit.scorers``)."""

from .selfcommit import (
    condition_x_correctness,
    honest_vs_hinted,
    honest_vs_hinted_both_correct,
    selfcommit_scorer,
)

__all__ = [
    "condition_x_correctness",
    "honest_vs_hinted",
    "honest_vs_hinted_both_correct",
    "selfcommit_scorer",
]
