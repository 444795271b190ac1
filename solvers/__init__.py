"""Inspect solvers of the cotaudit studies (installed as ``cotaudit.solvers``)."""

from .engine import probe_engine
from .selfcommit import selfcommit_probe

__all__ = ["probe_engine", "selfcommit_probe"]

from .trace_tutor import trace_tutor_probe

__all__ += ["trace_tutor_probe"]

from .report_ll import report_ll_scorings

__all__ += ["report_ll_scorings"]
