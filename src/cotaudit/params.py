"""Validation of task parameters (``-T``), run before any model call; errors name the parameter."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ValidationError, ValidationInfo

from cotaudit.display.text import visible


class InputError(ValueError):
    """A mistake in what the user gave a task: a ``-T`` value, or a dataset or fixture file it
    names. The message is one line naming the parameter, file or row (``inspect eval`` prints it
    alone, without a traceback: :mod:`cotaudit.prerequisite`)."""


class ParameterError(InputError):
    """An invalid ``-T`` value or name; the message names the parameter and what it accepts."""


def read_utf8(path: str | Path, error: type[InputError] = InputError) -> str:
    """The text of the file at ``path`` (a dataset, fixtures or pairs file); when it is not
    UTF-8, ``error`` naming the file, the first byte that does not decode, its offset (from 0)
    and its line."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise error(
            visible(
                f"{path}: not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start} "
                f"(line {line}) {e.reason}; save the file as UTF-8"
            )
        ) from None


SettingsT = TypeVar("SettingsT", bound="TaskSettings")


class TaskSettings(BaseModel):
    """Base of a task's parameters as one pydantic model: each check is a validator raising a
    :class:`ParameterError` that names its ``-T`` parameter, and :meth:`of` raises that error
    itself (not pydantic's ``ValidationError`` around it), so ``inspect eval`` prints one
    line."""

    @classmethod
    def of(cls: type[SettingsT], **values: Any) -> SettingsT:
        """The settings of the task arguments ``values``, each passed by its ``-T`` name; the
        first failing check (in the order of the fields) raises its :class:`InputError`; a
        value of the wrong type raises ``ParameterError("-T <name>: <what it must be>, got
        <value>")`` (:func:`validation_line`)."""
        try:
            return cls.model_validate(values)
        except ValidationError as e:
            for err in e.errors(include_url=False):
                cause = (err.get("ctx") or {}).get("error")
                if isinstance(cause, InputError):
                    raise cause from None
            raise ParameterError(validation_line(e, prefix="-T ")) from None


ERROR_CHARS = 200
"""Most characters of an error's text quoted in a one-line message (:func:`error_line`)."""


def validation_line(error: ValidationError, prefix: str = "") -> str:
    """A pydantic ``ValidationError`` in one line, without pydantic's header or documentation
    URL: its first error as ``<prefix><field>: <what it must be>, got <value>`` (the value's
    repr cut to :data:`ERROR_CHARS` characters; no field for a check of the whole model),
    ``; and n more`` when there are others. A check that raised (a ``ValueError`` in a
    validator) gives its own message."""
    errors = error.errors(include_url=False)
    first = errors[0]
    where = "".join(f"{part}: " for part in [".".join(str(p) for p in first["loc"])] if part)
    cause = (first.get("ctx") or {}).get("error")
    what = str(cause) if cause is not None else str(first["msg"])
    got = "" if cause is not None else f", got {repr(first['input'])[:ERROR_CHARS]}"
    more = f"; and {len(errors) - 1} more" if len(errors) > 1 else ""
    return visible(f"{prefix}{where}{what}{got}{more}")


def error_line(error: BaseException) -> str:
    """Any error as one line in a message: :func:`validation_line` for pydantic's, else its
    type and the first line of its text (cut to :data:`ERROR_CHARS` characters), control
    characters :func:`~cotaudit.display.text.visible`."""
    if isinstance(error, ValidationError):
        return f"{error.title} not valid: {validation_line(error)}"
    lines = str(error).strip().splitlines()
    text = lines[0][:ERROR_CHARS] if lines else ""
    return visible(f"{type(error).__name__}: {text}" if text else type(error).__name__)


NAME_CUTOFF = 0.6
"""Least similarity (:class:`difflib.SequenceMatcher` ratio, 2 * matching characters / total
characters) of a suggested parameter name to the name given: ``strid`` -> ``stride`` is
2 * 5 / 11 = 0.91."""


