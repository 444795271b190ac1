"""A study's published configuration: the values its text fixes, each with the study's words.

``-T paper=true`` on a study task sets every knob the study's text fixes to the published value
(prompts and tags verbatim where the study quotes them, fractions, temperatures, token limits,
k, the dataset slice): the paper's configuration is the base, and each parameter given on the
command line overlays it (even when the value given is the task's default) and, where it
differs from the paper's value, is recorded as an override; so ``-T paper=true -T problems=5``
runs the paper's configuration on five problems. "Given" is what the caller passed
(:func:`cotaudit.prerequisite.given_arguments`). Every parameter's value that ran, the
overrides and each setting's quote go into the log (``eval.metadata.paper_configuration``;
:func:`parameters_used` reads them back).

Each study declares one :class:`PaperConfiguration` in ``cotaudit.studies.<study>.paper``;
``tests/test_paper.py`` checks that every quote appears verbatim in the study's text and that
the value it fixes is written in it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from cotaudit.params import ParameterError

PAPER_PARAMETER = "paper"


@dataclass(frozen=True)
class PaperSetting:
    """One knob the study fixes.

    ``quote`` is the study's own sentence (verbatim, whitespace aside) that fixes ``value``;
    ``evidence`` is the part of the quote that states the value, when the value's own text
    (``f"{value:g}"`` for a number, ``str(value)`` otherwise) does not appear in it (e.g. the
    value ``"</think>"`` stated as "appends </think>").
    """

    value: Any
    quote: str
    evidence: str | None = None

    def stated_as(self) -> str:
        """The text in ``quote`` that states the value."""
        if self.evidence is not None:
            return self.evidence
        if isinstance(self.value, float):
            return f"{self.value:g}"
        return str(self.value)


@dataclass(frozen=True)
class PaperValue:
    """A published number of the study, shown beside the run's value in ``cotaudit report``."""

    value: float | str
    where: str  # e.g. "Table I", "Sec. IV-B"


@dataclass(frozen=True)
class PaperConfiguration:
    """A study's published configuration.

    Attributes:
      study: The study's task name.
      source: The study's title.
      seed: The study text's file name in the project's shared seeds folder
        (``../shared/seeds/``), which the quote test reads.
      model: The model the study's numbers come from (a run on another model is not expected to
        reproduce them; the report says so).
      settings: Task parameter -> the study's value and quote.
      notes: Parts of the study's configuration no parameter sets (the model, the hardware),
        or settings chosen where the study is silent, in words.
      published: Metric name -> the study's published number, for the report's comparison.
    """

    study: str
    source: str
    seed: str
    model: str
    settings: Mapping[str, PaperSetting]
    notes: tuple[str, ...] = ()
    published: Mapping[str, PaperValue] = field(default_factory=dict)

    def configure(
        self, paper: Any, arguments: Mapping[str, Any], given: Collection[str]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``-T paper`` on the task's ``arguments`` (every parameter but ``paper``; ``given``
        the names given): with ``paper`` false, the arguments as they are and no record; with
        ``paper`` true, the parameters :meth:`apply` resolves and their :meth:`log_record`.
        Anything but a bool raises the one-line ParameterError."""
        if not isinstance(paper, bool):
            raise ParameterError(f"-T {PAPER_PARAMETER}: must be true or false, got {paper!r}")
        if not paper:
            return dict(arguments), None
        resolved, overrides = self.apply(arguments, given)
        return resolved, self.log_record(resolved, overrides)

    def apply(
        self, arguments: Mapping[str, Any], given: Collection[str]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The task's parameters with the paper's values as the base that the given ones
        overlay, and the overrides.

        ``arguments`` holds every parameter's value (the given ones and the defaults),
        ``given`` the names given on the command line (or in the Python call).
        ``resolved[p] = arguments[p]`` where ``p`` is given, else the paper's value where the
        paper fixes ``p``, else ``arguments[p]`` (the task's default). Returns ``(resolved,
        overrides)`` with ``overrides = {p: arguments[p]}`` for every paper-fixed ``p`` given
        a value other than the paper's (a given value equal to the task's default included).
        """
        unknown = sorted(set(self.settings) - set(arguments))
        if unknown:
            raise KeyError(f"{self.study}: paper settings name no task parameter: {unknown}")
        resolved = dict(arguments)
        overrides: dict[str, Any] = {}
        for name, setting in self.settings.items():
            if name not in given:
                resolved[name] = setting.value
            elif arguments[name] != setting.value:
                overrides[name] = arguments[name]
        return resolved, overrides

    def log_record(
        self, resolved: Mapping[str, Any], overrides: Mapping[str, Any]
    ) -> dict[str, Any]:
        """What the log records of the configuration (``eval.metadata.paper_configuration``):
        the study, its settings with their quotes, the ``overrides`` kept, the notes, and
        ``parameters``: every task parameter's value the run used (``resolved`` of
        :meth:`apply`; Inspect's ``eval.task_args`` lists the task function's defaults for the
        parameters not given, which ``paper=true`` replaced)."""
        return {
            "study": self.study,
            "source": self.source,
            "model": self.model,
            "settings": {
                name: {"value": s.value, "quote": s.quote} for name, s in self.settings.items()
            },
            "overrides": dict(overrides),
            "parameters": dict(resolved),
            "notes": list(self.notes),
        }


def parameters_used(task_args: Mapping[str, Any], task_metadata: Mapping[str, Any]) -> dict:
    """The parameters a logged run used: its ``paper_configuration.parameters`` when it ran
    with ``paper=true``; in a log that records no ``parameters``, its task arguments with the
    paper's values and then the recorded overrides in place; else its task arguments
    (``eval.task_args``)."""
    record = task_metadata.get("paper_configuration") or {}
    if "parameters" in record:
        return dict(record["parameters"])
    used = dict(task_args)
    used |= {name: s["value"] for name, s in (record.get("settings") or {}).items()}
    return used | dict(record.get("overrides") or {})
