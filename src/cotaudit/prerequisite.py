"""Bad input as Inspect reports it: a :class:`PrerequisiteError`, which ``inspect eval`` prints
as its message alone, without a traceback, and exits with status 1.

:class:`InputErrorReport` is that error with a plain-text message (a model name, ``-T`` value or
file that names nothing: :class:`cotaudit.providers._local.ModelNameError`, and the library's
:class:`cotaudit.params.InputError` raised by a task). :func:`checked_task`, applied to every
cotaudit task under ``@task``, refuses ``-T`` names the task does not take and reports the
task's input errors this way; both happen while Inspect creates the task, before any model
loads (the local providers load weights on first use).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import rich
from inspect_ai import Task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import get_model
from inspect_ai.model._model import active_model
from rich.markup import escape

from cotaudit.display.text import visible
from cotaudit.params import InputError, ParameterError, unknown_parameters_message

logger = logging.getLogger(__name__)

TaskFunction = TypeVar("TaskFunction", bound=Callable[..., Any])


class InputErrorReport(PrerequisiteError):
    """A mistake in the user's input, printed by Inspect as this one message (taken as plain
    text: Inspect prints a PrerequisiteError's message as rich markup; a control character of a
    sample id, file name or value shown, :func:`~cotaudit.display.text.visible`, the message's
    own line breaks kept)."""

    def __init__(self, text: str) -> None:
        text = "\n".join(visible(line) for line in text.split("\n"))
        super().__init__(escape(text))
        self.args = (text,)

    def __str__(self) -> str:
        return str(self.args[0])


_REPORT_CLASSES: dict[type[InputError], type[InputError]] = {}


def _report_class(kind: type[InputError]) -> type[InputError]:
    """``kind`` that is also an :class:`InputErrorReport` (same name, module and docstring;
    pickled as its kind and message)."""
    if kind not in _REPORT_CLASSES:
        _REPORT_CLASSES[kind] = type(
            kind.__name__,
            (InputErrorReport, kind),
            {
                "__module__": kind.__module__,
                "__qualname__": kind.__qualname__,
                "__doc__": kind.__doc__,
                "__reduce__": lambda self: (_report, (kind, str(self))),
            },
        )
    return _REPORT_CLASSES[kind]


def _report(kind: type[InputError], text: str) -> InputError:
    return _report_class(kind)(text)


def as_report(error: InputError) -> InputError:
    """``error`` as an instance of its own class and of :class:`InputErrorReport` (``except
    ParameterError`` still catches it), with the same message and traceback."""
    if isinstance(error, InputErrorReport):
        return error
    report = _report(type(error), str(error))
    report.__cause__ = error.__cause__
    return report.with_traceback(error.__traceback__)


_creating_task: contextvars.ContextVar[bool] = contextvars.ContextVar("cotaudit_creating_task")
"""Set while a checked task is being created (a task may create another: the probe)."""

_given: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("cotaudit_given")
"""The parameter names the caller passed to the checked task now being created."""


def given_arguments() -> frozenset[str]:
    """The names of the parameters given to the checked task now being created: each ``-T``
    name (Inspect passes a task only those, and ``eval-retry`` the log's
    ``eval.task_args_passed``), or each argument of a Python call, not those left at their
    default. Read inside a task function under :func:`checked_task`; elsewhere a
    ``LookupError``."""
    return _given.get()


_PARAMETERS_BY_MODULE: dict[str, set[str]] = {}
"""The parameter names of the checked tasks of each module (``inspect eval FILE -T ...`` passes
the same ``-T`` values to every task in FILE)."""


DEFAULT_EVAL_MODEL = "hf-probe/default"
"""The model a cotaudit task runs on when neither ``--model`` nor ``INSPECT_EVAL_MODEL`` names
one: the embedded default model (``inspect eval tasks/selfcommit.py`` works on a fresh clone)."""


def with_default_model(task: Any) -> Any:
    """``task`` with :data:`DEFAULT_EVAL_MODEL` as its model when the eval has none (Inspect's
    ``none`` model, what it resolves when no model is named, is the active model while it
    creates the task); a model named any way wins, and ``--model a,b`` still runs each model (a
    task's own ``model`` would override them). A task created outside an eval is left as is."""
    current = active_model()
    if isinstance(task, Task) and task.model is None and str(current) == "none/none":
        task.model = get_model(DEFAULT_EVAL_MODEL)
    return task


_ON_TASK_CREATED: list[Callable[[], None]] = []


def on_task_created(callback: Callable[[], None]) -> None:
    """Call ``callback`` each time a checked task is created (once registered; registering it
    again changes nothing). The glue registers cotaudit's Inspect hooks this way, so they exist
    only in a process that creates a cotaudit task: installing cotaudit leaves every other
    ``inspect`` command as it was (Inspect lists every registered hook when a model starts)."""
    if callback not in _ON_TASK_CREATED:
        _ON_TASK_CREATED.append(callback)


def task_created() -> None:
    """Call the :func:`on_task_created` callbacks: a cotaudit task was created, or a task of the
    user's that opts in to one of cotaudit's hooks (its task metadata carries the opt-in)."""
    for callback in _ON_TASK_CREATED:
        callback()


def checked_task(task_function: TaskFunction) -> TaskFunction:
    """``task_function`` that refuses ``-T`` names it does not take and reports its input errors.

    Inspect passes a task only the ``-T`` names its signature lists (warning about the others
    and running with the defaults) unless the signature takes ``**kwargs``; so the checked
    function advertises ``**unknown`` and, called with a name that neither it nor another
    checked task of its module takes, raises :class:`~cotaudit.params.ParameterError` naming
    the task's parameters and the nearest one (:func:`~cotaudit.params.nearest_name`). A name
    only a sibling task of the module takes is dropped with Inspect's warning. An
    :class:`~cotaudit.params.InputError` the task raises is re-raised as :func:`as_report`.
    Under ``--display none`` Inspect prints no PrerequisiteError (its console is quiet), so
    the outermost checked task writes the message to stderr itself before raising (with
    ``--json``, which Inspect also runs quiet but prints the message for, it shows twice).
    Python callers pass keyword arguments as before; an unknown one raises the same
    ParameterError (instead of a TypeError). While the task function runs,
    :func:`given_arguments` names the parameters its caller gave. A task created calls the
    :func:`on_task_created` callbacks.
    """
    signature = inspect.signature(task_function)
    names = [
        name
        for name, p in signature.parameters.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    siblings = _PARAMETERS_BY_MODULE.setdefault(task_function.__module__, set())
    siblings.update(names)
    task_name = task_function.__name__

    @functools.wraps(task_function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        token = _creating_task.set(True)
        try:
            unknown = [name for name in kwargs if name not in names]
            refused = [name for name in unknown if name not in siblings]
            if refused:
                message = unknown_parameters_message(task_name, refused, names)
                raise as_report(ParameterError(message))
            for name in unknown:
                logger.warning(f"param '{name}' not used by task '{task_name}'")
                del kwargs[name]
            given = _given.set(frozenset(signature.bind_partial(*args, **kwargs).arguments))
            try:
                task = task_function(*args, **kwargs)
            except InputError as e:
                raise as_report(e) from e.__cause__
            finally:
                _given.reset(given)
            task_created()
            return with_default_model(task)
        except InputErrorReport as e:
            outermost = token.old_value is contextvars.Token.MISSING
            if outermost and rich.get_console().quiet:
                print(f"\n{e}\n", file=sys.stderr, flush=True)
            raise
        finally:
            _creating_task.reset(token)

    unknown_names = inspect.Parameter("unknown", inspect.Parameter.VAR_KEYWORD)
    checked.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), unknown_names]
    )
    return checked  # type: ignore[return-value]
