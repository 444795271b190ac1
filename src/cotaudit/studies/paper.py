"""A study's published configuration: the values its text fixes, each with the study's words.

``-T paper=true`` on a study task sets every knob the study's text fixes to the published value
(prompts and tags verbatim where the study quotes them, fractions, temperatures, token limits,
k, the dataset slice). A parameter given a value other than its default on the command line
stays as given and is recorded as an override, so ``-T paper=true -T problems=5`` runs the
paper's configuration on five problems. The resolved values, the overrides and each setting's
quote go into the log (``eval.metadata.paper_configuration``).

Each study declares one :class:`PaperConfiguration` in ``cotaudit.studies.<study>.paper``;
``tests/test_paper.py`` checks that every quote appears verbatim in the study's text and that
the value it fixes is written in it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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

    def apply(
        self, given: Mapping[str, Any], defaults: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The task's parameters with the paper's values, and the overrides kept.

        ``resolved[p] = given[p]`` where ``given[p] != defaults[p]`` (set on the command line:
        an override), else the paper's value where the paper fixes ``p``, else ``given[p]``.
        Returns ``(resolved, overrides)`` with ``overrides = {p: given value}`` for every
        paper-fixed parameter the user set to something else.
        """
        unknown = sorted(set(self.settings) - set(defaults))
        if unknown:
            raise KeyError(f"{self.study}: paper settings name no task parameter: {unknown}")
        resolved = dict(given)
        overrides: dict[str, Any] = {}
        for name, setting in self.settings.items():
            if given.get(name) != defaults[name]:
                if given.get(name) != setting.value:
                    overrides[name] = given.get(name)
                continue
            resolved[name] = setting.value
        return resolved, overrides

    def log_record(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """What the log records of the configuration (``eval.metadata.paper_configuration``)."""
        return {
            "study": self.study,
            "source": self.source,
            "model": self.model,
            "settings": {
                name: {"value": s.value, "quote": s.quote} for name, s in self.settings.items()
            },
            "overrides": dict(overrides),
            "notes": list(self.notes),
        }


def parameter_defaults(task_function: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter of a task function and its default (the ``@task`` wrapper is followed)."""
    return {
        name: p.default
        for name, p in inspect.signature(task_function).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
