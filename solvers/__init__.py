"""Inspect solvers of the cotaudit studies (installed as ``cotaudit.solvers``)."""

from .engine import probe_engine
from .selfcommit import selfcommit_probe

__all__ = ["probe_engine", "selfcommit_probe"]
