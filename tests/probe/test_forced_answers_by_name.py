"""Each task's forced answers read k and their temperature from the parameter that names them:
selfcommit's ``k`` and ``temperature``, trace_tutor's ``probe_samples`` and ``temperature``,
resample's ``k`` and ``forced_temperature`` (its ``temperature`` is the continuations')."""

import inspect

from cotaudit.studies.resample_settings import ResampleSettings
from cotaudit.studies.trace_tutor.settings import TraceTutorSettings
from cotaudit.tasks.resample import resample
from cotaudit.tasks.trace_tutor import trace_tutor


def _defaults(task: object) -> dict[str, object]:
    parameters = inspect.signature(inspect.unwrap(task)).parameters  # type: ignore[arg-type]
    return {name: p.default for name, p in parameters.items() if name != "paper"}


def test_resample_forces_answers_at_forced_temperature_not_the_continuations():
    values = _defaults(resample) | {"k": 3, "temperature": 0.9, "forced_temperature": 0.2}
    forced = ResampleSettings.of(**values).forced_answers()
    assert (forced.k, forced.temperature) == (3, 0.2)


def test_trace_tutor_forces_probe_samples_answers():
    values = _defaults(trace_tutor) | {"probe_samples": 4, "temperature": 0.6}
    forced = TraceTutorSettings.of(**values).forced_answers()
    assert (forced.k, forced.temperature) == (4, 0.6)
