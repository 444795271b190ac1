"""The truncate-and-force-answer probe core, shared by every probe (pure: no Inspect imports).

- :mod:`~cotaudit.probing.forms`: answer forms (the registry FORMS), their default
  forced-answer tags and canonical answers;
- :mod:`~cotaudit.probing.think`: think blocks (the trace to cut, the closer before the tag,
  the final answer after the block);
- :mod:`~cotaudit.probing.positions`: cut positions (token stride or prefix fractions);
- :mod:`~cotaudit.probing.sweep`: the sweep itself (prompt ++ trace[:t] ++ tag -> k answers);
- :mod:`~cotaudit.probing.record`: the typed record the solver writes and the scorer reads;
- :mod:`~cotaudit.probing.summaries`: TRACE and self-commitment summaries of a curve;
- :mod:`~cotaudit.probing.trajectory`: a recorded transcript as a trace (prompt, steps rendered
  as one continuation, their ends, the submission); :mod:`~cotaudit.probing.log_settings`: the
  recorded-log probe's parameters.

The Inspect wrapper is ``cotaudit.probe(task, probe="trace" | "selfcommit", ...)``
(``tasks/probe.py``), with its solver in ``cotaudit.solvers.probe`` and scorer in
``cotaudit.scorers.probe``; over a recorded log it is ``cotaudit.probe_log(log, ...)``
(``tasks/probe_log.py``).
"""

from cotaudit.probing.forms import FORMS, AnswerForm, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeRecord
from cotaudit.probing.sweep import force_answers
from cotaudit.probing.think import TraceSplit, split_trace

__all__ = [
    "FORMS",
    "AnswerForm",
    "ContextAnswers",
    "ProbeRecord",
    "Schedule",
    "TraceSplit",
    "force_answers",
    "get_form",
    "split_trace",
]
