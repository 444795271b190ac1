"""Inspect solvers of the cotaudit studies (installed as ``cotaudit.solvers``)."""

from .engine import probe_engine
from .report_ll import report_ll_scorings
from .selfcommit import selfcommit_probe
from .trace_tutor import trace_tutor_probe

__all__ = ["probe_engine", "report_ll_scorings", "selfcommit_probe", "trace_tutor_probe"]
