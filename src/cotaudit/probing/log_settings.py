"""The recorded-log probe's parameters, checked once: :class:`ProbeLogSettings`, shared by
``cotaudit.probe_log(...)`` and the ``probe_log`` task of ``tasks/probe_log.py``.

They are the generic probe's (:class:`cotaudit.probing.settings.ProbeSettings`; ``task_args``
apart: there is no task to create) plus the log, the samples, the scorer and where to cut
(``cuts``). Each check raises a :class:`cotaudit.params.ParameterError` naming its ``-T``
parameter, before the log is read or a model loads.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from cotaudit.params import ParameterError
from cotaudit.probing.settings import ProbeSettings, yaml_mapping
from cotaudit.probing.trajectory import parse_sample_ids

LogCuts = Literal["steps", "tokens", "fractions", "sentences"]
NOT_FOR_LOGS: tuple[str, ...] = ("task_args",)
"""Generic probe parameters a recorded log has no use for (no task is created)."""


class ProbeLogSettings(ProbeSettings):
    """The recorded-log probe's parameters.

    Fields (beside :class:`~cotaudit.probing.settings.ProbeSettings`'):
      log: The ``.eval`` (or ``.json``) log whose samples are probed; an existing file.
      samples: Ids of the log's samples to probe (``"a,b"`` or a list; default: all).
      scorer: A registered scorer's name (``match``, ``includes``, ``choice``, a task file's
        ``@scorer``) verifying the forced answers instead of the one the log records.
      scorer_args: Its arguments (a mapping or YAML text, e.g. ``'{numeric: true}'``).
      cuts: Where to cut: ``tokens`` (every ``stride`` tokens), ``fractions`` (of the trace's
        tokens), ``sentences`` (at sentence ends, at most ``max_cuts``) or ``steps`` (after each
        step of a trajectory: assistant turn, tool call, tool result); default: the probe's own
        schedule (``fractions`` for trace, ``tokens`` for selfcommit).
    """

    log: str
    samples: list[str] | None = None
    scorer: str | None = None
    scorer_args: Annotated[dict[str, Any], yaml_mapping("{numeric: true}")] = Field(
        default=None, validate_default=True
    )
    cuts: LogCuts | None = None  # type: ignore[assignment]  # the generic cuts and steps

    @classmethod
    def signature(
        cls, first: Sequence[inspect.Parameter] = (), last: Sequence[inspect.Parameter] = ()
    ) -> inspect.Signature:
        """:meth:`ProbeSettings.signature` without :data:`NOT_FOR_LOGS`, ``log`` first."""
        full = super().signature(first, last)
        params = [p for p in full.parameters.values() if p.name not in NOT_FOR_LOGS]
        log = next(p for p in params if p.name == "log")
        log = log.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD, default=inspect._empty)
        rest = [p for p in params if p.name != "log"]
        return inspect.Signature([*first, log, *rest])

    @field_validator("log", mode="before")
    @classmethod
    def _log(cls, value: Any) -> Any:
        if not isinstance(value, str | Path) or not str(value).strip():
            raise ParameterError(f"-T log: expected the path of an Inspect log, got {value!r}")
        path = Path(str(value)).expanduser()
        if not path.is_file():
            raise ParameterError(f"-T log={value}: no such log file")
        return str(path)

    @field_validator("samples", mode="before")
    @classmethod
    def _samples(cls, value: Any) -> Any:
        return parse_sample_ids(value)

    @model_validator(mode="after")
    def _log_only(self) -> ProbeLogSettings:
        if self.task_args:
            raise ParameterError("-T task_args: a recorded log has no task to create")
        if self.scorer_args and self.scorer is None:
            raise ParameterError("-T scorer_args: needs -T scorer naming the scorer they are for")
        return self


def probe_log_settings(log: str, **params: Any) -> ProbeLogSettings:
    """:meth:`ProbeLogSettings.of` of keyword arguments (``log`` first, as the functions take
    it)."""
    return ProbeLogSettings.of(log=log, **params)


__all__ = ["LogCuts", "ProbeLogSettings", "probe_log_settings"]
