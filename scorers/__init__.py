"""Inspect scorers and metrics of the cotaudit studies (installed as ``cotaudit.scorers``)."""

from .cluster_f1 import (
    cluster_contrast_from_scores,
    cluster_f1_from_scores,
    contrastive_cluster_f1,
)
from .selfcommit import (
    condition_x_correctness,
    honest_vs_hinted,
    honest_vs_hinted_both_correct,
    selfcommit_scorer,
)

__all__ = [
    "cluster_contrast_from_scores",
    "cluster_f1_from_scores",
    "contrastive_cluster_f1",
    "condition_x_correctness",
    "honest_vs_hinted",
    "honest_vs_hinted_both_correct",
    "selfcommit_scorer",
]

from .trace_tutor import (
    records_from_log,
    trace_anchoring,
    trace_delta_context,
    trace_table_ii,
    trace_table_iii,
    trace_table_iv,
    trace_table_v,
    trace_tutor_scorer,
)

__all__ += [
    "records_from_log",
    "trace_anchoring",
    "trace_delta_context",
    "trace_table_ii",
    "trace_table_iii",
    "trace_table_iv",
    "trace_table_v",
    "trace_tutor_scorer",
]

from .report_ll import (
    report_cluster_f1,
    report_ll_controls,
    report_ll_discrimination,
    report_ll_factors,
    report_ll_overall,
    report_ll_register,
    report_ll_scorer,
)

__all__ += [
    "report_cluster_f1",
    "report_ll_controls",
    "report_ll_discrimination",
    "report_ll_factors",
    "report_ll_overall",
    "report_ll_register",
    "report_ll_scorer",
]

# Importing the module registers ClusterContrastHook with Inspect.
from .cluster_contrast import ClusterContrastHook, annotate_log, cluster_runs, contrast_options

__all__ += ["ClusterContrastHook", "annotate_log", "cluster_runs", "contrast_options"]

# Importing the module registers HeadlineHook with Inspect.
from .headline import HeadlineHook

__all__ += ["HeadlineHook"]
