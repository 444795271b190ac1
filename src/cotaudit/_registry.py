"""What the ``inspect_ai`` entry point loads: the model providers, then every task, so that
``inspect eval cotaudit/<task>`` works after ``pip install`` (no clone needed).

Providers come first: a task module that fails to import (a warning from Inspect) does not
take the providers with it.
"""

import cotaudit.providers  # noqa: F401  (hf-probe/, mlx/, mlx-server/)
from cotaudit.tasks.probe import probe
from cotaudit.tasks.probe_examples import capitals, gsm8k_mc, gsm8k_numeric
from cotaudit.tasks.probe_log import probe_log
from cotaudit.tasks.report_ll import report_ll
from cotaudit.tasks.report_ll_recorded import report_ll_recorded
from cotaudit.tasks.resample import resample
from cotaudit.tasks.selfcommit import selfcommit
from cotaudit.tasks.trace_tutor import trace_tutor

__all__ = [
    "capitals",
    "gsm8k_mc",
    "gsm8k_numeric",
    "probe",
    "probe_log",
    "report_ll",
    "report_ll_recorded",
    "resample",
    "selfcommit",
    "trace_tutor",
]