def nearest_name(name: str, known: Sequence[str]) -> str | None:
    """The known name most similar to ``name`` (ratio at least :data:`NAME_CUTOFF`), else None."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=NAME_CUTOFF)
    return close[0] if close else None


def unknown_parameters_message(task: str, unknown: Sequence[str], known: Sequence[str]) -> str:
    """The one-line error for ``-T`` names that ``task`` does not take: the names, the nearest
    known name of each that has one (:func:`nearest_name`), then all the task's parameters."""
    given = ", ".join(f"-T {name}" for name in unknown)
    nearest = {name: nearest_name(name, known) for name in unknown}
    if len(unknown) == 1:
        hints = [f"-T {n}" for n in nearest.values() if n]
    else:
        hints = [f"-T {n} for -T {name}" for name, n in nearest.items() if n]
    hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
    noun = "a parameter" if len(unknown) == 1 else "parameters"
    return f"{given}: not {noun} of task {task}{hint}; its parameters: {', '.join(known)}"


def as_list(value: str | Sequence[object] | None) -> list[str]:
    """Items of "a,b" or a list, stripped; [] for None (a YAML null ``-T x=``); a single
    number or other scalar (``-T thetas=0.8`` arrives as the float 0.8) is one item."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, Sequence):
        return [str(value).strip()]
    return [str(v).strip() for v in value]


def parse_choices(
    name: str, value: str | Sequence[str], known: Sequence[str], noun: str
) -> list[str]:
    """A non-empty list of ``known`` names, each once in the order given, from "a,b" or a
    list; the error calls them ``<noun>(s)`` and lists the known ones."""
    items = as_list(value)
    unknown = [v for v in items if v not in known]
    if unknown or not items:
        raise ParameterError(
            f"-T {name}: unknown {noun}(s) {unknown or items}; choose from {list(known)}"
        )
    return list(dict.fromkeys(items))


def parse_conditions(name: str, value: str | Sequence[str], known: Sequence[str]) -> list[str]:
    """A non-empty list of known condition names, from "a,b" or a list."""
    return parse_choices(name, value, known, "condition")


def conditions_of(known: Sequence[str]) -> BeforeValidator:
    """A pydantic before-validator reading a ``-T`` conditions field: :func:`parse_conditions`
    of the value given, naming the field, against the ``known`` conditions."""

    def run(value: Any, info: ValidationInfo) -> list[str]:
        return parse_conditions(str(info.field_name), value, known)

    return BeforeValidator(run)


def parse_thetas(name: str, value: str | Sequence[float]) -> tuple[float, ...]:
    """Thresholds in [0, 1], from "0.5,0.8" or a list."""
    try:
        thetas = tuple(float(v) for v in as_list(value))
    except ValueError as e:
        raise ParameterError(f"-T {name}: expected numbers in [0, 1], got {value!r}") from e
    bad = [t for t in thetas if not 0.0 <= t <= 1.0]
    if bad or not thetas:
        raise ParameterError(f"-T {name}: thresholds must lie in [0, 1], got {bad or value!r}")
    return thetas


def require_positive(name: str, value: int) -> None:
    """Reject non-integers and values <= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ParameterError(f"-T {name}: must be a positive integer, got {value!r}")


def require_range(name: str, value: float, lo: float | None, hi: float | None) -> None:
    """Reject a number outside [lo, hi] (None = unbounded)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"-T {name}: must be a finite number, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"lie in [{lo}, {hi}]" if lo is not None and hi is not None else ""
        bounds = bounds or (f"be >= {lo}" if lo is not None else f"be <= {hi}")
        raise ParameterError(f"-T {name}: must {bounds}, got {value!r}")


def require_one_of(name: str, value: Any, allowed: Sequence[str]) -> Any:
    """``value`` when it is one of ``allowed``; else the one-line error naming them."""
    if value not in allowed:
        raise ParameterError(f"-T {name}: must be one of {', '.join(allowed)}, got {value!r}")
    return value


def require_int(name: str, value: int) -> None:
    """Reject anything but an integer (bools included)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"-T {name}: must be an integer, got {value!r}")


