"""Inspect scorers of the cotaudit studies (installed as ``cotaudit.scorers``), and the hooks.

Each study's run metrics are generated from its metric table
(``cotaudit.studies.<study>.metrics.METRICS``) in the study's scorer module; import them from
there. The cluster contrast and headline hooks are registered with Inspect when a cotaudit
task is created (:mod:`cotaudit.scorers.hooks`).
"""

from .cluster_contrast import ClusterContrastHook, annotate_log, cluster_runs, contrast_options
from .headline import HeadlineHook
from .hooks import register_hooks
from .report_ll import report_ll_scorer
from .selfcommit import selfcommit_scorer
from .trace_tutor import records_from_log, trace_tutor_scorer

__all__ = [
    "ClusterContrastHook",
    "HeadlineHook",
    "annotate_log",
    "cluster_runs",
    "contrast_options",
    "records_from_log",
    "register_hooks",
    "report_ll_scorer",
    "selfcommit_scorer",
    "trace_tutor_scorer",
]
