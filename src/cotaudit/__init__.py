"""cotaudit: audits of what a language model's written reasoning or report really carries.

Pure logic (answers, curves, statistics, fixtures) lives here with no Inspect imports; the
probe engine is in ``cotaudit.engine``, Inspect providers in ``cotaudit.providers``, solvers
and scorers in ``cotaudit.solvers`` and ``cotaudit.scorers``.
"""

__version__ = "0.1.0"