def require_bool(name: str, value: bool) -> None:
    """Reject anything but true or false (no number, no text)."""
    if not isinstance(value, bool):
        raise ParameterError(f"-T {name}: must be true or false, got {value!r}")


def require_text(name: str, value: str) -> None:
    """Reject a non-string or blank text."""
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"-T {name}: must be non-empty text, got {value!r}")


def checked(check: Callable[[str, Any], object], none_passes: bool = False) -> BeforeValidator:
    """A pydantic before-validator running ``check(<field name>, value)`` on the value given,
    which passes on unchanged; the check's :class:`ParameterError` is what
    :meth:`TaskSettings.of` raises. With ``none_passes``, None is not checked (an optional
    parameter left to its default, or one whose type refuses None in pydantic's words)."""

    def run(value: Any, info: ValidationInfo) -> Any:
        if value is not None or not none_passes:
            check(str(info.field_name), value)
        return value

    return BeforeValidator(run)


def one_of(allowed: Sequence[str]) -> BeforeValidator:
    """A pydantic before-validator refusing a value not in ``allowed``
    (:func:`require_one_of`, naming the field)."""
    return checked(lambda name, value: require_one_of(name, value, allowed))


def parsed(parse: Callable[[Any], Any]) -> BeforeValidator:
    """A pydantic before-validator replacing the value given by ``parse(value)``; a
    ``ValueError`` it raises (its message one line naming the ``-T`` parameter) becomes a
    :class:`ParameterError`."""

    def run(value: Any) -> Any:
        try:
            return parse(value)
        except ValueError as e:
            raise ParameterError(str(e)) from e

    return BeforeValidator(run)


def require_temperature(name: str, value: float) -> None:
    """A sampling temperature: a finite number >= 0 (0: greedy)."""
    require_range(name, value, 0.0, None)


PositiveCount = Annotated[int, checked(require_positive)]
"""A ``-T`` count that must be a positive integer (not a bool, not a float)."""
OptionalPositiveCount = Annotated[int | None, checked(require_positive, none_passes=True)]
""":data:`PositiveCount`, or None for the default."""
Temperature = Annotated[float, checked(require_temperature)]
"""A ``-T`` sampling temperature (:func:`require_temperature`)."""
OptionalTemperature = Annotated[float | None, checked(require_temperature, none_passes=True)]
""":data:`Temperature`, or None for the default."""
Seed = Annotated[int, checked(require_int)]
"""A ``-T`` seed: an integer (not a bool, not a float)."""
Flag = Annotated[bool, checked(require_bool)]
"""A ``-T`` switch: true or false (:func:`require_bool`)."""


def _field_thetas(value: Any, info: ValidationInfo) -> tuple[float, ...]:
    """:func:`parse_thetas` of the value given, naming its field."""
    return parse_thetas(str(info.field_name), value)


Thetas = Annotated[tuple[float, ...], BeforeValidator(_field_thetas)]
"""``-T`` thresholds in [0, 1] from "0.5,0.8" or a list (:func:`parse_thetas`)."""


def parse_contrast_model(value: str | None) -> str | None:
    """``-T contrast_model``: None (or ``"none"``) for no contrast model, else an Inspect model
    name of the form ``provider/model``."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    if not isinstance(value, str) or "/" not in value.strip("/ ") or value != value.strip():
        raise ParameterError(
            f"-T contrast_model: must be an Inspect model name like 'openai/gpt-4o' or "
            f"'hf-probe/default', got {value!r}"
        )
    return value


ContrastModel = Annotated[str | None, BeforeValidator(parse_contrast_model)]
"""``-T contrast_model``, read by :func:`parse_contrast_model`."""
